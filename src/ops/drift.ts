// drift: a plan against the inputs, nothing applied. What changed outside terraform, and what a
// remediation apply would do (and whether it would need an approval: plan.gated).
import { gateCauses } from '../guard/decide.ts';
import { countsText } from '../output/summary.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding } from '../run/learned.ts';
import { planAndClassify, prepareRoot, removePlanFile } from '../steps/steps.ts';
import { stateBeforeStep } from '../steps/state.ts';

export async function driftOp(ctx: RunContext): Promise<OpEnding> {
  const root = await prepareRoot(ctx);
  try {
    const before = await stateBeforeStep(ctx, root.tf, root.workspace, root.stateBefore);
    // The recorded hash goes back in as it is: the hash is never a difference.
    const { plan, planText } = await planAndClassify(ctx, root, before.recordedInputsHash ?? root.inputs.hashes.inputsHash);
    const found = plan.hasResourceChanges;
    const drift = {
      found,
      outputsOnly: !found && plan.hasOutputChanges,
      resourceDrift: plan.drift,
      resourceDriftTotal: plan.driftTotal,
      remediationDestructive: found && plan.gated,
    };
    // Nothing is applied, so nothing is blocked: what a remediation would need an approval for is said.
    if (plan.gated && !found) ctx.warn(`no resource drift, but applying this plan would need an approval: ${gateCauses(plan).join('; ')}`);
    const learned = { planText, drift };
    if (!found) return { outcome: 'succeeded', reason: 'NoDrift', message: plan.hasOutputChanges ? 'No resource drift; only root outputs differ.' : 'No drift: the infrastructure matches the inputs.', learned };
    return {
      outcome: 'succeeded',
      reason: 'DriftFound',
      message: `Drift found: a remediation apply would ${countsText(plan.counts)}${drift.remediationDestructive ? ` (it needs an approval: ${gateCauses(plan).join('; ')})` : ''}; ${plan.driftTotal} resource instances were reported changed outside terraform.`,
      learned,
    };
  } finally {
    await removePlanFile(root.workspace);
    await root.workspace.dispose();
  }
}
