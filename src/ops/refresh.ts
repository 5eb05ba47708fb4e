// refresh: a refresh-only plan, classified, then applied, then every output. The recorded inputs
// hash is passed back as it is, so a refresh can never change it. Applying a refresh-only plan
// also carries out the module's `moved` blocks: one that touches the runner's record (the
// classifier fails closed on it) is refused, as nobody can approve a refresh.
import { isDestructive } from '../contract/classification.ts';
import { RunnerError } from '../errors.ts';
import type { RunContext } from './context.ts';
import type { OpEnding, ResultFields } from './run.ts';
import { applySavedPlan, planAndClassify, prepareRoot } from './steps.ts';
import { stateBeforeStep } from './state-steps.ts';

export async function refreshOp(ctx: RunContext, fields: ResultFields): Promise<OpEnding> {
  const root = await prepareRoot(ctx, fields);
  try {
    const before = await stateBeforeStep(ctx, root.tf, root.workspace, fields);
    // The recorded hash goes back in as it is: a refresh never changes it.
    const { plan } = await planAndClassify(ctx, root, fields, before.recordedInputsHash ?? root.inputs.hashes.inputsHash, { refreshOnly: true });
    if (isDestructive(plan)) {
      ctx.skip('apply', 'refused: the refresh-only plan does more than refresh');
      const found = [...plan.destructive.map((d) => d.why ?? `${d.address} (${d.action})`), ...plan.failClosed];
      throw new RunnerError({
        kind: 'plan',
        reason: 'RefreshRefused',
        step: 'decide',
        message: `the refresh-only plan would change the state beyond a refresh: ${found.join('; ')}. Nothing was applied. Fix the module (no moved, removed or import block may touch terraform_data.captf_inputs_hash) and run again.`,
      });
    }
    // No backup: a refresh changes no infrastructure, and periodic refreshes would push the apply backups out of retention.
    await applySavedPlan(ctx, root, before, fields, 'RefreshFailed', { backup: false });
    const outputs = fields.outputs ?? {};
    const unknown = Object.entries(outputs).filter(([, o]) => !o.known).map(([name]) => name);
    return {
      outcome: 'succeeded',
      reason: 'RefreshSucceeded',
      message: `Refreshed: ${Object.keys(outputs).length} outputs${unknown.length ? ` (${unknown.join(', ')} not known yet)` : ''}; state serial ${before.serial ?? 'none'} → ${fields.state?.serialAfter ?? 'none'}.`,
    };
  } finally {
    await root.workspace.dispose();
  }
}
