// refresh: a refresh-only apply, then every output. The recorded inputs hash is passed back as it
// is, so a refresh can never change it.
import type { RunContext } from './context.ts';
import type { OpEnding, ResultFields } from './run.ts';
import { applyStep, prepareRoot } from './steps.ts';
import { stateBeforeStep } from './state-steps.ts';
import { INPUTS_HASH_VARIABLE } from '../workspace/workspace.ts';

export async function refreshOp(ctx: RunContext, fields: ResultFields): Promise<OpEnding> {
  const root = await prepareRoot(ctx, fields);
  const { tf, workspace, inputs } = root;
  try {
    const before = await stateBeforeStep(ctx, tf, workspace, fields);
    // The recorded hash goes back in as it is: a refresh never changes it.
    const vars = { [INPUTS_HASH_VARIABLE]: before.recordedInputsHash ?? inputs.hashes.inputsHash };
    await applyStep(ctx, root, before, fields, { refreshOnly: true, varFiles: workspace.varFiles, vars, lockTimeout: ctx.settings.lockTimeout }, 'RefreshFailed');
    const outputs = fields.outputs ?? {};
    const unknown = Object.entries(outputs).filter(([, o]) => !o.known).map(([name]) => name);
    return {
      outcome: 'succeeded',
      reason: 'RefreshSucceeded',
      message: `Refreshed: ${Object.keys(outputs).length} outputs${unknown.length ? ` (${unknown.join(', ')} not known yet)` : ''}; state serial ${before.serial ?? 'none'} → ${fields.state?.serialAfter ?? 'none'}.`,
    };
  } finally {
    await workspace.dispose();
  }
}
