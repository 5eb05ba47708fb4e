// State locks with the real terraform: the pg backend (a real PostgreSQL, advisory locks) and the
// local backend (--state). A lock held by another run ends `failed`/`lock`/StateLocked after
// --lock-timeout, with what terraform says about the holder (never pg's own-request info presented
// as the holder); `unlock` releases only a lock whose holder is gone and that carries the given id;
// an interrupted run at any step releases its lock and leaves a state the next apply continues from.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { usePostgres, type TestDatabase } from '../support/pg.ts';
import { runProcess, startInBackground } from '../support/exec.ts';
import { unpackArtifactDir } from '../support/artifacts.ts';
import { groupsKilledAtEnd, sharedSetup } from '../support/suite-setup.ts';
import {
  modules,
  processEnds,
  slowApply,
  testTerraformEnv,
  withPgBackend,
  writeModule,
  type FileTree,
  type TerraformState,
} from '../support/tf-modules.ts';
import {
  explain,
  RUNNER,
  recordedInputsHash,
  runRunner,
  scenario,
  type RunnerRun,
  type Scenario,
} from '../support/runner.ts';
import { Result } from '../../src/schemas/result.ts';

const pg = usePostgres();

/** The background runs' process groups, killed if they still run when the file ends. */
const started = groupsKilledAtEnd();

interface PgScenario extends Scenario {
  db: string;
  backendConfig: string;
  /** The runner against the pg state (no --state). */
  runPg(op: string, args?: string[]): Promise<RunnerRun>;
  /** Runner arguments for an op against the pg state. */
  pgArgs(op: string, args?: string[]): string[];
}

/** `database`: one on a server of the test's own, or a copy of a setup's (default: a new one on the file's shared server). */
async function pgScenario(t: TestContext, tree: FileTree, database?: TestDatabase): Promise<PgScenario> {
  const db = database ?? (await pg.newDatabase());
  const s = await scenario(t, withPgBackend(tree));
  const backendConfig = join(s.dir, 'backend.hcl');
  await writeFile(backendConfig, `conn_str = ${JSON.stringify(db.connString)}\n`, { mode: 0o600 });
  const pgArgs = (op: string, args: string[] = []) =>
    s.ownBackendArgs(op, ['--backend-config', backendConfig, ...args]);
  return Object.assign(s, {
    db: db.name,
    backendConfig,
    pgArgs,
    runPg: (op: string, args: string[] = []) => runRunner(pgArgs(op, args), {}, s),
  });
}

/** Starts the runner in the background (own process group) and resolves once `step` has started. */
async function startRunner(args: string[], step: string) {
  const run = await startInBackground(process.execPath, [RUNNER, ...args], {
    env: testTerraformEnv(),
    mark: `"msg":"${step}: started"`,
    killAfterMs: 180_000,
  });
  started.push(run.child);
  return run;
}

function readResult(s: Scenario) {
  return Result.parse(JSON.parse(readFileSync(join(s.out, 'result.json'), 'utf8')));
}

/** terraform's lock info once it is written whole: terraform creates the file, then writes it. */
async function waitForLockInfo(path: string): Promise<{ ID: string; Who: string; Created: string }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      return JSON.parse(readFileSync(path, 'utf8')) as { ID: string; Who: string; Created: string };
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`no readable lock info at ${path} after 20 s`, { cause: error });
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** The base module applied once (pg backend) for the SIGTERM tests that need a state: each takes a copy of its database. */
const baseApplied = sharedSetup(async (suite) => {
  const db = await pg.newDatabase();
  const s = await pgScenario(suite, modules.base, db);
  const first = await s.runPg('apply', ['--kind', 'machine', '--guard', 'off']);
  assert.equal(first.exitCode, 0, explain(first));
  return db;
});

const stepDuration = (run: RunnerRun, name: string) => run.result!.steps.find((x) => x.name === name)?.durationMs ?? -1;

describe('pg backend', { concurrency: 1 }, () => {
  it("a second runner on a locked state fails with kind lock after --lock-timeout; pg's lock info is never shown as the holder", async (t) => {
    const s = await pgScenario(t, slowApply({ resources: 2, seconds: 60 }));
    const holder = await startRunner(s.pgArgs('apply', ['--kind', 'machine', '--guard', 'off']), 'apply');
    t.after(() => holder.child.kill('SIGKILL'));
    await pg.server().waitForAdvisoryLock(s.db);

    const second = await s.runPg('apply', ['--kind', 'machine', '--guard', 'off', '--lock-timeout', '2s']);
    assert.equal(second.exitCode, 1, explain(second));
    const r = Result.parse(second.result);
    assert.equal(r.outcome, 'failed');
    assert.equal(r.reason, 'StateLocked');
    assert.equal(r.error?.kind, 'lock');
    assert.equal(r.error?.step, 'plan');
    assert.equal(
      r.lock?.holderKnown,
      false,
      "pg prints the waiting process's own lock info: it must not be reported as the holder",
    );
    assert.equal(r.lock?.id, undefined);
    assert.equal(r.lock?.who, undefined);
    assert.doesNotMatch(r.message, /--lock-id/, "pg's advisory locks have no id: no unlock to suggest");
    assert.match(r.message, /advisory lock ends with the holder's database session/);
    assert.match(r.message, /does not say who holds it/);
    const waited = stepDuration(second, 'plan');
    assert.ok(waited >= 1_700 && waited < 30_000, `plan waited ${waited} ms for a 2 s --lock-timeout`);
    assert.equal(r.applied, false);
    assert.equal(r.mayHaveChanged, false);

    holder.child.kill('SIGTERM');
    assert.equal((await holder.exited).exitCode, 143);
    assert.deepEqual(await pg.server().advisoryLocks(s.db), [], 'the holder released its lock');
  });

  it('unlock is refused plainly for pg (UnlockUnsupported): its advisory locks have no id', async (t) => {
    const s = await pgScenario(t, modules.base);
    const run = await s.runPg('unlock', ['--lock-id', 'anything']);
    // No retry can pass it: exit 2, not the 1 that says a retry may help.
    assert.equal(run.exitCode, 2, explain(run));
    const r = Result.parse(run.result);
    assert.equal(r.outcome, 'invalid');
    assert.equal(r.reason, 'UnlockUnsupported');
    assert.equal(r.error?.kind, 'lock');
    assert.deepEqual(r.steps, [], 'refused before any step');
    assert.equal(r.error?.step, undefined);
    assert.match(r.message, /advisory lock/);
  });

  for (const step of ['init', 'plan', 'show', 'apply'] as const) {
    it(`SIGTERM during ${step}: interrupted in ${step}, exit 143, the advisory lock is released, the next apply succeeds`, async (t) => {
      // Past init, a state to interrupt: a copy of the applied base (plan and show then have something to read).
      const s = await pgScenario(
        t,
        slowApply({ resources: 3, seconds: 60 }),
        step === 'init' ? undefined : await pg.newDatabase(await baseApplied()),
      );
      const { child, exited } = await startRunner(
        s.pgArgs('apply', ['--kind', 'machine', '--guard', 'off', '--stop-grace', '20s']),
        step,
      );
      if (step === 'apply') await pg.server().waitForAdvisoryLock(s.db);
      child.kill('SIGTERM');
      const run = await exited;
      assert.equal(run.exitCode, 143, String(run.stderr).slice(-3000));
      const r = readResult(s);
      assert.equal(r.outcome, 'interrupted');
      assert.equal(r.reason, 'Interrupted');
      assert.equal(r.error?.step, step, JSON.stringify(r.steps));
      assert.equal(r.mayHaveChanged, step === 'apply');
      assert.deepEqual(await pg.server().advisoryLocks(s.db), [], 'no advisory lock outlives the interrupted run');

      // The state is consistent: the next apply (provisioners that finish at once) continues from it.
      await s.useModule(withPgBackend(slowApply({ resources: 3, seconds: 0 })));
      const next = await s.runPg('apply', ['--kind', 'machine', '--guard', 'off']);
      assert.equal(next.exitCode, 0, explain(next));
      const [row] = await pg.server().stateRows(s.db);
      assert.equal(recordedInputsHash(JSON.parse(row!.data)), next.result!.inputsHash);
      assert.deepEqual(await pg.server().advisoryLocks(s.db), []);
    });
  }
});

describe('local backend (--state)', { concurrency: 1 }, () => {
  const lockInfo = (s: Scenario) => join(s.dir, 'state', '.terraform.tfstate.lock.info');
  const localArgs = (s: Scenario, op: string, args: string[] = []) => s.runArgs(op, args);

  it("a second runner names the holder (holderKnown, its lock id); unlock refuses to take a live holder's lock", async (t) => {
    const s = await scenario(t, slowApply({ resources: 2, seconds: 60 }));
    const holder = await startRunner(localArgs(s, 'apply', ['--kind', 'machine', '--guard', 'off']), 'apply');
    t.after(() => holder.child.kill('SIGKILL'));
    const info = await waitForLockInfo(lockInfo(s));

    // Whole seconds (what a controller has from activeDeadlineSeconds): terraform gets 2s.
    const second = await s.run('apply', ['--kind', 'machine', '--guard', 'off', '--lock-timeout', '2']);
    assert.equal(second.exitCode, 1, explain(second));
    const r = Result.parse(second.result);
    assert.equal(r.reason, 'StateLocked');
    assert.equal(r.error?.kind, 'lock');
    assert.equal(r.lock?.holderKnown, true);
    assert.equal(r.lock?.id, info.ID, "the lock id is the holder's");
    assert.equal(r.lock?.who, info.Who);
    // The holder's host is who's hostname (the holder runs on this machine; in a pod it is the pod's name).
    assert.equal(r.lock?.host, hostname());
    // RFC 3339 in UTC, the same instant the lock info file records (terraform prints Go's own form on stderr).
    assert.match(r.lock!.created!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.equal(Date.parse(r.lock!.created!), Date.parse(info.Created));
    assert.equal(r.lock?.operation, 'OperationTypeApply');
    assert.ok(
      stepDuration(second, 'plan') >= 1_700,
      `plan waited ${stepDuration(second, 'plan')} ms for a 2 s --lock-timeout`,
    );
    assert.ok(r.message.includes(`unlock it: captf-runner unlock --lock-id ${info.ID}.`), r.message);

    const unlock = await s.run('unlock', ['--lock-id', info.ID]);
    assert.equal(unlock.exitCode, 1, explain(unlock));
    assert.equal(unlock.result!.reason, 'LockHeld');
    assert.equal(unlock.result!.error?.kind, 'lock');
    assert.equal(unlock.result!.error?.step, 'force-unlock');
    assert.equal(unlock.result!.lock?.id, info.ID);
    assert.equal(unlock.result!.lock?.created, r.lock!.created, "one lock, one time, from either of terraform's forms");
    assert.ok(existsSync(lockInfo(s)), "a live holder's lock is left alone");

    holder.child.kill('SIGTERM');
    assert.equal((await holder.exited).exitCode, 143);
    assert.ok(!existsSync(lockInfo(s)), 'the interrupted holder released its lock');
  });

  it('a stale lock (holder SIGKILLed mid-apply): a wrong id is refused, the right id releases it, a second unlock finds nothing', async (t) => {
    const s = await scenario(t, modules.base);
    // terraform itself, SIGKILLed mid-apply: it leaves .terraform.tfstate.lock.info and no process.
    const dir = await writeModule(
      {
        ...slowApply({ resources: 2, seconds: 60 }),
        'backend.tf': `terraform {\n  backend "local" {\n    path = ${JSON.stringify(s.state)}\n  }\n}\n`,
      },
      t,
    );
    const env = testTerraformEnv();
    const init = await runProcess('terraform', ['init', '-no-color'], { cwd: dir, env });
    assert.equal(init.exitCode, 0, init.stderr);
    // Killed once it is applying: its provisioners have started, and it holds the lock.
    const killed = await startInBackground('terraform', ['apply', '-auto-approve', '-no-color'], {
      cwd: dir,
      env,
      mark: "Provisioning with 'local-exec'",
      killAfterMs: 180_000,
    });
    started.push(killed.child);
    const { ID: id } = await waitForLockInfo(lockInfo(s));
    process.kill(-killed.child.pid!, 'SIGKILL');
    await killed.exited;
    assert.ok(await processEnds(killed.child.pid!));
    assert.ok(existsSync(lockInfo(s)), 'SIGKILL leaves the lock info behind');

    const wrong = await s.run('unlock', ['--lock-id', 'not-the-lock-id']);
    // The same id fails the same way every time: exit 2, and the step that read the lock info failed.
    assert.equal(wrong.exitCode, 2, explain(wrong));
    assert.equal(wrong.result!.reason, 'LockIdMismatch');
    assert.equal(wrong.result!.error?.step, 'lock info');
    assert.equal(wrong.result!.steps.find((step) => step.name === 'lock info')?.status, 'failed');
    assert.equal(wrong.result!.lock?.id, id, 'the refusal says which id the lock carries');
    assert.ok(existsSync(lockInfo(s)), 'a wrong id releases nothing');

    const right = await s.run('unlock', ['--lock-id', id]);
    assert.equal(right.exitCode, 0, explain(right));
    assert.equal(right.result!.outcome, 'succeeded');
    assert.equal(right.result!.reason, 'Unlocked');
    assert.ok(!existsSync(lockInfo(s)), 'the stale lock info is gone');

    const again = await s.run('unlock', ['--lock-id', id]);
    assert.equal(again.exitCode, 0, explain(again));
    assert.equal(again.result!.reason, 'NotLocked');

    // And the state is usable: the runner applies over what the killed terraform left.
    const next = await s.run('apply', ['--kind', 'machine', '--guard', 'off']);
    assert.equal(next.exitCode, 0, explain(next));
  });

  it('a stale local lock info does not block the next run (terraform 1.11: the fcntl lock died with its holder)', async (t) => {
    const s = await scenario(t, modules.base);
    await writeFile(
      lockInfo(s),
      JSON.stringify({
        ID: 'stale-0000',
        Operation: 'OperationTypeApply',
        Who: 'gone@nowhere',
        Version: '1.11.4',
        Created: '2026-01-01T00:00:00Z',
        Path: s.state,
      }),
    );
    const run = await s.run('apply', ['--lock-timeout', '1s']);
    assert.equal(run.exitCode, 0, explain(run));
    assert.ok(!existsSync(lockInfo(s)), 'terraform took the lock over and removed the info on unlock');
  });
});

/** modules.base whose terraform_data.network runs `command` when it is destroyed (the state is the same). */
const networkDestroyRuns = (command: string): FileTree => {
  const network = 'resource "terraform_data" "network" {\n  input = "10.0.0.0/16"\n}\n';
  assert.ok(modules.base['main.tf'].includes(network));
  const provisioner = `  provisioner "local-exec" {\n    when    = destroy\n    command = ${JSON.stringify(command)}\n  }\n}\n`;
  return {
    ...modules.base,
    'main.tf': modules.base['main.tf'].replace(network, network.replace(/\}\n$/, provisioner)),
  };
};

/** The record in the pg state row. */
const rowRecord = async (s: PgScenario) => {
  const [row] = await pg.server().stateRows(s.db);
  const state = JSON.parse(row!.data) as { serial: number };
  return { hash: recordedInputsHash(JSON.parse(row!.data)), serial: state.serial };
};

describe('a destroy that fails (pg backend)', () => {
  it('terraform deletes the record first; the runner pushes it back through the state lock', async (t) => {
    const s = await pgScenario(
      t,
      networkDestroyRuns('echo the network stays on purpose >&2; exit 1'),
      await pg.newDatabase(await baseApplied()),
    );
    const before = await rowRecord(s);
    const run = await s.runPg('destroy');
    assert.equal(run.exitCode, 1, explain(run));
    const r = Result.parse(run.result);
    assert.equal(r.reason, 'DestroyFailed');
    assert.match(
      run.stdout,
      /terraform_data\.captf_inputs_hash: Destruction complete/,
      'terraform deleted the record first',
    );
    const after = await rowRecord(s);
    assert.ok(before.hash);
    assert.equal(after.hash, before.hash, 'the record is back, as it was');
    assert.equal(r.stateInputsHash, before.hash);
    assert.equal(r.state?.serialAfter, after.serial);
    assert.equal(r.steps.find((step) => step.name === 'record set back')?.status, 'ok', JSON.stringify(r.steps));
    assert.deepEqual(await pg.server().advisoryLocks(s.db), [], 'no lock outlives the run');
  });
});

describe('errored.tfstate (pg backend)', () => {
  it('the backend goes away mid-apply: what terraform could not save is kept in the backup store, never lost', async (t) => {
    const s = await pgScenario(t, slowApply({ resources: 2, seconds: 4 }));
    const { exited } = await startRunner(s.pgArgs('apply', ['--kind', 'machine', '--guard', 'off']), 'apply');
    await pg.server().waitForAdvisoryLock(s.db);
    // While the provisioners sleep, the database goes away, every session on it ended (terraform's, which
    // holds the lock): terraform cannot save what it applies, and the runner cannot push it either.
    await pg.server().query(`DROP DATABASE ${s.db} WITH (FORCE)`);
    const run = await exited;
    assert.equal(run.exitCode, 1, String(run.stderr).slice(-3000));
    const r = readResult(s);
    assert.equal(r.outcome, 'failed');
    assert.equal(r.mayHaveChanged, true);
    assert.equal(r.erroredState?.pushed, false, JSON.stringify(r.erroredState));
    const keptAt = r.erroredState!.keptAt!;
    assert.ok(keptAt.startsWith(join(s.out, 'backups')), keptAt);
    assert.ok(
      r.warnings.some((w) => w.includes(keptAt)),
      'a warning says where it is and how to push it',
    );
    const { manifest, files } = await unpackArtifactDir(keptAt);
    assert.equal(manifest.kind, 'StateBackup');
    const kept = JSON.parse(files['terraform.tfstate']!.toString('utf8')) as {
      resources: Array<{ name: string; instances: unknown[] }>;
    };
    assert.equal(
      kept.resources.find((res) => res.name === 'slow')?.instances.length,
      2,
      'what terraform applied is in the kept state',
    );
  });

  it('the backend goes away mid-destroy: the failed destroy reports the kept state, which holds the record as it was', async (t) => {
    const s = await pgScenario(t, networkDestroyRuns('sleep 4'), await pg.newDatabase(await baseApplied()));
    const previous = (await rowRecord(s)).hash;
    const { child, exited } = await startInBackground(process.execPath, [RUNNER, ...s.pgArgs('destroy')], {
      env: testTerraformEnv(),
      mark: "terraform_data.network: Provisioning with 'local-exec'",
      killAfterMs: 180_000,
    });
    started.push(child);
    await pg.server().query(`DROP DATABASE ${s.db} WITH (FORCE)`);
    const run = await exited;
    assert.equal(run.exitCode, 1, String(run.stderr).slice(-3000));
    const r = readResult(s);
    assert.equal(r.reason, 'DestroyFailed');
    assert.equal(r.erroredState?.pushed, false, JSON.stringify(r.erroredState));
    const { files } = await unpackArtifactDir(r.erroredState!.keptAt!);
    const kept = JSON.parse(files['terraform.tfstate']!.toString('utf8')) as TerraformState;
    assert.ok(previous);
    assert.equal(recordedInputsHash(kept), previous, 'terraform deleted the record first; the kept state has it back');
    assert.ok(
      r.warnings.some((w) => w.includes('errored.tfstate') && w.includes('record set back')),
      r.warnings.join('\n'),
    );
  });
});
