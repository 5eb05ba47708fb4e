import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { classifyPlan } from '../../src/plan/classify.ts';
import { refuseErrored } from '../../src/steps/plan.ts';
import { resourceChange, planDocument } from '../plan/plans.support.ts';

const planDoc = (errored: boolean) =>
  planDocument({ errored, resource_changes: [resourceChange('terraform_data.r0', ['create'])] });

describe('steps: refuseErrored', () => {
  it('an errored plan is refused before any decision, even when approved', () => {
    assert.throws(() => refuseErrored(classifyPlan(planDoc(true))), /PlanErrored|errored/);
    refuseErrored(classifyPlan(planDoc(false)));
  });
});
