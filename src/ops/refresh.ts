// refresh: a refresh-only plan, classified, then applied, then every output. The recorded inputs
// hash is passed back as it is, so a refresh can never change it. Applying a refresh-only plan
// also carries out the module's `moved` blocks and runs the provider actions it lists: a gated
// refresh-only plan (a move that touches the runner's record, an action, content the runner cannot
// read) is refused, as nobody can approve a refresh.
import { RunnerError } from '../errors.ts';
import { actionText, changeText } from '../plan/actions.ts';
import type { Classification } from '../schemas/classification.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding } from '../run/learned.ts';
import { planAndClassify } from '../steps/plan.ts';
import { applySavedPlan } from '../steps/apply.ts';
import { withOpPrelude } from '../steps/prelude.ts';
import { decideStep } from '../steps/decide.ts';
import { noticeOtherInputs } from '../steps/applied-inputs.ts';

/** The moves the refresh carried out (the module's `moved` blocks), as the result's message names them. */
function movesText(plan: Classification): string {
  if (plan.counts.move === 0) return '';
  const listed = plan.drift
    .filter((d) => d.previousAddress !== undefined)
    .map((d) => `${d.previousAddress} → ${d.address}`);
  const more = plan.counts.move - listed.length;
  return `${plan.counts.move} moved (${listed.join(', ')}${more > 0 ? `, … and ${more} more` : ''}); `;
}

export async function refreshOp(ctx: RunContext): Promise<OpEnding> {
  return withOpPrelude(ctx, {}, async ({ root, before }) => {
    noticeOtherInputs(ctx, before.recordedInputsHash, root.inputs.hashes.inputsHash);
    // The recorded hash goes back in as it is: a refresh never changes it.
    const { plan, planHash } = await planAndClassify(ctx, {
      root,
      before,
      recordHash: before.recordedInputsHash ?? root.inputs.hashes.inputsHash,
      plan: { refreshOnly: true },
    });
    await decideStep(ctx, {
      decide: () => {
        if (plan.gated) throw new RunnerError({ kind: 'plan', reason: 'RefreshRefused', message: refusal(plan) });
      },
      holdsBackApply: true,
    });
    // No backup: a refresh changes no infrastructure, and periodic refreshes would push the apply backups out of retention.
    const { outputs, after } = await applySavedPlan(ctx, {
      root,
      before,
      planHash,
      plan,
      failureReason: 'RefreshFailed',
      backup: false,
    });
    const unknown = Object.entries(outputs)
      .filter(([, o]) => !o.known)
      .map(([name]) => name);
    return {
      outcome: 'succeeded',
      reason: 'RefreshSucceeded',
      message: `Refreshed: ${movesText(plan)}${Object.keys(outputs).length} outputs${unknown.length ? ` (${unknown.join(', ')} not known yet)` : ''}; state serial ${before.serial ?? 'none'} → ${after.serial ?? 'none'}.`,
    };
  });
}

/** Why a gated refresh-only plan is refused, and the fix. Nobody can approve a refresh. */
function refusal(plan: Classification): string {
  if (plan.failClosed.length)
    return `the refresh-only plan cannot be read safely (${plan.failClosed.join('; ')}): nothing was applied. Use a terraform version this runner supports.`;
  const problems: string[] = [];
  // The scan already refuses a module that names the record: what is left is the state's doing.
  if (plan.destructiveTotal > 0)
    problems.push(
      `it would change the state beyond a refresh: ${plan.destructive.map((d) => d.why ?? changeText(d)).join('; ')}. The state holds an object where the runner keeps its record (e.g. terraform_data.captf_inputs_hash[0] in a state adopted from plain terraform): move or remove it with terraform state mv / state rm`,
    );
  if (plan.actionsTotal > 0)
    problems.push(
      `it runs provider actions (${plan.actions.map(actionText).join(', ')}${plan.actionsTotal > plan.actions.length ? ` and ${plan.actionsTotal - plan.actions.length} more` : ''}), which only an approved apply may run: remove the -invoke or the action triggers that run them`,
    );
  return `the refresh-only plan does more than refresh, and nobody can approve a refresh: ${problems.join('; ')}. Nothing was applied; run again once that is fixed.`;
}
