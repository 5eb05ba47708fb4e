// apply: the guarded apply of a saved plan (a gated plan is applied only with an approval of its
// approval hash, contract.md §3), or, with --plan-artifact,
// the apply of exactly the plan a person approved (applyPolicy: Manual).
import type { DestructiveChange, PlannedAction, PolicyApprovalRequired } from '../schemas/classification.ts';
import { RunnerError } from '../errors.ts';
import { approveCommand, blockedMessage, decideApply, ungatedWarnings } from '../guard/decide.ts';
import { shownAction, shownChange, shownPolicyFinding } from '../guard/unreviewed.ts';
import { countsText } from '../output/summary.ts';
import type { RunContext } from '../run/context.ts';
import { keepOnFailure, reporting, withLearned, type OpEnding } from '../run/learned.ts';
import { approvalCoverageStep, explainApprovalMismatch, type DestructiveEntry } from './approval-coverage.ts';
import { applySavedPlan, planAndClassify, prepareRoot } from '../steps/steps.ts';
import { stateBeforeStep, stateLineage } from '../steps/state.ts';
import { policyStep, refuseDenied } from '../steps/policy.ts';
import { isSha256 } from '../util/sha256.ts';

export async function applyOp(ctx: RunContext): Promise<OpEnding> {
  // Loaded only for it: artifact reading (tar) is code a guarded apply never runs, and every Job pays for what loads before terraform starts.
  if (ctx.settings.planArtifact) return (await import('./apply-approved.ts')).applyApprovedPlan(ctx);
  const policy = await policyStep(ctx);
  const root = await prepareRoot(ctx);
  const { inputs, workspace, tf } = root;
  try {
    const before = await stateBeforeStep(ctx, tf, workspace, root.stateBefore);

    // Every destructive entry, action and policy finding, beyond the bounded lists of plan, for what
    // an approval covers (approvalCoverageStep); only an approved hash can match, so only then are they kept.
    const everyDestructive: DestructiveEntry[] = [];
    const approvable = isSha256(ctx.settings.approvedHash);
    const collect = approvable
      ? { onDestructive: (d: DestructiveChange) => everyDestructive.push(shownChange(d)), onAction: (a: PlannedAction) => everyDestructive.push(shownAction(a)) }
      : {};
    const judgement = policy?.judgement({
      tool: root.version.flavor,
      ...(approvable && { onApprovalRequired: (finding: PolicyApprovalRequired) => everyDestructive.push(shownPolicyFinding(finding)) }),
    });
    const { planned, plan, planHash, planText } = await planAndClassify(ctx, root, inputs.hashes.inputsHash, {}, { ...collect, judgement });
    // Before the guard: a denied plan is never applied, with or without an approval, and never blocked.
    refuseDenied(plan);
    const decision = decideApply({
      planHasChanges: planned.hasChanges,
      classification: plan,
      guard: ctx.settings.guard === 'on',
      approvedHash: ctx.settings.approvedHash,
      approvalHash: inputs.hashes.approvalHash,
    });
    const approval = {
      given: ctx.settings.approvedHash !== '',
      matched: decision.action === 'apply' && decision.approvalMatched,
      required: decision.action === 'block' || (decision.action === 'apply' && decision.approvalRequired),
    };
    ctx.log.info({ decision }, `decision: ${decision.action}`);
    /** Nothing is applied: the plan waits for an approval of its approval hash. */
    const blocked = (message: string, given: typeof approval) => {
      ctx.skip('apply', 'blocked: a destructive plan without a matching approval');
      return withLearned(new RunnerError({ kind: 'blocked', reason: 'DestructivePlanBlocked', step: 'decide', message }), {
        approval: given,
        approveCommand: approveCommand(ctx.settings.kind, ctx.settings.object, ctx.settings.namespace, inputs.hashes.approvalHash),
        annotations: { 'captf.io/destructive-plan-blocked': inputs.hashes.approvalHash },
      });
    };
    await explainApprovalMismatch(ctx, { ...inputs.hashes, planHash, stateInputsHash: before.recordedInputsHash }, decision.action === 'block');

    // terraform's plan, masked, reaches the result however the apply ends (the Markdown summary shows it).
    return await reporting({ planText }, async (): Promise<OpEnding> => {
      switch (decision.action) {
        case 'skip':
          ctx.skip('apply', 'the plan has no changes');
          return { outcome: 'noChanges', reason: 'NoChanges', message: 'The plan has no changes: nothing was applied, and the state already records these inputs.', learned: { approval } };
        case 'block':
          throw blocked(blockedMessage(plan, inputs.hashes.approvalHash), approval);
        case 'apply': {
          // The guard is off (machines, pools whose exports do not change): what it would gate is said, never blocking.
          if (!decision.approvalRequired && plan.gated) for (const warning of ungatedWarnings(plan, 'applied without an approval (--guard off)')) ctx.warn(warning);
          // An approval names inputs, not a reviewed plan: say what it covers that nobody was shown.
          const { otherState, ...coverage } =
            decision.approvalRequired && decision.approvalMatched ? await keepOnFailure({ approval }, () => approvalCoverageStep(ctx, plan, everyDestructive, inputs.hashes.approvalHash, stateLineage(before))) : {};
          if (otherState) {
            ctx.notice({ code: 'ApprovalOfOtherState', message: otherState });
            throw blocked(`${otherState}. ${blockedMessage(plan, inputs.hashes.approvalHash)}`, { ...approval, matched: false });
          }
          return await reporting({ approval: { ...approval, ...coverage } }, async () => {
            await applySavedPlan(ctx, root, before, planHash);
            return decision.outcome === 'noChanges'
              ? { outcome: 'noChanges', reason: 'NoChanges', message: 'No resource changes: the apply only recorded the inputs hash in the state.' }
              : { outcome: 'succeeded', reason: 'ApplySucceeded', message: `Applied: ${countsText(plan.counts)}.` };
          });
        }
      }
    });
  } finally {
    await workspace.dispose();
  }
}
