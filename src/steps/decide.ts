// The `decide` step: the runner's verdict on what the run learned, before anything changes (apply:
// the policy's denial and the guard; plan: the denial; refresh: a refresh-only plan nobody can
// approve; restore: a backup of another state). A refusal fails this step, so `error.step` names a
// step of steps[] whose status says so; the apply it held back is recorded skipped.
import { RunnerError } from '../errors.ts';
import type { RunContext } from '../run/context.ts';

export async function decideStep<T>(ctx: RunContext, body: () => Promise<T> | T, options: { holdsBackApply?: boolean } = {}): Promise<T> {
  try {
    return await ctx.step('decide', async () => body());
  } catch (error) {
    if (options.holdsBackApply && error instanceof RunnerError && error.kind !== 'interrupted') ctx.skip('apply', `refused (${error.reason})`);
    throw error;
  }
}
