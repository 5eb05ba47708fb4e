// Results as the runner writes them, for the tests of what reads one (the summary, the termination
// message, the masking of a result): the fields every result has, and a plan of many deletes.
import { classifyPlan } from '../../src/plan/classify.ts';
import type { Result } from '../../src/schemas/result.ts';

/** A result with `over` in place of the defaults: a succeeded apply that changed nothing, said nothing. */
export const resultOf = (over: Partial<Result> = {}): Result => ({
  apiVersion: 'runner.captf.io/v1',
  op: 'apply',
  outcome: 'succeeded',
  reason: 'ApplySucceeded',
  message: 'Done.',
  exitCode: 0,
  runnerVersion: '0',
  object: { kind: 'cluster' },
  applied: false,
  mayHaveChanged: false,
  steps: [],
  annotations: {},
  warnings: [],
  startedAt: '',
  finishedAt: '',
  ...over,
});

/** A blocked apply of `plan`: what a result cut down to a termination message starts from. */
export const blockedResultOf = (plan: Result['plan'], over: Partial<Result> = {}): Result =>
  resultOf({ outcome: 'blocked', reason: 'DestructivePlanBlocked', message: 'm', exitCode: 3, plan, ...over });

/** The classification of `count` deletes with long addresses, every one listed. */
export const manyDeletes = (count: number) =>
  classifyPlan(
    {
      format_version: '1.2',
      applyable: true,
      complete: true,
      errored: false,
      resource_changes: Array.from({ length: count }, (_, i) => ({
        address: `terraform_data.resource_with_a_long_name_${i}["key-${i}"]`,
        mode: 'managed',
        type: 'terraform_data',
        name: 'x',
        change: { actions: ['delete'] },
      })),
    },
    { limit: 1000 },
  );
