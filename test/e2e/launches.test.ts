// The terraform launches of an apply, counted (BENCHMARKS.md, "Launches beyond the person's steps"):
// the person's steps (init, validate, plan, show, and apply after a change) and only the launches that
// table names and says why: `version`, the state pulled before the plan and, after an apply, the state
// after. terraform is the real one behind test/support/newer-terraform.sh, whose log holds every launch.
// A launch added or taken away fails here until the table says so.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { modules, NEWER_TERRAFORM, newerTerraformEnv, readNewerTerraformLog } from '../support/tf-modules.ts';
import { explain } from '../support/runner.ts';
import { applied, IMAGE } from './apply.support.ts';

/** The launches in the order they started, but for the state pull beside validate: either may start first. */
const launched = async (log: string) => {
  const all = await readNewerTerraformLog(log);
  const beside = all.slice(2, 4).sort();
  return [...all.slice(0, 2), ...beside, ...all.slice(4)];
};

describe('the launches of an apply', () => {
  it("no changes, then one change: the person's steps, version, the state before the plan and the state after the apply", async (t) => {
    const s = await applied(t);
    const run = async (name: string) => {
      const log = join(s.dir, `${name}.log`);
      const r = await s.run('apply', ['--image', IMAGE, '--terraform', NEWER_TERRAFORM], newerTerraformEnv({ log }));
      return { r, launches: await launched(log) };
    };

    const unchanged = await run('unchanged');
    assert.equal(unchanged.r.exitCode, 0, explain(unchanged.r));
    assert.equal(unchanged.r.result!.outcome, 'noChanges');
    // 'state' is `state pull`: the state before, beside validate.
    assert.deepEqual(unchanged.launches, ['version', 'init', 'state', 'validate', 'plan', 'show']);

    await s.useModule(modules.update);
    const changed = await run('changed');
    assert.equal(changed.r.exitCode, 0, explain(changed.r));
    assert.equal(changed.r.result!.outcome, 'succeeded');
    // The state after: its serial, its record and the outputs (no `output -json`).
    assert.deepEqual(changed.launches, ['version', 'init', 'state', 'validate', 'plan', 'show', 'apply', 'state']);
    const { serialBefore, serialAfter } = changed.r.result!.state!;
    assert.ok(serialAfter! > serialBefore!, `serial ${serialBefore} → ${serialAfter}: the state after is read`);
  });
});
