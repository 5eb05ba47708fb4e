// Plan policies in a run (contract/sections/policy.md): the policy dir found and compiled before
// anything is planned (an invalid one is ImageInvalid, exit 4), a judgement of each plan the
// classifier feeds as it streams, and the refusal of a denied plan. The CEL chunk is imported only
// when a policy dir exists: without one nothing of it loads.
import { existsSync } from 'node:fs';
import type { Classification, PlanPolicy } from '../schemas/classification.ts';
import { denialMessage } from '../masking/boundary.ts';
import { RunnerError } from '../errors.ts';
import { deniedText } from '../guard/decide.ts';
import type { JudgementOptions, PlanJudgement } from '../policy/index.ts';
import type { RunContext } from '../run/context.ts';

/** Where the image carries its policies; read only when it exists. */
export const DEFAULT_POLICY_DIR = '/captf/policy';

/** The policy dir to read: the one given (--policy, CAPTF_POLICY), which must then be one, else the default when it exists; undefined: no policies. */
function policyDirOf(given: string | undefined): string | undefined {
  if (given !== undefined) return given;
  return existsSync(DEFAULT_POLICY_DIR) ? DEFAULT_POLICY_DIR : undefined;
}

/** A compiled policy dir, ready to judge plans. */
export interface RunPolicy {
  dir: string;
  /** What compiles but may not hold (contract check shows them too). */
  warnings: string[];
  /** A fresh judgement for one plan (an evaluator judges one plan). */
  judgement(options: JudgementOptions): PlanJudgement;
}

/** Loads and compiles the policy dir, if any: every problem of it in one ImageInvalid error; a stop request ends the compile check. */
export async function loadRunPolicy(
  given: string | undefined,
  stopRequested?: () => boolean,
): Promise<RunPolicy | undefined> {
  const dir = policyDirOf(given);
  if (dir === undefined) return undefined;
  const { describeProblem, loadPolicy, planJudgement } = await import('../policy/index.ts');
  const policy = await loadPolicy(dir, { stopRequested });
  return {
    dir,
    warnings: policy.warnings.map(describeProblem),
    judgement: (options) => planJudgement(policy, options),
  };
}

/** The `policy` step of apply, plan and drift: before anything is planned. No step at all without a policy dir. */
export async function policyStep(ctx: RunContext): Promise<RunPolicy | undefined> {
  if (policyDirOf(ctx.settings.policy) === undefined) return undefined;
  return ctx.step('policy', async () => {
    // A signal or the deadline ends the compile check, and an evaluation, at its next slice.
    const stopRequested = () => ctx.stopCause !== undefined;
    const policy = await loadRunPolicy(ctx.settings.policy, stopRequested);
    ctx.log.info({ dir: policy!.dir }, `policy: plans are held to the rules in ${policy!.dir}`);
    for (const warning of policy!.warnings) ctx.log.warn({ dir: policy!.dir }, `policy: ${warning}`);
    const onEvaluationStart = () =>
      ctx.log.info({ dir: policy!.dir }, 'policy: judging the plan, change by change, as terraform show prints it');
    return { ...policy!, judgement: (options) => policy!.judgement({ ...options, stopRequested, onEvaluationStart }) };
  });
}

/**
 * A denied plan is never applied or packed, with or without an approval: PolicyDenied, exit 8.
 * Not a block: an approval cannot pass it, so there is nothing to approve.
 */
export function refuseDenied(ctx: RunContext, plan: Classification): void {
  const policy = plan.policy;
  if (!policy || policy.deniedTotal === 0) return;
  throw new RunnerError({
    kind: 'policy',
    reason: 'PolicyDenied',
    message: `The policy denies this plan: ${deniedInWords(ctx, policy)}. Nothing was applied, and no approval can change that: change the module or its inputs so that the plan keeps to the policy, or change the policy in the image.`,
  });
}

/**
 * The policy's first denials in words, for a run's message: each denial's message (a rule builds it,
 * up to 100,000 characters, and it may quote a secret) masked whole, then cut as the result cuts it.
 */
export function deniedInWords(ctx: RunContext, policy: PlanPolicy): string {
  const denied = policy.denied.map((d) => ({ ...d, message: denialMessage(ctx.masker, d.message) }));
  return deniedText({ ...policy, denied });
}
