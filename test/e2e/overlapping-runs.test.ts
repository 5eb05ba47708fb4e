// Two runs of one object at once, with the real terraform: what one leaves is what the next acts
// on. An apply that waits on the lock while another applies backs up, and reports as its state
// before, the state its apply replaced (the one its saved plan was made against), on a local state
// and on the pg backend; a restore of its backup keeps what the first run created. An approved apply
// that meets a held lock changes nothing, says so, and keeps its artifact for the retry.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { groupsKilledAtEnd } from '../support/suite-setup.ts';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { usePostgres } from '../support/pg.ts';
import { startInBackground } from '../support/exec.ts';
import { unpackArtifactDir } from '../support/artifacts.ts';
import {
  modules,
  runTestTerraform,
  slowApply,
  tempDir,
  testTerraformEnv,
  withPgBackend,
  writeTree,
  type FileTree,
  type TerraformState,
} from '../support/tf-modules.ts';
import { argsFor, explain, RUNNER, runRunner, scenario, type RunnerRun, type Scenario } from '../support/runner.ts';
import { Result } from '../../src/schemas/result.ts';

const pg = usePostgres();

/** The background runs' process groups, killed if they still run when the file ends. */
const started = groupsKilledAtEnd();

/** The first run's module: two resources whose local-exec takes `seconds` (the first run holds the lock that long). */
const SLOW = slowApply({ resources: 2, seconds: 8 });
/** The second run's: the same, and one more resource, so its apply changes the state the first one left. */
const SLOW_AND_ONE_MORE: FileTree = {
  ...SLOW,
  'second.tf': 'resource "terraform_data" "second" {\n  input = "second"\n}\n',
};

interface Backend {
  /** The runner's arguments for `op` on this object's state, with `out` as its out dir. */
  args(op: string, args?: string[], out?: string): string[];
  /** A module tree as this backend's runs take it. */
  module(tree: FileTree): FileTree;
  state(): Promise<TerraformState>;
}

interface Setup {
  s: Scenario;
  backend: Backend;
}

/** The instances a state holds, by address, without the runner's record. */
const addresses = (state: TerraformState) =>
  state.resources
    .filter((resource) => resource.mode === 'managed' && resource.name !== 'captf_inputs_hash')
    .flatMap((resource) =>
      resource.instances.map(
        (instance) =>
          `${resource.type}.${resource.name}${instance.index_key === undefined ? '' : `[${JSON.stringify(instance.index_key)}]`}`,
      ),
    )
    .sort();

const outArgs = (s: Scenario, out: string) => ({ ...s, out, termination: join(out, 'termination-log') });

async function localBackend(t: TestContext): Promise<Setup> {
  const s = await scenario(t, modules.base);
  const backend: Backend = {
    args: (op, args = [], out = s.out) =>
      argsFor(outArgs(s, out), op, ['--state', s.state, ...(op === 'apply' ? ['--new-state'] : [])], args),
    module: (tree) => tree,
    state: () => s.readState(),
  };
  return { s, backend };
}

async function pgBackend(t: TestContext): Promise<Setup> {
  const db = await pg.newDatabase();
  const s = await scenario(t, withPgBackend(modules.base));
  const backendConfig = join(s.dir, 'backend.hcl');
  await writeFile(backendConfig, `conn_str = ${JSON.stringify(db.connString)}\n`, { mode: 0o600 });
  const backend: Backend = {
    args: (op, args = [], out = s.out) =>
      argsFor(outArgs(s, out), op, [], ['--backend-config', backendConfig, ...args]),
    module: withPgBackend,
    state: async () => JSON.parse((await pg.server().stateRows(db.name))[0]!.data) as TerraformState,
  };
  return { s, backend };
}

const APPLY = ['--kind', 'machine', '--guard', 'off'];

async function mustRun(args: string[], s: Scenario): Promise<RunnerRun> {
  const run = await runRunner(args, {}, s);
  assert.equal(run.exitCode, 0, explain(run));
  return run;
}

async function newOut(s: Scenario, name: string): Promise<string> {
  const out = join(s.dir, name);
  await mkdir(out, { recursive: true });
  return out;
}

/**
 * The object applied once (serial S0); then a first run applies SLOW and holds the lock while its
 * local-exec runs; a second run, started meanwhile, waits on the lock with its plan, and plans and
 * applies on the first run's state (S1).
 */
async function overlappingApplies({ s, backend }: Setup) {
  const applied = await mustRun(backend.args('apply', APPLY), s);
  const s0 = applied.result!.state!.serialAfter!;

  await s.useModule(backend.module(SLOW));
  const firstOut = await newOut(s, 'out-first');
  const first = await startInBackground(process.execPath, [RUNNER, ...backend.args('apply', APPLY, firstOut)], {
    env: testTerraformEnv(),
    mark: '"msg":"apply: started"',
    killAfterMs: 180_000,
  });
  started.push(first.child);
  // The first run has its copy of the module: the second run takes another.
  await s.useModule(backend.module(SLOW_AND_ONE_MORE));
  const second = await runRunner(backend.args('apply', [...APPLY, '--lock-timeout', '120s']), {}, s);
  const firstEnded = await first.exited;
  assert.equal(firstEnded.exitCode, 0, firstEnded.stderr.slice(-3000));
  const firstResult = Result.parse(JSON.parse(await readFile(join(firstOut, 'result.json'), 'utf8')));
  assert.equal(second.exitCode, 0, explain(second));
  return { s0, s1: firstResult.state!.serialAfter!, first: firstResult, second: second.result! };
}

async function checkSecondRun(
  { s, backend }: Setup,
  { s0, s1, first, second }: Awaited<ReturnType<typeof overlappingApplies>>,
) {
  assert.ok(s1 > s0, `the first run applied (serial ${s0} → ${s1})`);
  // The race happened: the second run's plan started while the first run's apply ran, and waited on its lock.
  const stepOf = (result: typeof first, name: string) => result.steps.find((step) => step.name === name)!;
  const firstApply = stepOf(first, 'apply');
  assert.ok(
    Date.parse(stepOf(second, 'plan').startedAt) < Date.parse(firstApply.startedAt) + firstApply.durationMs,
    `the second run planned while the first run's apply ran: ${JSON.stringify({ first: first.steps, second: second.steps })}`,
  );
  // The state before read from the saved plan, then the state the apply replaces pulled: the same state, S1.
  assert.equal(second.steps.filter((step) => step.name === 'state before').length, 2);
  assert.equal(
    second.state!.serialBefore,
    s1,
    'serialBefore is the state the apply replaced, not the one pulled first',
  );
  assert.ok(second.state!.serialAfter! > s1);

  const backup = await unpackArtifactDir(second.backup!.ref);
  assert.equal(backup.manifest.serial, s1, 'the backup is of the state the apply replaced');
  assert.ok(second.backup!.object.endsWith(`-s${s1}`), second.backup!.object);
  const backedUp = JSON.parse(backup.files['terraform.tfstate']!.toString('utf8')) as TerraformState;
  assert.equal(backedUp.serial, s1);
  assert.ok(addresses(backedUp).includes('terraform_data.slow[0]'), 'the backup holds what the first run created');
  assert.ok(!addresses(backedUp).includes('terraform_data.second'));

  // A restore of the second run's backup keeps what the first created, and drops only the second's change.
  await mustRun(backend.args('restore', ['--backup', second.backup!.ref], await newOut(s, 'out-restore')), s);
  const restored = await backend.state();
  assert.deepEqual(addresses(restored), addresses(backedUp));
  assert.ok(addresses(restored).includes('terraform_data.slow[1]'));
}

describe('two applies of one object overlap: the backup and serialBefore are of the state the apply replaced', () => {
  it('local state (--state)', async (t) => {
    const setup = await localBackend(t);
    await checkSecondRun(setup, await overlappingApplies(setup));
  });

  it('pg backend', async (t) => {
    const setup = await pgBackend(t);
    await checkSecondRun(setup, await overlappingApplies(setup));
  });
});

/**
 * Holds the lock of the local state `statePath` as a person's terraform does: a plan whose
 * terraform_remote_state reads an HTTP address that answers only when released. terraform reads
 * data sources with the lock held, so the lock is held from the request until the answer.
 */
async function holdLock(t: TestContext, statePath: string): Promise<{ release(): Promise<void> }> {
  let answer: ServerResponse | undefined;
  let requested!: () => void;
  const request = new Promise<void>((resolve) => (requested = resolve));
  const server = createServer((_req, res) => {
    answer = res;
    requested();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const dir = await tempDir(t, 'captf-lock-holder-');
  await writeTree(dir, {
    'main.tf': `terraform {
  backend "local" {
    path = ${JSON.stringify(statePath)}
  }
}
data "terraform_remote_state" "held" {
  backend = "http"
  config = { address = "http://127.0.0.1:${port}/state" }
}
`,
  });
  const init = await runTestTerraform(dir, ['init', '-input=false']);
  assert.equal(init.exitCode, 0, init.stderr);
  const holder = runTestTerraform(dir, ['plan', '-input=false']);
  await request;
  return {
    async release() {
      answer!.writeHead(404).end(); // no state there: the holder's plan fails and lets go of the lock
      await holder;
      server.closeAllConnections();
    },
  };
}

describe('an approved apply that meets a held lock', () => {
  it('changes nothing, says so (applied: false), keeps its artifact, and the retry applies it; once applied, the artifact is gone for good (ArtifactNotFound, exit 5: a new plan)', async (t) => {
    const s = await scenario(t, modules.base);
    await mustRun(s.runArgs('apply', APPLY), s);
    await s.useModule(modules.update);
    const artifacts = join(s.dir, 'artifacts');
    const plan = await mustRun(s.runArgs('plan', ['--artifacts', artifacts]), s);
    const artifact = plan.result!.planArtifact!.ref;
    const hash = plan.result!.planHash!;
    const approved = ['--plan-artifact', artifact, '--approved-plan-hash', hash];
    const stateBytes = await readFile(s.state);

    const lock = await holdLock(t, s.state);
    const locked = await s.run('apply', [...approved, '--lock-timeout', '1s']);
    await lock.release();
    assert.equal(locked.exitCode, 1, explain(locked));
    const r = locked.result!;
    assert.equal(r.reason, 'StateLocked');
    assert.equal(r.error?.step, 'apply');
    assert.equal(r.applied, false, 'waiting for a lock applies nothing');
    assert.equal(r.mayHaveChanged, false);
    assert.deepEqual(await readFile(s.state), stateBytes, 'the state is untouched');
    assert.ok(existsSync(join(artifact, 'manifest.json')), 'the approved artifact is kept for the retry');

    const retry = await s.run('apply', approved);
    assert.equal(retry.exitCode, 0, explain(retry));
    assert.equal(retry.result!.reason, 'ApplySucceeded');
    assert.equal(retry.result!.applied, true);
    assert.equal(existsSync(artifact), false, 'applied once, the artifact is deleted');

    const again = await s.run('apply', approved);
    assert.equal(again.exitCode, 5, explain(again));
    assert.equal(again.result!.reason, 'ArtifactNotFound');
    assert.equal(again.result!.error?.step, 'artifact');
    assert.equal(again.result!.applied, false);
    assert.match(again.result!.message, /Run plan again and approve the new plan hash/);
  });
});

describe('a store that deletes what the runner commits: no result names an artifact or backup that is gone', () => {
  it('PostgreSQL with a trigger that deletes each object at its commit: plan offers no artifact, apply takes no backup and changes nothing (ArtifactWriteUnverified)', async (t) => {
    const db = await pg.newDatabase();
    const storeUrl = new URL(db.connString);
    storeUrl.searchParams.set('schema', 'captf_store');
    const store = ['--store', storeUrl.toString(), '--object', 'demo', '--namespace', 'team-a'];
    const s = await scenario(t, modules.base);
    // The runner creates the store's tables on first use: an apply (its backup skipped: no state yet) and a plan.
    await mustRun(s.runArgs('apply', [...APPLY, ...store]), s);
    await s.useModule(modules.update);
    const firstPlan = await mustRun(s.runArgs('plan', store), s);
    assert.ok(firstPlan.result!.planArtifact, 'a store that keeps it: the plan offers its artifact');
    await pg.server().query(
      `CREATE FUNCTION captf_store.forget() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN DELETE FROM captf_store.captf_objects WHERE store = NEW.store AND object = NEW.object; RETURN NULL; END $$;
       CREATE CONSTRAINT TRIGGER forget AFTER INSERT ON captf_store.captf_objects
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION captf_store.forget();`,
      db.name,
    );

    const plan = await s.run('plan', store);
    assert.equal(plan.exitCode, 1, explain(plan));
    assert.equal(plan.result!.reason, 'ArtifactWriteUnverified');
    assert.equal(plan.result!.error?.step, 'artifact');
    assert.equal(plan.result!.planArtifact, undefined, 'no artifact is named');
    assert.match(plan.result!.message, /no longer holds it/);

    const stateBytes = await readFile(s.state);
    const apply = await s.run('apply', [...APPLY, ...store]);
    assert.equal(apply.exitCode, 1, explain(apply));
    assert.equal(apply.result!.reason, 'ArtifactWriteUnverified');
    assert.equal(apply.result!.error?.step, 'backup');
    assert.equal(apply.result!.backup, undefined, 'no backup is named');
    assert.equal(apply.result!.applied, false);
    assert.deepEqual(await readFile(s.state), stateBytes, 'nothing applied without its backup');
  });
});
