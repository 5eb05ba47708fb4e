// refresh: a refresh-only apply, then every output. The recorded inputs hash is passed back as it
// is, so a refresh can never change it.
import { apply as terraformApply } from '../terraform/apply.ts';
import type { RunContext } from './context.ts';
import type { OpEnding, ResultFields } from './run.ts';
import { outputsStep, prepareRoot } from './steps.ts';
import { readStateStep, stateBeforeStep } from './state-steps.ts';
import { INPUTS_HASH_VARIABLE } from '../workspace/workspace.ts';

export async function refreshOp(ctx: RunContext, fields: ResultFields): Promise<OpEnding> {
  const root = await prepareRoot(ctx, fields);
  const { tf, workspace, inputs } = root;
  try {
    const before = await stateBeforeStep(ctx, tf, workspace, fields);
    ctx.mutationStarted = true; // a refresh rewrites the state (and root outputs)
    fields.applied = true;
    await ctx.step(
      'apply',
      () =>
        terraformApply(
          tf,
          { refreshOnly: true, varFiles: workspace.varFiles, vars: { [INPUTS_HASH_VARIABLE]: before.recordedInputsHash ?? inputs.hashes.inputsHash }, lockTimeout: ctx.settings.lockTimeout },
          'RefreshFailed',
        ),
      (r) => r.exitCode,
    );
    fields.outputs = await outputsStep(ctx, tf);
    const after = await readStateStep(ctx, tf, workspace, 'state after');
    fields.state = { serialBefore: before.serial, serialAfter: after.serial, lineage: after.lineage };
    fields.stateInputsHash = after.recordedInputsHash;
    const unknown = Object.entries(fields.outputs).filter(([, o]) => !o.known).map(([name]) => name);
    return {
      outcome: 'succeeded',
      reason: 'RefreshSucceeded',
      message: `Refreshed: ${Object.keys(fields.outputs).length} outputs${unknown.length ? ` (${unknown.join(', ')} not known yet)` : ''}; state serial ${before.serial ?? 'none'} → ${after.serial ?? 'none'}.`,
    };
  } finally {
    await workspace.dispose();
  }
}
