// apply: the guarded apply of a saved plan (a gated plan is applied only with an approval of its
// approval hash, contract.md §3), or, with --plan-artifact (apply-artifact.ts),
// the apply of exactly the plan a person approved (applyPolicy: Manual).
import type { Classification } from '../schemas/classification.ts';
import { blockedMessage, decideApply, ungatedWarnings } from '../guard/decide.ts';
import { countsText } from '../output/summary.ts';
import type { InputsHashes } from '../inputs/hash.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding } from '../run/learned.ts';
import {
  blockedError,
  coverApproval,
  destructiveCollector,
  explainApprovalMismatch,
  type ApprovalState,
} from './approval-coverage.ts';
import { planAndClassify } from '../steps/plan.ts';
import { applySavedPlan } from '../steps/apply.ts';
import type { StateSummary } from '../state/summary.ts';
import { stateToReplaceStep } from '../steps/state-planned.ts';
import { withOpPrelude } from '../steps/prelude.ts';
import { policyStep, refuseDenied } from '../steps/policy.ts';
import { decideStep } from '../steps/decide.ts';

export async function applyOp(ctx: RunContext): Promise<OpEnding> {
  // Loaded only for it: artifact reading (tar) is code a guarded apply never runs, and every Job pays for what loads before terraform starts.
  if (ctx.settings.planArtifact) return (await import('./apply-artifact.ts')).applyApprovedPlan(ctx);
  const policy = await policyStep(ctx);
  // The state before is read from the saved plan (steps/state-planned.ts): no pull before the plan, and
  // none at all when nothing is applied; pulled first only to push an errored state a previous run kept.
  return withOpPrelude(ctx, { stateFromPlan: true }, async ({ root, before: pulledFirst }) => {
    const { hashes } = root.inputs;
    const collected = destructiveCollector(ctx);
    const { planned, plan, planHash, planText, before } = await planAndClassify(ctx, {
      root,
      before: pulledFirst,
      recordHash: hashes.inputsHash,
      show: {
        observer: collected.observer,
        judgement: policy?.judgement({ tool: root.version.flavor, ...collected.judgement }),
      },
    });
    // terraform's plan, masked, reaches the result however the apply ends (the Markdown summary shows it).
    ctx.keep({ planText });
    const { decision, approval } = await decideStep(ctx, {
      decide: () => guardDecision(ctx, { plan, hasChanges: planned.hasChanges, hashes, planHash, before }),
      holdsBackApply: true,
    });
    // Kept before the steps that follow: a stop during the approval's comparison still reports the approval that matched.
    ctx.keep({ approval });
    if (decision.action === 'skip') {
      ctx.skip('apply', 'the plan has no changes');
      return {
        outcome: 'noChanges',
        reason: 'NoChanges',
        message: 'The plan has no changes: nothing was applied, and the state already records these inputs.',
      };
    }
    // The guard is off (machines, pools whose exports do not change): what it would gate is said, never blocking.
    if (!decision.approvalRequired && plan.gated)
      for (const warning of ungatedWarnings(plan, 'applied without an approval (--guard off)')) ctx.warn(warning);
    // An approval names inputs, not a reviewed plan: say what it covers that nobody was shown.
    if (decision.approvalRequired && decision.approvalMatched)
      await coverApproval(ctx, { plan, everyDestructive: collected.everyDestructive, hashes, before, approval });
    // The backup is the backend's own state: pulled now, unless it was pulled first.
    const replaced = pulledFirst ?? (await stateToReplaceStep(ctx, { root, planned: before }));
    await applySavedPlan(ctx, { root, before: replaced, planHash, plan, pulledAfterPlan: !pulledFirst });
    return decision.outcome === 'noChanges'
      ? {
          outcome: 'noChanges',
          reason: 'NoChanges',
          message: 'No resource changes: the apply only recorded the inputs hash in the state.',
        }
      : { outcome: 'succeeded', reason: 'ApplySucceeded', message: `Applied: ${countsText(plan.counts)}.` };
  });
}

interface GuardDecisionOptions {
  plan: Classification;
  /** The plan changes something (planned.hasChanges, reconciled with the classification). */
  hasChanges: boolean;
  hashes: InputsHashes;
  planHash: string;
  before: Pick<StateSummary, 'recordedInputsHash'>;
}

/**
 * The decide step of a guarded apply: a denied plan is refused, a gated plan without its approval
 * blocked (explained when the approval given did not match); else apply or skip, and the approval as the result reports it.
 */
async function guardDecision(ctx: RunContext, { plan, hasChanges, hashes, planHash, before }: GuardDecisionOptions) {
  // Before the guard: a denied plan is never applied, with or without an approval, and never blocked.
  refuseDenied(ctx, plan);
  const decision = decideApply({
    planHasChanges: hasChanges,
    classification: plan,
    guard: ctx.settings.guard === 'on',
    approvedHash: ctx.settings.approvedHash,
    approvalHash: hashes.approvalHash,
  });
  const approval: ApprovalState = {
    given: ctx.settings.approvedHash !== '',
    matched: decision.action === 'apply' && decision.approvalMatched,
    required: decision.action === 'block' || (decision.action === 'apply' && decision.approvalRequired),
  };
  ctx.log.info({ decision }, `decision: ${decision.action}`);
  await explainApprovalMismatch(
    ctx,
    { ...hashes, planHash, stateInputsHash: before.recordedInputsHash },
    decision.action === 'block',
  );
  if (decision.action === 'block')
    throw blockedError(ctx, hashes.approvalHash, blockedMessage(plan, hashes.approvalHash), approval);
  return { decision, approval };
}
