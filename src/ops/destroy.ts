// destroy: never gated (the object is being deleted: contract.md §3). Against the durable inputs it is given: a destroy
// plan, shown and classified for the record, then applied; what would gate an apply (provider
// actions, content the runner cannot read) is warned about, never blocking. A failed destroy
// leaves the state as terraform left it and the next destroy continues from there.
import { RunnerError } from '../errors.ts';
import { ungatedWarnings } from '../guard/decide.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding } from '../run/learned.ts';
import { planAndClassify } from '../steps/plan.ts';
import { applySavedPlan } from '../steps/apply.ts';
import { stateLineage } from '../steps/state.ts';
import { withOpPrelude } from '../steps/prelude.ts';

export async function destroyOp(ctx: RunContext): Promise<OpEnding> {
  return withOpPrelude(ctx, {}, async ({ root, before }) => {
    if (stateLineage(before) === null) {
      // Never DestroySucceeded: a controller must not take a run pointed at the wrong place for a teardown.
      ctx.skip('plan', 'there is no state');
      return {
        outcome: 'noChanges',
        reason: 'NoStateFound',
        message:
          'Nothing was destroyed: the backend holds no state. If the object has infrastructure, this run was pointed at another place than its state (the backend settings, --state), and all of it is still there.',
      };
    }
    const { planned, plan, planHash, planText } = await planAndClassify(ctx, {
      root,
      before,
      recordHash: before.recordedInputsHash ?? root.inputs.hashes.inputsHash,
      plan: { destroy: true },
    });
    // terraform's plan, masked, reaches the result however the destroy ends.
    ctx.keep({ planText });
    for (const warning of ungatedWarnings(plan, 'destroyed without an approval (a destroy is never gated)'))
      ctx.warn(warning);
    if (!planned.hasChanges) {
      ctx.skip('apply', 'the destroy plan has no changes');
      return {
        outcome: 'noChanges',
        reason: 'DestroySucceeded',
        message: 'Nothing to destroy: the state holds no resources.',
      };
    }
    try {
      await applySavedPlan(ctx, { root, before, planHash, plan, failureReason: 'DestroyFailed' });
    } catch (error) {
      if (!(error instanceof RunnerError) || error.reason !== 'DestroyFailed') throw error;
      // What the failed apply learned (errored.tfstate's fate) the run kept: this error says only what failed.
      throw new RunnerError({
        kind: 'terraform',
        reason: 'DestroyFailed',
        step: error.step,
        message: `the destroy failed part way (${error.message}). What was destroyed is gone from the state; the rest is still there, and the next destroy continues from it once the cause is fixed.`,
        detail: error.detail,
        cause: error,
      });
    }
    return {
      outcome: 'succeeded',
      reason: 'DestroySucceeded',
      message: `Destroyed ${plan.counts.delete} resource instance${plan.counts.delete === 1 ? '' : 's'}.`,
    };
  });
}
