// The terraform launches of an apply, counted (BENCHMARKS.md, "Launches beyond the person's steps"):
// the person's steps (init, validate, plan, show, and apply after a change) and only the launches that
// table names and says why: `version`, and, once the decision is to apply, the state pulled before the
// apply (the backup's bytes) and the state after it. The state before the plan is read from the saved
// plan (src/steps/state-planned.ts): no launch. terraform is the real one behind
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
