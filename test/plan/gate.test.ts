// reconcilePlanExit: exit 0 of plan -detailed-exitcode is "no changes" only when neither the
// classification nor the runner's own record (which the classification skips) changes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { reconcilePlanExit } from '../../src/plan/gate.ts';
import { classifyPlan } from '../../src/plan/classify.ts';

const nothing = classifyPlan({
  format_version: '1.2',
  terraform_version: '1.11.4',
  errored: false,
  complete: true,
  applyable: true,
  resource_changes: [],
});

describe("reconcilePlanExit and the runner's record", () => {
  it('exit 0 while the plan sets the record to a hash the state lacks: changes, with a warning naming the record', () => {
    const reconciled = reconcilePlanExit(false, nothing, { recordChanges: true, destroyPlan: false });
    assert.equal(reconciled.hasChanges, true);
    assert.match(reconciled.warning!, /exited 0 \(no changes\), but the plan sets the runner's inputs-hash record/);
  });

  it('exit 0 with the record unchanged: no changes, silently; exit 2: changes, silently', () => {
    assert.deepEqual(reconcilePlanExit(false, nothing, { recordChanges: false, destroyPlan: false }), {
      hasChanges: false,
    });
    assert.deepEqual(reconcilePlanExit(true, nothing, { recordChanges: true, destroyPlan: false }), {
      hasChanges: true,
    });
  });
});
