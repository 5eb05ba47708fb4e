// apply: the guarded apply of a saved plan (a gated plan is applied only with an approval of its
// approval hash, contract.md §3), or, with --plan-artifact,
// the apply of exactly the plan a person approved (applyPolicy: Manual).
import type { DestructiveChange, PlannedAction } from '../schemas/classification.ts';
import { RunnerError } from '../errors.ts';
import { approveCommand, blockedMessage, decideApply, ungatedWarnings } from '../guard/decide.ts';
import { shownAction, shownChange } from '../guard/unreviewed.ts';
import { countsText } from '../output/summary.ts';
import type { RunContext } from '../run/context.ts';
import { keepOnFailure, reporting, withLearned, type OpEnding } from '../run/learned.ts';
import { approvalCoverageStep, type DestructiveEntry } from './approval-coverage.ts';
import { applySavedPlan, planAndClassify, prepareRoot } from '../steps/steps.ts';
import { stateBeforeStep } from '../steps/state.ts';
import { isSha256 } from '../util/sha256.ts';

export async function applyOp(ctx: RunContext): Promise<OpEnding> {
  // Loaded only for it: artifact reading (tar) is code a guarded apply never runs, and every Job pays for what loads before terraform starts.
  if (ctx.settings.planArtifact) return (await import('./apply-approved.ts')).applyApprovedPlan(ctx);
  const root = await prepareRoot(ctx);
  const { inputs, workspace, tf } = root;
  try {
    const before = await stateBeforeStep(ctx, tf, workspace, root.stateBefore);

    // Every destructive entry and action, beyond the bounded lists of plan, for what an approval
    // covers (approvalCoverageStep); only an approved hash can match, so only then are they kept.
    const everyDestructive: DestructiveEntry[] = [];
    const collect = isSha256(ctx.settings.approvedHash)
      ? { onDestructive: (d: DestructiveChange) => everyDestructive.push(shownChange(d)), onAction: (a: PlannedAction) => everyDestructive.push(shownAction(a)) }
      : {};
    const { planned, plan, planHash } = await planAndClassify(ctx, root, inputs.hashes.inputsHash, {}, collect);
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
    if (approval.given && !isSha256(ctx.settings.approvedHash))
      ctx.log.warn('the approved hash given is not a sha256 (64 lowercase hex characters): it approves nothing');
    else if (approval.given && !approval.matched && decision.action === 'block')
      ctx.log.warn('the approved hash given is not this run\'s approval hash: it approves nothing');

    switch (decision.action) {
      case 'skip':
        ctx.skip('apply', 'the plan has no changes');
        return { outcome: 'noChanges', reason: 'NoChanges', message: 'The plan has no changes: nothing was applied, and the state already records these inputs.', learned: { approval } };
      case 'block': {
        const command = approveCommand(ctx.settings.kind, ctx.settings.object, ctx.settings.namespace, inputs.hashes.approvalHash);
        ctx.skip('apply', 'blocked: a destructive plan without a matching approval');
        throw withLearned(new RunnerError({ kind: 'blocked', reason: 'DestructivePlanBlocked', step: 'decide', message: blockedMessage(plan, inputs.hashes.approvalHash, command) }), {
          approval,
          approveCommand: command,
          annotations: { 'captf.io/destructive-plan-blocked': inputs.hashes.approvalHash },
        });
      }
      case 'apply': {
        // The guard is off (machines, pools whose exports do not change): what it would gate is said, never blocking.
        if (!decision.approvalRequired && plan.gated) for (const warning of ungatedWarnings(plan, 'applied without an approval (--guard off)')) ctx.warn(warning);
        // An approval names inputs, not a reviewed plan: say what it covers that nobody was shown.
        const coverage = decision.approvalRequired && decision.approvalMatched ? await keepOnFailure({ approval }, () => approvalCoverageStep(ctx, plan, everyDestructive, inputs.hashes.approvalHash)) : {};
        return await reporting({ approval: { ...approval, ...coverage } }, async () => {
          await applySavedPlan(ctx, root, before, planHash);
          return decision.outcome === 'noChanges'
            ? { outcome: 'noChanges', reason: 'NoChanges', message: 'No resource changes: the apply only recorded the inputs hash in the state.' }
            : { outcome: 'succeeded', reason: 'ApplySucceeded', message: `Applied: ${countsText(plan.counts)}.` };
        });
      }
    }
  } finally {
    await workspace.dispose();
  }
}
