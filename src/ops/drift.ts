// drift: a plan against the inputs, nothing applied. What changed outside terraform, and what a
// remediation apply would do (and whether it would need an approval: plan.gated).
import { gateCauses } from '../guard/decide.ts';
import { driftFindings, driftMessage } from '../plan/drift.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding, ResultFields } from '../run/finish.ts';
import { planAndClassify, prepareRoot, removePlanFile } from '../steps/steps.ts';
import { stateBeforeStep } from '../steps/state.ts';

export async function driftOp(ctx: RunContext, fields: ResultFields): Promise<OpEnding> {
  const root = await prepareRoot(ctx, fields);
  try {
    const before = await stateBeforeStep(ctx, root.tf, root.workspace, fields);
    // The recorded hash goes back in as it is: the hash is never a difference.
    const { plan, planText } = await planAndClassify(ctx, root, fields, before.recordedInputsHash ?? root.inputs.hashes.inputsHash);
    fields.planText = planText;
    const drift = (fields.drift = driftFindings(plan));
    const found = drift.found;
    // Nothing is applied, so nothing is blocked: what a remediation would need an approval for is said.
    if (plan.gated && !found) ctx.warn(`no resource drift, but applying this plan would need an approval: ${gateCauses(plan).join('; ')}`);
    return { outcome: 'succeeded', reason: found ? 'DriftFound' : 'NoDrift', message: driftMessage(plan, drift) };
  } finally {
    await removePlanFile(root.workspace);
    await root.workspace.dispose();
  }
}
