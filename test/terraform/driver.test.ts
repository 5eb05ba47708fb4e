// The driver's way in: the argv of every command, the environment rules and the stop handle of
// createTerraform, and exit codes read in one place. The stderr rules: diagnostics.test.ts.
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyArgs } from '../../src/terraform/apply.ts';
import { LineTail, terraformEnv } from '../../src/terraform/exec.ts';
import { initArgs } from '../../src/terraform/init.ts';
import { forceUnlockArgs, lockProbeArgs } from '../../src/terraform/lock.ts';
import { planArgs } from '../../src/terraform/plan.ts';
import { showPlanArgs } from '../../src/terraform/show.ts';
import { statePullArgs, statePushArgs } from '../../src/terraform/state.ts';
import { StopHandle } from '../../src/terraform/stop.ts';
import { createTerraform, interpretExit, planFileArgument } from '../../src/terraform/terraform.ts';
import { validateArgs } from '../../src/terraform/validate.ts';
import { terraformVersion, versionArgs } from '../../src/terraform/version.ts';
import { peakLiveGrowth } from '../support/live-memory.ts';
import { tempDir } from '../support/tf-modules.ts';

describe('driver: arguments and environment', () => {
  it('builds argument arrays, never a shell string', () => {
    assert.deepEqual(
      planArgs({
        out: '/p',
        varFiles: ['/v.json'],
        vars: { captf_inputs_hash: 'h' },
        lockTimeout: '30s',
        destroy: true,
      }),
      [
        'plan',
        '-input=false',
        '-no-color',
        '-detailed-exitcode',
        '-out=/p',
        '-lock-timeout=30s',
        '-destroy',
        '-var-file=/v.json',
        '-var',
        'captf_inputs_hash=h',
      ],
    );
    assert.deepEqual(applyArgs({ planFile: '/p' }), ['apply', '-input=false', '-no-color', '/p']);
    assert.deepEqual(initArgs({ backendConfigs: ['a.hcl'], lockfileReadonly: true }), [
      'init',
      '-input=false',
      '-no-color',
      '-lockfile=readonly',
      '-backend-config=a.hcl',
    ]);
  });

  it('removes what would change terraform behind the runner and marks automation', () => {
    const env = terraformEnv({
      PATH: '/bin',
      TF_CLI_ARGS: '-x',
      TF_CLI_ARGS_plan: '-y',
      TF_VAR_secret: 's',
      TF_WORKSPACE: 'w',
      TF_LOG: 'trace',
      TF_DATA_DIR: 'd',
      AWS_REGION: 'eu',
      TF_PLUGIN_CACHE_DIR: '/c',
    });
    assert.deepEqual(Object.keys(env).sort(), [
      'AWS_REGION',
      'CHECKPOINT_DISABLE',
      'PATH',
      'TF_INPUT',
      'TF_IN_AUTOMATION',
      'TF_PLUGIN_CACHE_DIR',
    ]);
    assert.equal(env.TF_IN_AUTOMATION, '1');
  });

  it('interprets exit codes in one place', () => {
    assert.equal(interpretExit('plan', 2, true), 'changes');
    assert.equal(interpretExit('plan', 2, false), 'error');
    assert.equal(interpretExit('apply', 2), 'error');
    assert.equal(interpretExit('plan', 0, true), 'ok');
    assert.equal(interpretExit('plan', 1, true), 'error');
  });
});

describe('driver: the argv of every command', () => {
  it('init: the backend skipped (contract check), backend config files in order', () => {
    assert.deepEqual(initArgs(), ['init', '-input=false', '-no-color']);
    assert.deepEqual(initArgs({ backend: false, lockfileReadonly: true }), [
      'init',
      '-input=false',
      '-no-color',
      '-backend=false',
      '-lockfile=readonly',
    ]);
    assert.deepEqual(initArgs({ backendConfigs: ['/a.hcl', '/b.hcl'] }), [
      'init',
      '-input=false',
      '-no-color',
      '-backend-config=/a.hcl',
      '-backend-config=/b.hcl',
    ]);
  });

  it('validate and show: their -json form', () => {
    assert.deepEqual(validateArgs(), ['validate', '-json', '-no-color']);
    assert.deepEqual(showPlanArgs('/private/plan.tfplan'), ['show', '-json', '-no-color', '/private/plan.tfplan']);
  });

  it('plan: the refresh-only plan (refresh and drift), a variable value as one argument', () => {
    assert.deepEqual(planArgs({ out: '/p', refreshOnly: true, lockTimeout: '5m' }), [
      'plan',
      '-input=false',
      '-no-color',
      '-detailed-exitcode',
      '-out=/p',
      '-lock-timeout=5m',
      '-refresh-only',
    ]);
    // A value with spaces or quotes is one argument: there is no shell to split it.
    assert.deepEqual(planArgs({ out: '/p', vars: { name: 'a "b" c; rm -rf /' } }).slice(-2), [
      '-var',
      'name=a "b" c; rm -rf /',
    ]);
  });

  it('a held plan is /dev/fd/3 for show and apply, and terraform inherits its descriptor', () => {
    assert.deepEqual(planFileArgument({ fd: 17 }), { arg: '/dev/fd/3', passFds: [17] });
    assert.deepEqual(planFileArgument('/p'), { arg: '/p', passFds: [] });
    assert.deepEqual(showPlanArgs({ fd: 17 }), ['show', '-json', '-no-color', '/dev/fd/3']);
    assert.deepEqual(applyArgs({ planFile: { fd: 17 }, lockTimeout: '30s' }), [
      'apply',
      '-input=false',
      '-no-color',
      '-lock-timeout=30s',
      '/dev/fd/3',
    ]);
  });

  it('state pull and state push (restore forces another lineage; errored.tfstate is pushed with the lock timeout)', () => {
    assert.deepEqual(statePullArgs(), ['state', 'pull', '-no-color']);
    assert.deepEqual(statePushArgs('/private/restore.tfstate'), [
      'state',
      'push',
      '-no-color',
      '/private/restore.tfstate',
    ]);
    assert.deepEqual(statePushArgs('/private/restore.tfstate', { force: true, lockTimeout: '30s' }), [
      'state',
      'push',
      '-no-color',
      '-force',
      '-lock-timeout=30s',
      '/private/restore.tfstate',
    ]);
  });

  it('force-unlock and the lock probe (which changes nothing and never waits for the lock)', () => {
    assert.deepEqual(forceUnlockArgs('1b2c'), ['force-unlock', '-no-color', '-force', '1b2c']);
    assert.deepEqual(lockProbeArgs(), [
      'state',
      'rm',
      '-dry-run',
      '-lock-timeout=0s',
      '-no-color',
      'terraform_data.captf_runner_lock_probe_0000',
    ]);
  });

  it('version: both forms (only the human one tells OpenTofu apart)', () => {
    assert.deepEqual(versionArgs(), ['version']);
  });
});

/** A terraform that is node running `script`: the handle does not care which binary it starts. */
function nodeAs(stop: StopHandle, env?: NodeJS.ProcessEnv) {
  return createTerraform({ path: process.execPath, cwd: process.cwd(), env, output: { lines() {} }, stop });
}

describe('driver: createTerraform', () => {
  it('applies the environment rules to every command it starts', async () => {
    const tf = nodeAs(new StopHandle(), {
      PATH: process.env.PATH,
      TF_VAR_secret: 's',
      TF_CLI_ARGS: '-destroy',
      TF_LOG: 'trace',
      KEPT: 'yes',
    });
    const run = await tf.run('version', ['-e', 'process.stdout.write(JSON.stringify(process.env))'], {
      captureStdout: true,
    });
    assert.equal(run.meaning, 'ok');
    const env = JSON.parse(run.stdout) as Record<string, string>;
    assert.equal(env.KEPT, 'yes');
    assert.equal(env.TF_IN_AUTOMATION, '1');
    assert.equal(env.TF_INPUT, '0');
    for (const removed of ['TF_VAR_secret', 'TF_CLI_ARGS', 'TF_LOG']) assert.equal(env[removed], undefined, removed);
  });

  it("a stop handle reaches the terraform it started, and no other run's", async () => {
    const mine = new StopHandle();
    const other = new StopHandle();
    // Exits 0 only when it is not interrupted: it waits, and says when it got SIGINT.
    const script =
      "process.on('SIGINT', () => process.exit(42)); setTimeout(() => process.exit(0), 3000); process.stdout.write('ready\\n');";
    const started = (stop: StopHandle) => {
      let ready!: () => void;
      const isReady = new Promise<void>((resolve) => (ready = resolve));
      const tf = createTerraform({
        path: process.execPath,
        cwd: process.cwd(),
        output: { lines: (_s, texts) => void (texts.includes('ready') && ready()) },
        stop,
      });
      return { run: tf.run('version', ['-e', script]), isReady };
    };
    const a = started(mine);
    const b = started(other);
    await Promise.all([a.isReady, b.isReady]);
    const reached = mine.interrupt('graceful');
    assert.equal(reached.size, 1);
    const [ranA, ranB] = await Promise.all([a.run, b.run]);
    assert.equal(ranA.exitCode, 42, 'the interrupted one got one SIGINT');
    assert.equal(ranB.exitCode, 0, "the other run's terraform was not touched");
    assert.equal(mine.interrupt('graceful').size, 0, "a finished terraform is no longer the handle's");
  });

  it('keeps the tail of stderr as cutting it at every line would: whole lines, at most 16 KiB, and whether it was cut', () => {
    const LIMIT = 16 * 1024;
    const cutAtEveryLine = (lines: string[]) => {
      let tail = '';
      let complete = true;
      for (const line of lines) {
        const grown = tail + line + '\n';
        if (grown.length > LIMIT) complete = false;
        const cut = grown.length <= LIMIT ? grown : grown.slice(-LIMIT);
        tail = grown.length <= LIMIT ? grown : cut.slice(cut.indexOf('\n') + 1);
      }
      return { tail, complete };
    };
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 40; round++) {
      // Lines from empty to longer than the tail itself, a few to thousands of them.
      const lines = Array.from({ length: random(round < 10 ? 20 : 3000) }, (_, i) =>
        `${i}:`.padEnd(random(4) === 0 ? random(3 * LIMIT) : random(200), 'x'),
      );
      const tail = new LineTail();
      for (const line of lines) tail.push(line);
      const expected = cutAtEveryLine(lines);
      assert.equal(tail.text(), expected.tail, `round ${round}`);
      assert.equal(tail.complete, expected.complete, `round ${round}`);
    }
  });

  it('says whether stderr was read whole or cut to its tail', async () => {
    const tf = nodeAs(new StopHandle());
    const small = await tf.run('version', ['-e', "process.stderr.write('Error: one line\\n'); process.exit(1)"]);
    assert.equal(small.stderrComplete, true);
    assert.equal(small.meaning, 'error');
    const large = await tf.run('version', [
      '-e',
      "for (let i = 0; i < 400; i++) process.stderr.write('x'.repeat(79) + '\\n'); process.stderr.write('the end\\n')",
    ]);
    assert.equal(large.stderrComplete, false);
    assert.match(large.stderrTail, /the end\n$/);
  });

  it('tells onStart once its process exists, before it ends (an apply may change things from then on)', async () => {
    const told: string[] = [];
    const tf = createTerraform({
      path: process.execPath,
      cwd: process.cwd(),
      output: { lines: (_s, texts) => void told.push(...texts) },
      stop: new StopHandle(),
    });
    await tf.run('apply', ['-e', "process.stdout.write('running\\n')"], { onStart: () => told.push('started') });
    assert.deepEqual(told, ['started', 'running']);
  });

  it('the version probe keeps a head of what the binary prints, never the whole: 40 MiB of it add no live memory', async (t) => {
    const MiB = 1024 * 1024;
    // A `terraform version` that names itself, prints 40 MiB more (more than any capture keeps), then waits a
    // second before it exits: what the driver holds of its output is live while the samples are taken.
    const binary = join(await tempDir(t), 'terraform');
    await writeFile(
      binary,
      `#!${process.execPath}\nprocess.stdout.write('Terraform v1.11.4\\n');\nconst line = 'x'.repeat(1023) + '\\n';\nfor (let i = 0; i < 40; i++) process.stdout.write(line.repeat(1024));\nsetTimeout(() => {}, 1000);\n`,
    );
    await chmod(binary, 0o755);
    const { value, growth } = await peakLiveGrowth(() => terraformVersion(binary, { stop: new StopHandle() }), 100);
    assert.deepEqual(value, { version: '1.11.4', flavor: 'terraform', path: binary });
    assert.ok(growth < 8 * MiB, `live memory grew ${Math.round(growth / MiB)} MiB while \`version\` printed 40 MiB`);
  });

  it('a binary that cannot start is an image problem naming the command, and never started', async () => {
    const tf = createTerraform({
      path: '/nonexistent/terraform',
      cwd: process.cwd(),
      output: { lines() {} },
      stop: new StopHandle(),
    });
    let started = false;
    await assert.rejects(
      tf.run('init', initArgs(), { onStart: () => (started = true) }),
      (e: Error & { reason?: string }) => {
        assert.equal(e.reason, 'ImageInvalid');
        assert.match(e.message, /could not run \/nonexistent\/terraform init/);
        return true;
      },
    );
    assert.equal(started, false);
  });
});
