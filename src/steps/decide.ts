// The `decide` step: the runner's verdict on what the run learned, before anything changes (apply:
// the policy's denial and the guard; plan: the denial; refresh: a refresh-only plan nobody can
// approve; restore: a backup of another state). A refusal fails this step, so `error.step` names a
// step of steps[] whose status says so; the apply it held back is recorded skipped.
import { RunnerError } from '../errors.ts';
import type { RunContext } from '../run/context.ts';

export interface DecideStepOptions<T> {
  /** The verdict: what the run goes on with, or the refusal it throws. */
  decide: () => Promise<T> | T;
  /** An apply follows: a refusal records it skipped. */
  holdsBackApply?: boolean;
}

export async function decideStep<T>(ctx: RunContext, { decide, holdsBackApply }: DecideStepOptions<T>): Promise<T> {
  try {
    return await ctx.step('decide', async () => decide());
  } catch (error) {
    if (holdsBackApply && error instanceof RunnerError && error.kind !== 'interrupted')
      ctx.skip('apply', `refused (${error.reason})`);
    throw error;
  }
}
