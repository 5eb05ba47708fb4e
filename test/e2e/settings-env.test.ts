// Settings per op: a Job's environment carries every CAPTF_* variable the controller may set, and
// an op reads only those of the settings it takes; a flag the op does not take is a usage error.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Settings, envName } from '../../src/schemas/config.ts';
import { Result } from '../../src/schemas/result.ts';
import { FakeApiServer } from '../support/fake-apiserver.ts';
import { modules, readLocalState } from '../support/tf-modules.ts';
import { explain, scenario, type Scenario } from '../support/runner.ts';

const NS = 'team-a';

describe('settings per op', () => {
  let api: FakeApiServer;
  before(async () => {
    api = await FakeApiServer.start({ serviceAccount: { namespace: NS, name: 'captf-runner' } });
  });
  after(() => api.stop());

  /**
   * Every setting's variable, as a Job of another op would carry it: among them the guard off for a
   * cluster and a plan artifact without its approved plan hash, which only an apply refuses.
   */
  async function jobEnvironment(s: Scenario, job: string, backup: string): Promise<Record<string, string>> {
    api.addJob(NS, job);
    const workdir = join(s.dir, `workdir-${job}`);
    const artifacts = join(s.dir, 'artifacts');
    const backendConfig = join(s.dir, 'empty.backend.hcl');
    await mkdir(artifacts, { recursive: true });
    await writeFile(backendConfig, '');
    const policy = join(s.dir, 'policy');
    await mkdir(policy, { recursive: true });
    await writeFile(join(policy, 'limits.yaml'), 'apiVersion: policy.captf.io/v1\nlimits:\n  maxDeletes: 100\n');
    const values: Record<keyof typeof Settings.shape, string> = {
      module: s.module,
      inputs: s.inputs,
      workdir,
      out: s.out,
      state: s.state,
      // The object's state as its last result named it: the ops that plan read it (restore and unlock take none).
      expectLineage: existsSync(s.state) ? (await readLocalState(s.state)).lineage : 'no-state-yet',
      newState: '1',
      image: 'registry.example/captf/runner:1',
      kind: 'cluster',
      guard: 'off',
      approvedHash: 'not-an-approval',
      terraform: 'terraform',
      lockTimeout: '5s',
      logFormat: 'json',
      object: 'demo',
      namespace: NS,
      backendConfig,
      terminationLog: s.termination,
      policy,
      planArtifact: join(s.dir, 'no-such-artifact'),
      approvedPlanHash: 'pending',
      artifacts,
      chunkBytes: '1024',
      maxArtifactBytes: String(2 ** 27),
      // Never reached: --backups and --artifacts win for their kind (and keep the blocked records).
      store: 'postgres://captf@127.0.0.1:1/unused',
      backups: join(s.dir, 'backups'),
      backup,
      force: '1',
      allowPlaintextBackups: '1',
      keepBackups: '5',
      stopGrace: '10s',
      deadline: '10m',
      lockId: '00000000-0000-0000-0000-000000000000',
      jobName: job,
      jobUid: api.job(NS, job)!.metadata.uid!,
      serviceAccountDir: await api.writeServiceAccountDir(join(s.dir, `sa-${job}`)),
    };
    return { ...api.env, ...Object.fromEntries(Object.entries(values).map(([key, value]) => [envName(key), value])) };
  }

  it('plan, unlock and restore ignore the variables of the settings they do not take', async (t) => {
    const s = await scenario(t, modules.base);
    const backups = join(s.dir, 'backups');
    // Local runs make a state and a backup of it for the restore.
    const first = await s.run('apply', ['--kind', 'machine']);
    assert.equal(first.exitCode, 0, explain(first));
    await s.useModule(modules.update);
    const second = await s.run('apply', ['--kind', 'machine', '--backups', backups]);
    assert.equal(second.exitCode, 0, explain(second));
    const backup = join(second.result!.backup!.location, second.result!.backup!.object);

    // A policy dir that does not load: the ops that never read one run as if it were not there.
    const broken = join(s.dir, 'broken-policy');
    await mkdir(broken);
    await writeFile(join(broken, 'p.yaml'), 'not: a policy\n');
    const runWithJobEnvironment = async (op: string, job: string, extra: Record<string, string> = {}) => {
      // Only the flags every run of the harness passes, with the variables' values.
      const run = await s.run(op, [], { ...(await jobEnvironment(s, job, backup)), ...extra });
      assert.equal(run.exitCode, 0, `${op}: ${explain(run)}`);
      Result.parse(run.result);
      assert.equal(
        api.job(NS, job)!.metadata.annotations?.['captf.io/outcome'],
        run.result!.outcome,
        'a run in a cluster',
      );
      return run.result!;
    };
    await s.useModule(modules.base);
    const planned = await runWithJobEnvironment('plan', 'plan-1');
    assert.equal(planned.reason, 'PlanCreated');
    assert.equal(planned.planArtifact!.location, join(s.dir, 'artifacts'), 'CAPTF_ARTIFACTS: the plan takes it');
    assert.equal(planned.plan!.policy!.deniedTotal, 0, 'CAPTF_POLICY: the plan reads it');
    assert.equal((await runWithJobEnvironment('unlock', 'unlock-1', { CAPTF_POLICY: broken })).reason, 'NotLocked');
    const restored = await runWithJobEnvironment('restore', 'restore-1', { CAPTF_POLICY: broken });
    assert.equal(restored.reason, 'RestoreSucceeded');
  });

  it('a settings rule an apply breaks is handed back in a cluster like any result', async (t) => {
    const s = await scenario(t, modules.base);
    const env = await jobEnvironment(s, 'apply-guard', join(s.dir, 'no-backup'));
    delete env.CAPTF_PLAN_ARTIFACT;
    const run = await s.run('apply', [], env);
    assert.equal(run.exitCode, 2, explain(run));
    assert.equal(run.result!.reason, 'GuardRequired');
    assert.equal(api.job(NS, 'apply-guard')!.metadata.annotations?.['captf.io/reason'], 'GuardRequired');
    assert.equal(run.result!.object.name, 'demo', 'the result names the object its valid settings name');
    assert.ok(!existsSync(s.state), 'nothing was applied');

    // A Manual apply passes no --guard (the guard is not consulted, and off stays refused for a cluster).
    const manual = await jobEnvironment(s, 'apply-artifact', join(s.dir, 'no-backup'));
    delete manual.CAPTF_GUARD;
    const approved = await s.run('apply', [], manual);
    assert.equal(approved.exitCode, 2, explain(approved));
    assert.equal(approved.result!.reason, 'PlanNotApproved');
    assert.match(approved.result!.message, /--plan-artifact needs --approved-plan-hash.*not "pending"/);
  });

  it('a restore without --backup and an unlock without --lock-id are refused before anything runs', async (t) => {
    const s = await scenario(t, modules.base);
    for (const [op, reason, message] of [
      ['restore', 'BackupMissing', /pass --backup DIR/],
      ['unlock', 'LockIdMissing', /needs --lock-id ID/],
    ] as const) {
      const run = await s.run(op);
      assert.equal(run.exitCode, 2, `${op}: ${explain(run)}`);
      assert.equal(run.result!.reason, reason);
      assert.match(run.result!.message, message);
      assert.deepEqual(run.result!.steps, [], `${op}: no step ran`);
    }
  });

  it('a flag of another op is a usage error naming the flag, with a result', async (t) => {
    const s = await scenario(t, modules.base);
    for (const [op, flag] of [
      ['plan', '--guard'],
      ['unlock', '--backup'],
      ['restore', '--artifacts'],
      ['drift', '--lock-id'],
    ] as const) {
      const run = await s.run(op, [flag, 'x']);
      assert.equal(run.exitCode, 2, `${op} ${flag}: ${explain(run)}`);
      assert.equal(run.result!.reason, 'UsageInvalid');
      assert.match(run.result!.message, new RegExp(`unknown option '${flag}'`));
    }
    assert.ok(!existsSync(s.state), 'nothing was applied');
  });
});
