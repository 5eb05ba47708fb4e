import { commandFailed, planFileArgument, run, type PlanFileRef, type Terraform } from './terraform.ts';

/** Only saved plans are applied: what is applied is always what was classified (refresh too). */
export interface ApplyOptions {
  planFile: PlanFileRef;
  lockTimeout?: string;
}

export const applyArgs = (o: ApplyOptions): string[] => [
  'apply',
  '-input=false',
  '-no-color',
  ...(o.lockTimeout ? [`-lock-timeout=${o.lockTimeout}`] : []),
  planFileArgument(o.planFile).arg,
];

export interface ApplyResult {
  exitCode: number;
}

/** A saved plan that no longer matches the state is stale: marked `detail.stale`. */
export async function apply(tf: Terraform, options: ApplyOptions, failureReason = 'ApplyFailed'): Promise<ApplyResult> {
  const result = await run(tf, 'apply', applyArgs(options), { passFds: planFileArgument(options.planFile).passFds });
  if (result.exitCode !== 0) {
    const error = commandFailed('apply', result, failureReason);
    // terraform refuses a stale saved plan before it changes anything; the caller decides what that means.
    if (/Saved plan is stale/i.test(result.stderrTail) && error.detail) error.detail.stale = true;
    throw error;
  }
  return { exitCode: result.exitCode };
}
