// drift: a plan against the inputs, nothing applied. What changed outside terraform, and what a
// remediation apply would do (and whether it would need an approval: plan.gated).
import { deniedText, gateCauses } from '../guard/decide.ts';
import { driftFindings, driftMessage } from '../plan/drift.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding } from '../run/learned.ts';
import { prepareRoot } from '../steps/prepare.ts';
import { planAndClassify, removePlanFile } from '../steps/plan.ts';
import { stateBeforeStep } from '../steps/state.ts';
import { policyStep } from '../steps/policy.ts';
import { noticeOtherInputs } from '../steps/applied-inputs.ts';

export async function driftOp(ctx: RunContext): Promise<OpEnding> {
  const policy = await policyStep(ctx);
  const root = await prepareRoot(ctx);
  try {
    const before = await stateBeforeStep(ctx, { tf: root.tf, workspace: root.workspace, pulling: root.stateBefore });
    noticeOtherInputs(ctx, before.recordedInputsHash, root.inputs.hashes.inputsHash);
    // The recorded hash goes back in as it is: the hash is never a difference. Nothing is applied, so
    // a policy finding is reported (plan.policy, gated), never refused.
    const { plan, planText } = await planAndClassify(ctx, { root, before, recordHash: before.recordedInputsHash ?? root.inputs.hashes.inputsHash, show: { judgement: policy?.judgement({ tool: root.version.flavor }) } });
    const drift = driftFindings(plan);
    // Nothing is applied, so nothing is blocked: what a remediation would need an approval for is said.
    const causes = gateCauses(plan);
    if (causes.length && !drift.found) ctx.warn(`no resource drift, but applying this plan would need an approval: ${causes.join('; ')}`);
    if (plan.policy?.deniedTotal && !drift.found) ctx.warn(`no resource drift, but the policy denies applying this plan: ${deniedText(plan.policy)}`);
    return { outcome: 'succeeded', reason: drift.found ? 'DriftFound' : 'NoDrift', message: driftMessage(plan, drift), learned: { planText, drift } };
  } finally {
    await removePlanFile(root.workspace);
    await root.workspace.dispose();
  }
}
