// The fake terraform: each behaviour and fault in the table at the top of fake-terraform.mjs.
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { killProcessGroup } from './exec.ts';
import {
  FAKE_TERRAFORM,
  fakeTerraformEnv,
  installFakeTerraform,
  isProcessRunning,
  processEnds,
  readFakeTerraformLog,
  stepsRun,
  tempDir,
  testTerraformEnv,
  type FakeTerraformOptions,
} from './tf-modules.ts';

const MiB = 1024 * 1024;

/** A work dir and a log for one test; `run` starts the fake there (never throws on a non-zero exit). */
async function setUp(t: TestContext) {
  const dir = await tempDir(t);
  const log = join(dir, 'fake-terraform.jsonl');
  const start = (args: string[], options: FakeTerraformOptions = {}, extraEnv: Record<string, string> = {}) => {
    const child = execa(FAKE_TERRAFORM, args, {
      cwd: dir,
      env: testTerraformEnv({ ...fakeTerraformEnv({ log, ...options }), ...extraEnv }),
      extendEnv: false,
      reject: false,
      detached: true, // its own process group, like the runner starts terraform
    });
    // A failed assertion must not leave a hanging fake (or what it spawned) behind.
    t.after(() => killProcessGroup(child.pid));
    return child;
  };
  const run = async (args: string[], options: FakeTerraformOptions = {}) => {
    const { exitCode, signal, stdout, stderr } = await start(args, options);
    return { exitCode, signal, stdout, stderr };
  };
  return { dir, log, start, run, events: () => readFakeTerraformLog(log) };
}

/** Resolves once the fake has logged `count` events of the kind (it is ready for a signal). */
async function logged(log: string, event: string, count = 1) {
  for (let waited = 0; waited < 10_000; waited += 20) {
    if ((await readFakeTerraformLog(log)).filter((e) => e.event === event).length >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the fake never logged ${count} ${event} event(s)`);
}

describe('terraform-like behaviour', () => {
  test('version: the configured version, as JSON and text; OpenTofu on request', async (t) => {
    const { run } = await setUp(t);
    assert.equal(JSON.parse((await run(['version', '-json'])).stdout).terraform_version, '1.11.4');
    assert.equal(JSON.parse((await run(['version', '-json'], { version: '1.5.7' })).stdout).terraform_version, '1.5.7');
    assert.match((await run(['-version'])).stdout, /^Terraform v1\.11\.4\n/);
    const tofu = await run(['version'], { faults: ['version:opentofu'] });
    assert.match(tofu.stdout, /^OpenTofu v1\.9\.0\n/);
  });

  test('init records the backend as terraform does: the last override file with one wins', async (t) => {
    const { dir, run } = await setUp(t);
    await writeFile(join(dir, 'backend.tf'), 'terraform {\n  backend "pg" {}\n}\n');
    assert.equal((await run(['init'])).exitCode, 0);
    const record = () => JSON.parse(readFileSync(join(dir, '.terraform', 'terraform.tfstate'), 'utf8')).backend;
    assert.deepEqual(record(), { type: 'pg', config: {}, hash: 0 });
    await writeFile(
      join(dir, 'captf_runner_backend_override.tf'),
      'terraform {\n  backend "local" {\n    path = "/s/terraform.tfstate"\n  }\n}\n',
    );
    assert.equal((await run(['init'])).exitCode, 0);
    assert.deepEqual(record(), {
      type: 'local',
      config: { path: '/s/terraform.tfstate', workspace_dir: null },
      hash: 0,
    });
  });

  test('init, validate, plan, show, apply, output: a full run, logged in order', async (t) => {
    const { dir, run, events } = await setUp(t);
    assert.equal((await run(['init', '-input=false'])).exitCode, 0);
    assert.ok(existsSync(join(dir, '.terraform')));
    assert.equal(JSON.parse((await run(['validate', '-json'])).stdout).valid, true);

    const plan = await run(['plan', '-input=false', '-detailed-exitcode', '-out=plan.tfplan']);
    assert.equal(plan.exitCode, 2);
    const shown = JSON.parse((await run(['show', '-json', 'plan.tfplan'])).stdout);
    assert.deepEqual(
      shown.resource_changes.map((c: { change: { actions: string[] } }) => c.change.actions),
      [['create']],
    );
    assert.equal(shown.format_version, '1.2');

    assert.equal((await run(['apply', '-input=false', 'plan.tfplan'])).exitCode, 0);
    assert.deepEqual(JSON.parse((await run(['output', '-json'])).stdout), {
      cluster_name: { sensitive: false, type: 'string', value: 'fake-cluster' },
    });
    assert.equal(JSON.parse((await run(['state', 'pull'])).stdout).serial, 1);

    assert.deepEqual(stepsRun(await events()), ['init', 'validate', 'plan', 'show', 'apply', 'output', 'state-pull']);
    const exits = (await events()).flatMap((e) => (e.event === 'exit' ? [e.code] : []));
    assert.deepEqual(exits, [0, 0, 2, 0, 0, 0, 0]);
  });

  test('plan: exit 0 with -detailed-exitcode when nothing changes; the plan document comes from a file', async (t) => {
    const { dir, run } = await setUp(t);
    assert.equal((await run(['plan', '-detailed-exitcode'], { planActions: ['no-op'] })).exitCode, 0);
    const replace = await run(['plan', '-detailed-exitcode', '-out', 'p'], { planActions: ['create', 'delete'] });
    assert.equal(replace.exitCode, 2);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'p'), 'utf8')).resource_changes[0].change.actions, [
      'create',
      'delete',
    ]);

    const document = { format_version: '1.2', resource_changes: [], output_changes: {}, marker: 'from-file' };
    await writeFile(join(dir, 'given.json'), JSON.stringify(document));
    assert.equal(
      (await run(['plan', '-detailed-exitcode', '-out=q'], { planJson: join(dir, 'given.json') })).exitCode,
      0,
    );
    assert.deepEqual(JSON.parse((await run(['show', '-json', 'q'])).stdout), document);
  });

  test('state push: serial and lineage rules like terraform, -force skips them, stored serial + 1', async (t) => {
    const { dir, run } = await setUp(t);
    await run(['apply', '-auto-approve']);
    await run(['apply', '-auto-approve']);
    const current = JSON.parse((await run(['state', 'pull'])).stdout);
    assert.equal(current.serial, 2);
    const push = async (state: object, ...flags: string[]) => {
      await writeFile(join(dir, 'push.json'), JSON.stringify(state));
      return run(['state', 'push', ...flags, 'push.json']);
    };
    assert.match((await push({ ...current, serial: 1 })).stderr, /serial 1 over newer state with serial 2/);
    assert.match((await push({ ...current, outputs: {} })).stderr, /same serial/);
    assert.match((await push({ ...current, serial: 9, lineage: 'other' })).stderr, /unrelated state/);
    assert.equal((await push(current)).exitCode, 0);
    assert.equal((await push({ ...current, serial: 7 })).exitCode, 0);
    assert.equal(JSON.parse((await run(['state', 'pull'])).stdout).serial, 8);
    assert.equal((await push({ ...current, serial: 1 }, '-force')).exitCode, 0);
    assert.equal(JSON.parse((await run(['state', 'pull'])).stdout).serial, 2);
  });

  test('-chdir, force-unlock, and what the log records of the environment', async (t) => {
    const { dir, start, events } = await setUp(t);
    const sub = await tempDir(t);
    const init = await start([`-chdir=${sub}`, 'init'], {}, { TF_CLI_ARGS_plan: '-lock=false', TF_VAR_x: '1' });
    assert.equal(init.exitCode, 0);
    assert.ok(existsSync(join(sub, '.terraform')) && !existsSync(join(dir, '.terraform')));
    assert.match((await start(['force-unlock', '-force', 'abc'])).stdout, /successfully unlocked/);

    const [first] = await events();
    assert.ok(first?.event === 'start');
    assert.equal(first.chdir, sub);
    assert.equal(first.env.TF_IN_AUTOMATION, '1');
    assert.equal(first.env.TF_CLI_CONFIG_FILE, '/dev/null');
    assert.deepEqual(first.tfCliArgs, ['TF_CLI_ARGS_plan']);
    assert.deepEqual(first.tfVars, ['TF_VAR_x']);
    assert.equal(first.pgid, first.pid, 'started detached: it leads its own process group');
  });

  test('installFakeTerraform: `terraform` on PATH is the fake', async (t) => {
    const { binDir, terraformPath } = await installFakeTerraform(t);
    const { stdout } = await execa('terraform', ['version', '-json'], {
      env: { ...testTerraformEnv(), PATH: `${binDir}:${process.env.PATH}`, FAKE_TF_VERSION: '9.9.9' },
      extendEnv: false,
    });
    assert.equal(JSON.parse(stdout).terraform_version, '9.9.9');
    assert.equal((await execa(terraformPath, ['version'], { env: testTerraformEnv() })).exitCode, 0);
  });
});

describe('faults', () => {
  const steps: Array<[string, string[]]> = [
    ['version', ['version', '-json']],
    ['init', ['init']],
    ['validate', ['validate', '-json']],
    ['plan', ['plan', '-out=p']],
    ['show', ['show', '-json', 'p']],
    ['apply', ['apply', 'p']],
    ['output', ['output', '-json']],
    ['state-pull', ['state', 'pull']],
    ['state-push', ['state', 'push', 'p']],
    ['force-unlock', ['force-unlock', 'id']],
  ];
  test('exit=N at every step: that code, the step not done, only that step faulted', async (t) => {
    const { dir, run } = await setUp(t);
    for (const [step, args] of steps) {
      const result = await run(args, { faults: [`${step}:exit=42`] });
      assert.equal(result.exitCode, 42, step);
      assert.match(result.stderr, /Error: fake failure in/);
    }
    assert.equal(existsSync(join(dir, 'p')), false, 'the failed plan wrote no plan file');
    assert.equal((await run(['plan', '-out=p'], { faults: ['apply:exit=42'] })).exitCode, 0);
  });

  test('a misconfigured fault fails loudly with 97', async (t) => {
    const { run } = await setUp(t);
    for (const fault of [
      'plan:nonsense',
      'nostep:hang',
      'plan:exit',
      'plan:hang=3',
      'plan:truncate',
      'plan:signal=SIGNOPE',
    ]) {
      const result = await run(['plan'], { faults: [fault] });
      assert.equal(result.exitCode, 97, fault);
      assert.match(result.stderr, /fake-terraform misconfigured/);
    }
  });

  test('show: truncate and invalid-json print what JSON.parse rejects', async (t) => {
    const { run } = await setUp(t);
    await run(['plan', '-out=p']);
    for (const fault of ['show:truncate', 'show:invalid-json']) {
      const shown = await run(['show', '-json', 'p'], { faults: [fault] });
      assert.equal(shown.exitCode, 0);
      assert.ok(shown.stdout.length > 10);
      assert.throws(() => JSON.parse(shown.stdout), SyntaxError, fault);
    }
  });

  test('hang: waits until an interrupt, then exits 1 like terraform', async (t) => {
    const { log, start, events } = await setUp(t);
    const child = start(['apply', '-auto-approve'], { faults: ['apply:hang'] });
    await logged(log, 'start');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(child.exitCode, null, 'still running');
    child.kill('SIGTERM');
    const result = await child;
    assert.equal(result.exitCode, 1);
    assert.match(result.stderr, /Interrupt received/);
    assert.deepEqual(
      (await events()).map((e) => e.event),
      ['start', 'signal', 'exit'],
    );
  });

  test('ignore-first-interrupt: the first SIGINT only stops operations, the second ends it', async (t) => {
    const { log, start, events } = await setUp(t);
    const child = start(['plan'], { faults: ['plan:ignore-first-interrupt'] });
    await logged(log, 'start');
    child.kill('SIGINT');
    await logged(log, 'signal');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(child.exitCode, null, 'survived the first interrupt');
    child.kill('SIGINT');
    const result = await child;
    assert.equal(result.exitCode, 1);
    assert.match(result.stderr, /Stopping operation[\s\S]*Two interrupts received/);
    assert.equal((await events()).filter((e) => e.event === 'signal').length, 2);
  });

  test('ignore-interrupts: only SIGKILL ends it', async (t) => {
    const { log, start } = await setUp(t);
    const child = start(['apply'], { faults: ['apply:ignore-interrupts'] });
    await logged(log, 'start');
    child.kill('SIGINT');
    child.kill('SIGTERM');
    await logged(log, 'signal', 2);
    assert.equal(child.exitCode, null);
    child.kill('SIGKILL');
    assert.equal((await child).signal, 'SIGKILL');
  });

  test('delay=S: done after the delay; interrupted during it, exits 1', async (t) => {
    const { log, run, start } = await setUp(t);
    const began = Date.now();
    assert.equal((await run(['init'], { faults: ['init:delay=0.3'] })).exitCode, 0);
    assert.ok(Date.now() - began >= 300);
    const child = start(['plan'], { faults: ['plan:delay=30', 'plan:ignore-first-interrupt'] });
    await logged(log, 'start', 2);
    child.kill('SIGINT');
    await logged(log, 'signal');
    child.kill('SIGINT');
    assert.equal((await child).exitCode, 1);
  });

  test('signal=NAME: dies by that signal and logs no exit', async (t) => {
    const { run, events } = await setUp(t);
    for (const signal of ['SIGSEGV', 'SIGKILL'] as const) {
      assert.equal((await run(['plan'], { faults: [`plan:signal=${signal}`] })).signal, signal);
    }
    assert.deepEqual(
      (await events()).map((e) => e.event),
      ['start', 'start'],
    );
  });

  test('huge-stdout (default 200 MiB) and huge-stderr stream without holding the output in memory', async (t) => {
    const { dir, log, events } = await setUp(t);
    const child = execa(FAKE_TERRAFORM, ['plan'], {
      cwd: dir,
      env: testTerraformEnv(fakeTerraformEnv({ log, faults: ['plan:huge-stdout', `plan:huge-stderr=${16 * MiB}`] })),
      reject: false,
      buffer: false, // we count the bytes instead of keeping them
    });
    let stdoutBytes = 0;
    let stderrBytes = 0;
    child.stdout!.on('data', (chunk: Buffer) => (stdoutBytes += chunk.length));
    child.stderr!.on('data', (chunk: Buffer) => (stderrBytes += chunk.length));
    // The exit can be reported before the last chunks are read: wait for both ends.
    await Promise.all([once(child.stdout!, 'end'), once(child.stderr!, 'end')]);
    assert.equal((await child).exitCode, 0);
    assert.ok(stdoutBytes >= 200 * MiB, `stdout had ${stdoutBytes} bytes`);
    assert.ok(stderrBytes >= 16 * MiB && stderrBytes < 17 * MiB, `stderr had ${stderrBytes} bytes`);
    const exit = (await events()).find((e) => e.event === 'exit');
    assert.ok(exit?.event === 'exit' && exit.maxRssKiB < 150 * 1024, `the fake's peak RSS: ${JSON.stringify(exit)}`);
    // Each stream logged: its bytes, and the reader's (this process's) peak RSS after every MiB and at the end.
    const streamed = (await events()).filter((e) => e.event === 'streamed');
    assert.deepEqual(
      streamed.map(
        (e) => e.event === 'streamed' && [e.step, e.stream, e.bytes >= (e.stream === 'stdout' ? 200 : 16) * MiB],
      ),
      [
        ['plan', 'stdout', true],
        ['plan', 'stderr', true],
      ],
    );
    for (const e of streamed) {
      assert.ok(
        e.event === 'streamed' && e.readerPeakRssKiB.length === Math.floor(e.bytes / MiB) + 1,
        JSON.stringify(e).slice(0, 300),
      );
      assert.ok(
        [...e.readerPeakRssKiB, e.readerPeakRssKiBAtEnd].every((kib) => typeof kib === 'number' && kib > 0),
        `the reader's peaks were read: ${JSON.stringify(e.readerPeakRssKiB)}`,
      );
    }
  });

  test("huge-stdout to a reader that stalls: the write that waited on the pipe is logged, from the stall to the reader's resume", async (t) => {
    const { dir, log, events } = await setUp(t);
    const child = spawn(FAKE_TERRAFORM, ['plan'], {
      cwd: dir,
      env: testTerraformEnv(fakeTerraformEnv({ log, faults: [`plan:huge-stdout=${MiB}`] })),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let resumedAt = 0;
    child.stdout.once('data', () => {
      child.stdout.pause();
      setTimeout(() => {
        resumedAt = Date.now();
        child.stdout.resume();
      }, 600);
    });
    const [exitCode] = await once(child, 'close');
    assert.equal(exitCode, 0);
    const streamed = (await events()).find((e) => e.event === 'streamed');
    assert.ok(streamed?.event === 'streamed', 'the stream was logged');
    const { from, to } = streamed.longestWrite;
    assert.ok(
      to >= resumedAt && to - from >= 300,
      `the longest write waited ${to - from} ms, ending ${to - resumedAt} ms after the reader resumed`,
    );
  });

  test('huge-stdout to a slow reader: every byte arrives before the fake exits', async (t) => {
    // A slow reader keeps the pipe full, so the fake's last writes sit in its write queue when it is
    // done: exiting then would drop them. Whether they do depends on timing, hence several readers.
    const { dir, log } = await setUp(t);
    for (const delayMs of [1, 2, 3, 5, 8, 13]) {
      const child = spawn(FAKE_TERRAFORM, ['plan'], {
        cwd: dir,
        env: testTerraformEnv(fakeTerraformEnv({ log, faults: [`plan:huge-stdout=${MiB}`] })),
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let stdoutBytes = 0;
      let tail = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdoutBytes += chunk.length;
        tail = (tail + chunk.toString()).slice(-200);
        child.stdout.pause();
        setTimeout(() => child.stdout.resume(), delayMs);
      });
      const [exitCode] = await once(child, 'close');
      assert.equal(exitCode, 0);
      assert.ok(
        stdoutBytes >= MiB,
        `stdout had ${stdoutBytes} of at least ${MiB} bytes (reader pausing ${delayMs} ms)`,
      );
      assert.match(
        tail,
        /Plan: changes|No changes/,
        `what the fake printed after the filler arrived too (reader pausing ${delayMs} ms)`,
      );
    }
  });

  test('huge-plan: a valid plan document of the asked size, streamed', async (t) => {
    const { run, events } = await setUp(t);
    const shown = await run(['show', '-json', 'missing-is-fine'], { faults: [`show:huge-plan=${8 * MiB}`] });
    assert.ok(shown.stdout.length >= 8 * MiB);
    const plan = JSON.parse(shown.stdout);
    assert.equal(plan.resource_changes[0].address, 'terraform_data.huge[0]');
    assert.equal(plan.resource_changes.at(-1).address, `terraform_data.huge[${plan.resource_changes.length - 1}]`);
    const streamed = (await events()).find((e) => e.event === 'streamed');
    assert.ok(
      streamed?.event === 'streamed' &&
        streamed.step === 'show' &&
        streamed.resourceChanges === plan.resource_changes.length,
      'the changes printed are logged',
    );
    const exit = (await events()).find((e) => e.event === 'exit');
    assert.ok(exit?.event === 'exit' && exit.maxRssKiB < 150 * 1024);
  });

  test('orphan: leaves a sleep behind in its process group, pid in the file', async (t) => {
    const { dir, run, events } = await setUp(t);
    const pidFile = join(dir, 'orphan.pid');
    assert.equal((await run(['apply'], { faults: ['apply:orphan'], orphanPidFile: pidFile })).exitCode, 0);
    const orphan = Number(await readFile(pidFile, 'utf8'));
    t.after(() => isProcessRunning(orphan) && process.kill(orphan, 'SIGKILL'));
    assert.ok(isProcessRunning(orphan), 'the orphan outlives the fake');
    const [started] = await events();
    assert.ok(started?.event === 'start');
    const stat = readFileSync(`/proc/${orphan}/stat`, 'utf8');
    assert.equal(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]), started.pgid);
    process.kill(-started.pgid, 'SIGKILL'); // what the runner must do: end the group
    assert.ok(await processEnds(orphan));
  });

  test('leak-secret: the secret in a diagnostic on stderr; the generated plan holds it raw', async (t) => {
    const { run } = await setUp(t);
    const secret = 'CANARY-s3cr3t-value';
    const planned = await run(['plan', '-out=p'], { faults: ['plan:leak-secret', 'plan:exit=1'], secret });
    assert.equal(planned.exitCode, 1);
    assert.ok(planned.stderr.includes(secret));
    await run(['plan', '-out=p'], { secret });
    const shown = JSON.parse((await run(['show', '-json', 'p'])).stdout);
    assert.equal(shown.variables.secret.value, secret);
    assert.equal(shown.configuration.root_module.variables.secret.sensitive, true);
  });
});
