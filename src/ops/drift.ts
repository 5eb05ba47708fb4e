// drift: a plan against the inputs, nothing applied. What changed outside terraform, and what a
// remediation apply would do (and whether it would be destructive).
import { isDestructive } from '../contract/classification.ts';
import type { RunContext } from './context.ts';
import type { OpEnding, ResultFields } from './run.ts';
import { planAndClassify, prepareRoot, readStateStep, removePlanFile } from './steps.ts';

export async function driftOp(ctx: RunContext, fields: ResultFields): Promise<OpEnding> {
  const root = await prepareRoot(ctx, fields);
  try {
    const before = await readStateStep(ctx, root.tf, root.workspace, 'state before');
    fields.stateInputsHash = before.recordedInputsHash;
    fields.state = { serialBefore: before.serial, serialAfter: before.serial, lineage: before.lineage };
    // The recorded hash goes back in as it is: the hash is never a difference.
    const { plan, planText } = await planAndClassify(ctx, root, before.recordedInputsHash ?? root.inputs.hashes.inputsHash);
    fields.plan = plan;
    fields.planText = planText;
    const found = plan.hasResourceChanges;
    fields.drift = {
      found,
      outputsOnly: !found && plan.hasOutputChanges,
      resourceDrift: plan.drift,
      resourceDriftTotal: plan.driftTotal,
      remediationDestructive: found && isDestructive(plan),
    };
    if (!found) return { outcome: 'succeeded', reason: 'NoDrift', message: plan.hasOutputChanges ? 'No resource drift; only root outputs differ.' : 'No drift: the infrastructure matches the inputs.' };
    return {
      outcome: 'succeeded',
      reason: 'DriftFound',
      message: `Drift found: ${plan.driftTotal} resources changed outside terraform; a remediation apply would ${fields.drift.remediationDestructive ? 'DELETE OR REPLACE resources' : 'only create or update'}.`,
    };
  } finally {
    await removePlanFile(root.workspace);
    await root.workspace.dispose();
  }
}
