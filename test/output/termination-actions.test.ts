// The termination message cuts actions[] like destructive[]: actionsOmitted counts what was left out.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compactResult } from '../../src/output/termination.ts';
import { Masker } from '../../src/masking/mask.ts';
import { classifyPlan } from '../../src/plan/classify.ts';
import type { Result } from '../../src/schemas/result.ts';
import { blockedResultOf } from './results.support.ts';

function withActions(count: number): Result {
  const action_invocations = Array.from({ length: count }, (_, i) => ({
    address: `action.aws_lambda_invoke.a${i}`,
    type: 'aws_lambda_invoke',
    lifecycle_action_trigger: {
      triggering_resource_address: 'terraform_data.cluster',
      action_trigger_event: 'BeforeDestroy',
    },
  }));
  const plan = classifyPlan({
    format_version: '1.2',
    applyable: true,
    complete: true,
    errored: false,
    resource_changes: [],
    action_invocations,
  });
  return blockedResultOf(plan);
}

describe('termination message: actionsOmitted', () => {
  it('counts the actions left out of actions[], also in the cut-down forms', () => {
    const parsed = JSON.parse(compactResult(withActions(12), new Masker()));
    assert.equal(parsed.actions.length + parsed.actionsOmitted, 12);
    assert.ok(parsed.actionsOmitted >= 7);
    const cut = JSON.parse(compactResult({ ...withActions(100), message: 'm'.repeat(3000) }, new Masker(), 1500));
    assert.equal(cut.actions.length + cut.actionsOmitted, 100);
  });

  it('is absent when the plan runs no action', () => {
    assert.equal(JSON.parse(compactResult(withActions(0), new Masker())).actionsOmitted, undefined);
  });
});
