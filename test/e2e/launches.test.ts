// The terraform launches of an apply and of a plan, counted (bench/launches.md, "Launches beyond the
// person's steps"): the person's steps (init, validate, plan, show, and apply after a change) and only the
// launches that table names and says why: `version`, and, once the decision is to apply, the state pulled
// before the apply (the backup's bytes) and the state after it. The state before the plan is read from
// the saved plan (src/steps/state-planned.ts): no launch. terraform is the real one behind
// test/support/newer-terraform.sh, whose log holds every launch, in the order they started.
// A launch added or taken away fails here until the table says so.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  modules,
  NEWER_TERRAFORM,
  newerTerraformEnv,
  readLocalState,
  readNewerTerraformLog,
} from '../support/tf-modules.ts';
import { explain } from '../support/runner.ts';
import { unpackArtifactDir } from '../support/artifacts.ts';
import { applied, IMAGE } from './apply.support.ts';

describe('the launches of an apply', () => {
  it("no changes, then one change: the person's steps, version, the state before the plan and the state after the apply", async (t) => {
    const s = await applied(t);
    const run = async (name: string) => {
      const log = join(s.dir, `${name}.log`);
      const r = await s.run('apply', ['--image', IMAGE, '--terraform', NEWER_TERRAFORM], newerTerraformEnv({ log }));
      return { r, launches: await readNewerTerraformLog(log) };
    };

    const unchanged = await run('unchanged');
    assert.equal(unchanged.r.exitCode, 0, explain(unchanged.r));
    assert.equal(unchanged.r.result!.outcome, 'noChanges');
    // Nothing applied: no `state pull` at all, and the result still names the state, read from the saved plan.
    assert.deepEqual(unchanged.launches, ['version', 'init', 'validate', 'plan', 'show']);
    const held = await readLocalState(s.state);
    assert.deepEqual(unchanged.r.result!.state, {
      serialBefore: held.serial,
      serialAfter: held.serial,
      lineage: held.lineage,
    });

    await s.useModule(modules.update);
    const changed = await run('changed');
    assert.equal(changed.r.exitCode, 0, explain(changed.r));
    assert.equal(changed.r.result!.outcome, 'succeeded');
    // 'state' is `state pull`: the state the apply replaces (the backup's bytes), then the state after: its
    // serial, its record and the outputs (no `output -json`).
    assert.deepEqual(changed.launches, ['version', 'init', 'validate', 'plan', 'show', 'state', 'apply', 'state']);
    const { serialBefore, serialAfter } = changed.r.result!.state!;
    assert.ok(serialAfter! > serialBefore!, `serial ${serialBefore} → ${serialAfter}: the state after is read`);
  });
});

describe('the launches of a plan', () => {
  it("a plan Job (applyPolicy Manual) with a change: the person's steps up to show, and version; the artifact bound to the state the plan names", async (t) => {
    const s = await applied(t);
    await s.useModule(modules.update);
    const log = join(s.dir, 'plan.log');
    const artifacts = join(s.dir, 'artifacts');
    const r = await s.run(
      'plan',
      ['--image', IMAGE, '--terraform', NEWER_TERRAFORM, '--artifacts', artifacts],
      newerTerraformEnv({ log }),
    );
    assert.equal(r.exitCode, 0, explain(r));
    assert.equal(r.result!.reason, 'PlanCreated');
    // No `state pull` at all: the state before, its lineage in the artifact included, is read from the saved plan.
    assert.deepEqual(await readNewerTerraformLog(log), ['version', 'init', 'validate', 'plan', 'show']);
    const held = await readLocalState(s.state);
    assert.deepEqual(r.result!.state, { serialBefore: held.serial, serialAfter: held.serial, lineage: held.lineage });
    const { manifest } = await unpackArtifactDir(r.result!.planArtifact!.ref);
    assert.equal(manifest.stateLineage, held.lineage);
  });
});
