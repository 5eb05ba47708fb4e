// Every Job starts from what the last one left (issue 39, 1): the state terraform could not save, kept
// in the object's store by a failed apply, is pushed by the next run of the object before anything
// plans, once; where it cannot be pushed safely, the run plans nothing and a person decides.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { groupsKilledAtEnd } from '../support/suite-setup.ts';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startPostgres } from '../support/pg.ts';
import { fileLines, startInBackground, until } from '../support/exec.ts';
import {
  countedSlowApply,
  modules,
  testTerraformEnv,
  withPgBackend,
  type TerraformState,
} from '../support/tf-modules.ts';
import { explain, RUNNER, runRunner, scenario, type Scenario } from '../support/runner.ts';
import { Result } from '../../src/schemas/result.ts';
import { DirStore } from '../../src/store/dir-store.ts';
import { writeArtifact } from '../../src/store/artifact-write.ts';

/** The background runs' process groups, killed if they still run when the file ends. */
const started = groupsKilledAtEnd();

/** The kept errored states in a directory store. */
const keptErrored = async (backups: string) =>
  (await readdir(backups).catch(() => [] as string[])).filter((name) => name.startsWith('errored-'));

describe('an errored state a previous run kept (pg backend)', () => {
  it('the backend goes down mid-apply: the next apply pushes the kept state first, creates nothing twice, and pushes it once', async (t) => {
    const server = await startPostgres(t);
    const connString = await server.createDatabase('tfstate');
    const s = await scenario(t, withPgBackend(modules.base));
    const backendConfig = join(s.dir, 'backend.hcl');
    await writeFile(backendConfig, `conn_str = ${JSON.stringify(connString)}\n`, { mode: 0o600 });
    const args = (op: string) =>
      s.ownBackendArgs(op, ['--backend-config', backendConfig, '--kind', 'machine', '--guard', 'off']);
    const backups = join(s.out, 'backups');

    const first = await runRunner(args('apply'), {}, s);
    assert.equal(first.exitCode, 0, explain(first));
    const lineage = first.result!.state!.lineage!;

    const runs = join(s.dir, 'provisioner-runs');
    await s.useModule(withPgBackend(countedSlowApply(runs, { resources: 2, then: 'sleep 6' })));
    const { child, exited } = await startInBackground(process.execPath, [RUNNER, ...args('apply')], {
      env: testTerraformEnv(),
      mark: '"msg":"apply: started"',
      killAfterMs: 180_000,
    });
    started.push(child);
    // Both provisioners run: the database goes down (every session ends, terraform's lock with it) and
    // stays down until the apply has ended, so neither terraform nor the runner can save what was created.
    await until('both provisioners started', () => fileLines(runs).length === 2);
    await server.pause();
    const outage = await exited;
    assert.equal(outage.exitCode, 1, String(outage.stderr).slice(-3000));
    const failed = Result.parse(JSON.parse(readFileSync(join(s.out, 'result.json'), 'utf8')));
    assert.equal(failed.reason, 'ApplyFailed');
    assert.equal(failed.erroredState?.pushed, false, JSON.stringify(failed.erroredState));
    const keptAt = failed.erroredState!.keptAt!;
    assert.deepEqual(await keptErrored(backups), [keptAt.slice(backups.length + 1)]);
    await server.resume();

    const retry = await runRunner(args('apply'), {}, s);
    assert.equal(retry.exitCode, 0, explain(retry));
    const r = retry.result!;
    assert.deepEqual(fileLines(runs).sort(), ['created 0', 'created 1'], 'no object is created twice');
    assert.equal(r.erroredStatePushed?.from, keptAt, JSON.stringify(r.erroredStatePushed));
    assert.equal(r.erroredStatePushed?.lineage, lineage);
    assert.equal(r.erroredStatePushed?.replacedSerial, first.result!.state!.serialAfter);
    assert.ok(r.erroredStatePushed!.serial > first.result!.state!.serialAfter!);
    assert.ok(r.erroredStatePushed?.backup, 'what it replaced is backed up');
    assert.ok(existsSync(join(backups, r.erroredStatePushed!.backup!.object)));
    // terraform's push writes a state whose content differs from the backend's one serial above it.
    assert.ok(r.state!.serialBefore! >= r.erroredStatePushed!.serial, 'the apply planned against the pushed state');
    const notice = r.notices?.find((n) => n.code === 'ErroredStatePushed');
    assert.ok(notice?.message.includes(keptAt), JSON.stringify(r.notices));
    const names = r.steps.map((step) => step.name);
    assert.ok(
      names.indexOf('state push') < names.indexOf('plan') && names.indexOf('errored state') >= 0,
      names.join(', '),
    );
    const [row] = await server.stateRows('tfstate');
    const state = JSON.parse(row!.data) as TerraformState;
    assert.equal(state.lineage, lineage);
    assert.equal(
      state.resources.find((res) => res.name === 'slow')?.instances.length,
      2,
      'the final state holds everything created',
    );

    // Pushed once: the store holds it no more, and the next run plans against the backend as it is.
    assert.deepEqual(await keptErrored(backups), []);
    const again = await runRunner(args('apply'), {}, s);
    assert.equal(again.exitCode, 0, explain(again));
    assert.equal(again.result!.erroredStatePushed, undefined);
    assert.ok(!again.result!.steps.some((step) => step.name === 'errored state'));
    assert.deepEqual(fileLines(runs).sort(), ['created 0', 'created 1']);
  });
});

/** A kept errored state in the scenario's backup store (the out dir's, as a local run keeps it): `state` as terraform left it. */
async function keepErrored(s: Scenario, state: Record<string, unknown>, name = 'errored-20260101T000000.000Z') {
  const backups = new DirStore(join(s.out, 'backups'));
  await writeArtifact(backups, name, [{ name: 'terraform.tfstate', data: Buffer.from(JSON.stringify(state)) }], {
    kind: 'StateBackup',
    terraformVersion: '1.11.4',
    op: 'apply',
    stateFile: 'terraform.tfstate',
    serial: state.serial as number,
    lineage: state.lineage as string,
  });
  return `${backups.location}/${name}`;
}

describe('an errored state that cannot be pushed safely (local state)', () => {
  const refused = async (t: Parameters<typeof scenario>[0], errored: (state: TerraformState) => TerraformState) => {
    const s = await scenario(t, modules.base);
    const first = await s.run('apply', ['--kind', 'machine', '--guard', 'off']);
    assert.equal(first.exitCode, 0, explain(first));
    const before = readFileSync(s.state, 'utf8');
    const ref = await keepErrored(s, errored(JSON.parse(before) as TerraformState) as never);
    const run = await s.run('drift');
    assert.equal(run.exitCode, 7, explain(run));
    const r = run.result!;
    assert.equal(r.reason, 'ErroredStateUnpushable');
    assert.equal(r.error?.step, 'errored state');
    assert.ok(r.message.includes(ref) && r.message.includes(`captf-runner restore --backup ${ref}`), r.message);
    assert.ok(!r.steps.some((step) => step.name === 'plan'), 'nothing planned');
    assert.equal(readFileSync(s.state, 'utf8'), before, 'the state is as it was');
    assert.deepEqual(await keptErrored(join(s.out, 'backups')), [ref.split('/').pop()], 'the kept state stays');
    return r;
  };

  it('another lineage: refused, nothing planned, the command named', async (t) => {
    const r = await refused(t, (state) => ({ ...state, lineage: '00000000-0000-4000-8000-000000000000', serial: 99 }));
    assert.match(r.message, /its lineage 00000000-0000-4000-8000-000000000000 is not the lineage/);
  });

  it('a serial not above the backend’s: refused (the backend was written since, or it was pushed already)', async (t) => {
    const r = await refused(t, (state) => state);
    assert.match(r.message, /is not above the serial of the state the backend holds/);
  });

  it('restored with the command the refusal names, the kept state leaves the store: the next run plans', async (t) => {
    const s = await scenario(t, modules.base);
    const first = await s.run('apply', ['--kind', 'machine', '--guard', 'off']);
    assert.equal(first.exitCode, 0, explain(first));
    const state = JSON.parse(readFileSync(s.state, 'utf8')) as TerraformState;
    const ref = await keepErrored(s, state as never);
    assert.equal((await s.run('drift')).exitCode, 7);
    const restore = await s.run('restore', ['--backup', ref]);
    assert.equal(restore.exitCode, 0, explain(restore));
    assert.deepEqual(await keptErrored(join(s.out, 'backups')), [], 'the restored errored state is the state now');
    const drift = await s.run('drift');
    assert.equal(drift.exitCode, 0, explain(drift));
    assert.equal(drift.result!.erroredStatePushed, undefined);
  });
});

describe('an errored state a previous run kept (local state)', () => {
  it('is pushed before the plan, and never twice', async (t) => {
    const s = await scenario(t, modules.base);
    const first = await s.run('apply', ['--kind', 'machine', '--guard', 'off']);
    assert.equal(first.exitCode, 0, explain(first));
    const state = JSON.parse(readFileSync(s.state, 'utf8')) as TerraformState & { serial: number };
    const cluster = state.resources.find((res) => res.name === 'cluster')!;
    // What terraform could not save: one more object than the backend knows of.
    const errored = {
      ...state,
      serial: state.serial + 1,
      resources: [...state.resources, { ...cluster, name: 'saved_only_in_errored' }],
    };
    const ref = await keepErrored(s, errored);
    const drift = await s.run('drift');
    assert.equal(drift.exitCode, 0, explain(drift));
    assert.equal(drift.result!.erroredStatePushed?.from, ref);
    assert.equal(drift.result!.erroredStatePushed?.serial, state.serial + 1);
    assert.ok(drift.result!.notices?.some((n) => n.code === 'ErroredStatePushed'));
    const pushed = JSON.parse(readFileSync(s.state, 'utf8')) as TerraformState & { serial: number };
    assert.ok(pushed.resources.some((res) => res.name === 'saved_only_in_errored'));
    assert.equal(drift.result!.state?.serialBefore, pushed.serial, 'the drift plan ran against the pushed state');
    assert.deepEqual(await keptErrored(join(s.out, 'backups')), [], 'pushed once: deleted from the store');

    const again = await s.run('drift');
    assert.equal(again.exitCode, 0, explain(again));
    assert.equal(again.result!.erroredStatePushed, undefined);
    assert.ok(!again.result!.notices?.some((n) => n.code === 'ErroredStatePushed'));
    assert.equal(JSON.parse(readFileSync(s.state, 'utf8')).serial, pushed.serial);
  });
});
