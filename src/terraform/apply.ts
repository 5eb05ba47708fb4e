import { failure, planFileArgument, type PlanFileRef, type Terraform, type TerraformFailed } from './terraform.ts';

/** Only saved plans are applied: what is applied is always what was classified (refresh too). */
export interface ApplyOptions {
  planFile: PlanFileRef;
  lockTimeout?: string;
  /** The values a saved plan does not hold: those of ephemeral variables (terraform 1.10+). */
  varFiles?: readonly string[];
}

export const applyArgs = (o: ApplyOptions): string[] => [
  'apply',
  '-input=false',
  '-no-color',
  ...(o.lockTimeout ? [`-lock-timeout=${o.lockTimeout}`] : []),
  ...(o.varFiles ?? []).map((file) => `-var-file=${file}`),
  planFileArgument(o.planFile).arg,
];

/**
 * What an apply came to, short of a failure (thrown). A stale saved plan is an outcome of its own:
 * terraform refuses it before it changes anything, and what that means is the caller's to say;
 * `failure` is how it reads as an ordinary failure of the apply.
 */
export type ApplyResult =
  | { outcome: 'applied'; exitCode: number }
  | { outcome: 'stalePlan'; exitCode: number; failure: TerraformFailed };

export type ApplyFailure = 'ApplyFailed' | 'RefreshFailed' | 'DestroyFailed';

export interface ApplyRunOptions {
  /** What a failed apply is called for the op that runs it (ApplyFailed without it). */
  failureReason?: ApplyFailure;
  /** Told once terraform's apply process exists: from then on it may change things. */
  onStart?: () => void;
}

export async function apply(
  tf: Terraform,
  options: ApplyOptions,
  { failureReason = 'ApplyFailed', onStart }: ApplyRunOptions = {},
): Promise<ApplyResult> {
  const run = await tf.run('apply', applyArgs(options), {
    passFds: planFileArgument(options.planFile).passFds,
    ...(onStart && { onStart }),
  });
  if (run.meaning === 'ok') return { outcome: 'applied', exitCode: run.exitCode };
  const failed = failure(run, failureReason);
  if (failed.diagnosis.problem.kind === 'stalePlan')
    return { outcome: 'stalePlan', exitCode: run.exitCode, failure: failed };
  throw failed;
}
