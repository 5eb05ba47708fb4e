// apply: the guarded apply of a saved plan (a gated plan is applied only with an approval of its
// approval hash, contract.md §3), or, with --plan-artifact,
// the apply of exactly the plan a person approved (applyPolicy: Manual).
import type { PolicyApprovalRequired } from '../schemas/classification.ts';
import type { PlanObserver } from '../plan/observer.ts';
import { RunnerError } from '../errors.ts';
import { approveCommand, blockedMessage, decideApply, ungatedWarnings } from '../guard/decide.ts';
import { shownAction, shownChange, shownPolicyFinding } from '../guard/unreviewed.ts';
import { countsText } from '../output/summary.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding } from '../run/learned.ts';
import { approvalCoverageStep, explainApprovalMismatch, type DestructiveEntry } from './apply-approval.ts';
import { prepareRoot } from '../steps/prepare.ts';
import { planAndClassify } from '../steps/plan.ts';
import { applySavedPlan } from '../steps/apply.ts';
import { stateLineage } from '../steps/state.ts';
import { stateBeforeOp } from '../steps/errored-state.ts';
import { policyStep, refuseDenied } from '../steps/policy.ts';
import { decideStep } from '../steps/decide.ts';
import { isSha256 } from '../util/sha256.ts';

export async function applyOp(ctx: RunContext): Promise<OpEnding> {
  // Loaded only for it: artifact reading (tar) is code a guarded apply never runs, and every Job pays for what loads before terraform starts.
  if (ctx.settings.planArtifact) return (await import('./apply-approved.ts')).applyApprovedPlan(ctx);
  const policy = await policyStep(ctx);
  const root = await prepareRoot(ctx);
  const { inputs, workspace, tf } = root;
  try {
    const before = await stateBeforeOp(ctx, { tf, workspace, pulling: root.stateBefore });

    // Every destructive entry, action and policy finding, beyond the bounded lists of plan, for what
    // an approval covers (approvalCoverageStep); only an approved hash can match, so only then are they kept.
    const everyDestructive: DestructiveEntry[] = [];
    const approvable = isSha256(ctx.settings.approvedHash);
    const coverage: PlanObserver | undefined = approvable
      ? {
          onDestructive: (d) => everyDestructive.push(shownChange(d)),
          onAction: (a) => everyDestructive.push(shownAction(a)),
        }
      : undefined;
    const judgement = policy?.judgement({
      tool: root.version.flavor,
      ...(approvable && {
        onApprovalRequired: (finding: PolicyApprovalRequired) => everyDestructive.push(shownPolicyFinding(finding)),
      }),
    });
    const { planned, plan, planHash, planText } = await planAndClassify(ctx, {
      root,
      before,
      recordHash: inputs.hashes.inputsHash,
      show: { observer: coverage, judgement },
    });

    /** Nothing is applied: the plan waits for an approval of its approval hash (the result says which, and how to give it). */
    const blocked = (message: string, approval: { given: boolean; matched: boolean; required: boolean }) => {
      ctx.keep({
        approval,
        approveCommand: approveCommand(
          ctx.settings.kind,
          ctx.settings.object,
          ctx.settings.namespace,
          inputs.hashes.approvalHash,
        ),
        annotations: { 'captf.io/destructive-plan-blocked': inputs.hashes.approvalHash },
      });
      return new RunnerError({ kind: 'blocked', reason: 'DestructivePlanBlocked', message });
    };

    // terraform's plan, masked, reaches the result however the apply ends (the Markdown summary shows it).
    ctx.keep({ planText });
    const { decision, approval } = await decideStep(ctx, {
      decide: async () => {
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
        await explainApprovalMismatch(
          ctx,
          { ...inputs.hashes, planHash, stateInputsHash: before.recordedInputsHash },
          decision.action === 'block',
        );
        if (decision.action === 'block') throw blocked(blockedMessage(plan, inputs.hashes.approvalHash), approval);
        return { decision, approval };
      },
      holdsBackApply: true,
    });
    // Kept before the steps that follow: a stop during the approval's comparison still reports the approval that matched.
    ctx.keep({ approval });
    switch (decision.action) {
      case 'skip':
        ctx.skip('apply', 'the plan has no changes');
        return {
          outcome: 'noChanges',
          reason: 'NoChanges',
          message: 'The plan has no changes: nothing was applied, and the state already records these inputs.',
        };
      case 'apply': {
        // The guard is off (machines, pools whose exports do not change): what it would gate is said, never blocking.
        if (!decision.approvalRequired && plan.gated)
          for (const warning of ungatedWarnings(plan, 'applied without an approval (--guard off)')) ctx.warn(warning);
        // An approval names inputs, not a reviewed plan: say what it covers that nobody was shown.
        // It covers the state its blocked run planned against, and no other: blocked again (the re-block says its own approval), the approval step failed.
        const otherState = (why: string) => {
          ctx.notice({ code: 'ApprovalOfOtherState', message: why });
          ctx.skip('apply', 'blocked: the approval was given for another state, or nothing records for which');
          return blocked(`${why}. ${blockedMessage(plan, inputs.hashes.approvalHash)}`, {
            ...approval,
            matched: false,
          });
        };
        if (decision.approvalRequired && decision.approvalMatched) {
          const coverage = await approvalCoverageStep(ctx, {
            plan,
            everyDestructive,
            approvalHash: inputs.hashes.approvalHash,
            stateLineage: stateLineage(before),
            inputsHash: inputs.hashes.inputsHash,
            stateInputsHash: before.recordedInputsHash,
            refuseOtherState: otherState,
          });
          ctx.keep({ approval: { ...approval, ...coverage } });
        }
        await applySavedPlan(ctx, { root, before, planHash, plan });
        return decision.outcome === 'noChanges'
          ? {
              outcome: 'noChanges',
              reason: 'NoChanges',
              message: 'No resource changes: the apply only recorded the inputs hash in the state.',
            }
          : { outcome: 'succeeded', reason: 'ApplySucceeded', message: `Applied: ${countsText(plan.counts)}.` };
      }
    }
  } finally {
    await workspace.dispose();
  }
}
