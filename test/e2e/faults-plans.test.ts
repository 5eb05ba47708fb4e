// The fault matrix's plans and versions (contract/sections/faults.md): unreadable, errored or
// unknown-format plans are never applied, a state terraform could not save is kept, a plan only a
// newer terraform makes is classified, and an unsupported terraform is refused before anything
// touches state.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stepsRun } from '../support/tf-modules.ts';
import { unpackArtifactDir } from '../support/artifacts.ts';
import {
  checkRun,
  cleanupFake,
  explainFake,
  failedAt,
  fakeScenario,
  type FakeRunOptions,
  runWithFake,
} from './faults.support.ts';

/** A plan document that creates one terraform_data, with the format and status fields a case gives; returns its path. */
async function writeOneCreatePlan(
  path: string,
  fields: { format_version: string; applyable: boolean; complete: boolean; errored: boolean },
): Promise<string> {
  await writeFile(
    path,
    JSON.stringify({
      format_version: fields.format_version,
      terraform_version: '1.11.4',
      planned_values: { root_module: {} },
      resource_changes: [
        {
          address: 'terraform_data.fake',
          mode: 'managed',
          type: 'terraform_data',
          name: 'fake',
          change: { actions: ['create'], before: null, after: {} },
        },
      ],
      configuration: { root_module: {} },
      applyable: fields.applyable,
      complete: fields.complete,
      errored: fields.errored,
      timestamp: new Date().toISOString(),
    }),
  );
  return path;
}

describe('fault matrix: unreadable plans are never applied', { concurrency: 3 }, () => {
  for (const fault of ['truncate', 'invalid-json']) {
    it(`show -json ${fault} → failed/PlanUnreadable, exit 1, apply never runs`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      const run = await runWithFake(s, { fake: { faults: [`show:${fault}`] } });
      checkRun(run, s, { outcome: 'failed', reason: 'PlanUnreadable', kind: 'plan', step: 'show', exit: 1 }, 'show');
    });
  }

  it('an errored plan (errored: true, plan exit 0/2) → failed/PlanErrored, exit 1, apply never runs', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const plan = await writeOneCreatePlan(join(s.dir, 'errored-plan.json'), {
      format_version: '1.2',
      applyable: false,
      complete: false,
      errored: true,
    });
    const run = await runWithFake(s, { fake: { planJson: plan } });
    const result = checkRun(
      run,
      s,
      { outcome: 'failed', reason: 'PlanErrored', kind: 'plan', step: 'show', exit: 1 },
      undefined,
    );
    assert.ok(!stepsRun(run.events).includes('apply'), 'an errored plan is never applied');
    assert.equal(result.applied, false);
  });

  it('a plan of an unknown format_version major is counted destructive (fail closed) → blocked, exit 3, not applied', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const plan = await writeOneCreatePlan(join(s.dir, 'future-plan.json'), {
      format_version: '2.0',
      applyable: true,
      complete: true,
      errored: false,
    });
    const run = await runWithFake(s, { fake: { planJson: plan } });
    const result = checkRun(
      run,
      s,
      { outcome: 'blocked', reason: 'DestructivePlanBlocked', kind: 'blocked', step: 'decide', exit: 3 },
      undefined,
    );
    assert.ok(!stepsRun(run.events).includes('apply'));
    assert.ok(result.plan!.failClosed.length > 0, JSON.stringify(result.plan));
  });

  for (const op of ['drift', 'destroy'] as const) {
    it(`${op}: show -json truncated → PlanUnreadable, nothing applied`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      // destroy needs a state to plan against.
      await writeFile(
        s.fakeState,
        JSON.stringify({
          version: 4,
          terraform_version: '1.11.4',
          serial: 3,
          lineage: 'fault-lineage',
          outputs: {},
          resources: [],
        }),
      );
      const run = await runWithFake(s, {
        op,
        fake: { faults: ['show:truncate'], planActions: op === 'destroy' ? ['delete'] : ['create'] },
      });
      checkRun(run, s, { outcome: 'failed', reason: 'PlanUnreadable', kind: 'plan', step: 'show', exit: 1 }, 'show');
    });
  }
});

describe('errored.tfstate: terraform could not save the state', () => {
  const appliedOutputs = (state: { outputs?: Record<string, unknown> }) => Object.keys(state.outputs ?? {});

  it('the runner pushes it to the backend: erroredState.pushed, the applied state in the backend', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, { fake: { faults: ['apply:errored-state'] } });
    const result = checkRun(run, s, { outcome: 'failed', reason: 'ApplyFailed', step: 'apply', exit: 1 }, 'apply');
    assert.deepEqual(result.erroredState, { pushed: true });
    assert.ok(stepsRun(run.events).includes('state-push'), explainFake(run));
    assert.deepEqual(
      appliedOutputs(JSON.parse(await readFile(s.fakeState, 'utf8'))),
      ['cluster_name'],
      'what the apply did is in the backend now',
    );
    assert.ok(
      result.warnings.some((w) => /pushed it to the backend/.test(w)),
      JSON.stringify(result.warnings),
    );
  });

  it('the backend refuses the push too: it is kept in the backup store, named in the result', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, { fake: { faults: ['apply:errored-state', 'state-push:exit=1'] } });
    const result = checkRun(run, s, { outcome: 'failed', reason: 'ApplyFailed', step: 'apply', exit: 1 }, 'apply');
    assert.equal(result.erroredState?.pushed, false);
    const keptAt = result.erroredState!.keptAt!;
    assert.ok(keptAt.startsWith(join(s.out, 'backups')), keptAt);
    const { files } = await unpackArtifactDir(keptAt);
    assert.deepEqual(
      appliedOutputs(JSON.parse(files['terraform.tfstate']!.toString('utf8'))),
      ['cluster_name'],
      'the kept state holds what the apply did',
    );
  });

  it('a destroy terraform could not save reports it as an apply does: DestroyFailed, erroredState.pushed', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    checkRun(await runWithFake(s), s, { outcome: 'succeeded', reason: 'ApplySucceeded', exit: 0 }, undefined);
    const run = await runWithFake(s, { op: 'destroy', fake: { faults: ['apply:errored-state'] } });
    const result = checkRun(run, s, { outcome: 'failed', reason: 'DestroyFailed', step: 'apply', exit: 1 }, 'apply');
    assert.deepEqual(result.erroredState, { pushed: true });
    assert.ok(stepsRun(run.events).includes('state-push'), explainFake(run));
  });
});

describe('plans only a newer terraform makes', () => {
  // terraform 1.11 cannot plan lifecycle { destroy = false } on a resource; newer ones print
  // ["create","forget"] for a replace that keeps the old object. No delete: nothing to approve.
  it('a create-then-forget replace → applied without approval, counted as a create and a forget', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, { fake: { planActions: ['create', 'forget'] } });
    const result = checkRun(run, s, { outcome: 'succeeded', reason: 'ApplySucceeded', exit: 0 }, undefined);
    assert.ok(stepsRun(run.events).includes('apply'), explainFake(run));
    assert.equal(result.plan!.destructiveTotal, 0);
    assert.deepEqual([result.plan!.counts.create, result.plan!.counts.forget, result.plan!.counts.unknown], [1, 1, 0]);
  });
});

describe('fault matrix: unsupported terraform', { concurrency: 3 }, () => {
  const cases: Array<{ name: string; fake: NonNullable<FakeRunOptions['fake']> }> = [
    { name: 'terraform 1.4.9 (too old)', fake: { version: '1.4.9' } },
    { name: 'terraform 2.0.0 (a new major)', fake: { version: '2.0.0' } },
    { name: 'OpenTofu 1.5.0 (too old)', fake: { version: '1.5.0', faults: ['version:opentofu'] } },
    { name: 'a version that is not semver', fake: { version: 'banana' } },
  ];
  for (const c of cases) {
    it(`${c.name} → invalid/ImageInvalid, exit 4, before anything touches state`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      const run = await runWithFake(s, { fake: c.fake });
      const result = checkRun(run, s, failedAt('version'), 'version');
      assert.deepEqual([...new Set(stepsRun(run.events))], ['version'], 'only version ran');
      assert.match(result.message, /not supported|understands/);
    });
  }
});
