// drift: a plan against the inputs, nothing applied. What changed outside terraform, and what a
// remediation apply would do (and whether it would need an approval: plan.gated).
import { gateCauses } from '../guard/decide.ts';
import { countsText } from '../output/summary.ts';
import type { Classification, ResourceEntry } from '../schemas/classification.ts';
import type { Drift } from '../schemas/result.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding } from '../run/learned.ts';
import { planAndClassify } from '../steps/plan.ts';
import { withOpPrelude } from '../steps/prelude.ts';
import { deniedInWords, policyStep } from '../steps/policy.ts';
import { noticeOtherInputs } from '../steps/applied-inputs.ts';

export async function driftOp(ctx: RunContext): Promise<OpEnding> {
  const policy = await policyStep(ctx);
  return withOpPrelude(ctx, {}, async ({ root, before }) => {
    noticeOtherInputs(ctx, before.recordedInputsHash, root.inputs.hashes.inputsHash);
    // The recorded hash goes back in as it is: the hash is never a difference. Nothing is applied, so
    // a policy finding is reported (plan.policy, gated), never refused.
    const { plan, planText } = await planAndClassify(ctx, {
      root,
      before,
      recordHash: before.recordedInputsHash ?? root.inputs.hashes.inputsHash,
      show: { judgement: policy?.judgement({ tool: root.version.flavor }) },
    });
    const drift = driftFindings(plan);
    // Nothing is applied, so nothing is blocked: what a remediation would need an approval for is said.
    const causes = gateCauses(plan);
    if (causes.length && !drift.found)
      ctx.warn(`no resource drift, but applying this plan would need an approval: ${causes.join('; ')}`);
    if (plan.policy?.deniedTotal && !drift.found)
      ctx.warn(`no resource drift, but the policy denies applying this plan: ${deniedInWords(ctx, plan.policy)}`);
    return {
      outcome: 'succeeded',
      reason: drift.found ? 'DriftFound' : 'NoDrift',
      message: driftMessage(ctx, plan, drift),
      learned: { planText, drift },
    };
  });
}

// What a drift plan says, told apart: objects terraform reported changed outside terraform
// (resource_drift), and changes a remediation apply would make where nothing changed outside, so the
// inputs or the module differ from what the state records. Pure.
/** Addresses named in a message, at most; the result lists the rest. */
const NAMED = 10;

function driftFindings(plan: Classification): Drift {
  const found = plan.hasResourceChanges;
  const outside = new Set(plan.drift.map((d) => d.address));
  // The listed changes only (the classification's bounded list): a change at an address terraform reported drifted puts it back.
  const inputsDiffer = plan.changes.filter(
    (c) => !outside.has(c.address) && !(c.previousAddress !== undefined && outside.has(c.previousAddress)),
  );
  return {
    found,
    outputsOnly: !found && plan.hasOutputChanges,
    resourceDrift: plan.drift,
    resourceDriftTotal: plan.driftTotal,
    inputsDiffer,
    inputsDifferTotal: plan.changesTotal - (plan.changes.length - inputsDiffer.length),
    remediationDestructive: found && plan.gated,
  };
}

const named = (entries: ResourceEntry[], total: number, withActions: boolean) =>
  entries
    .slice(0, NAMED)
    .map((e) => `${e.address}${withActions ? ` (${e.actions.join(', ')})` : ''}`)
    .join(', ') +
  (total > Math.min(entries.length, NAMED) ? ` and ${total - Math.min(entries.length, NAMED)} more` : '');

/** The drift op's message: what changed outside terraform, where the inputs differ from the state, what a remediation would do. */
function driftMessage(ctx: RunContext, plan: Classification, drift: Drift): string {
  if (!drift.found)
    return drift.outputsOnly
      ? 'No resource drift; only root outputs differ.'
      : 'No drift: the infrastructure matches the inputs.';
  const outside = drift.resourceDriftTotal
    ? `changed outside terraform (${drift.resourceDriftTotal}): ${named(drift.resourceDrift, drift.resourceDriftTotal, false)}`
    : 'nothing was reported changed outside terraform';
  const differ = drift.inputsDifferTotal
    ? `the inputs differ from the state (${drift.inputsDifferTotal}: the inputs or the module ask for other values than the state records): ${named(drift.inputsDiffer, drift.inputsDifferTotal, true)}`
    : 'the inputs match the state';
  const causes = gateCauses(plan);
  const approval = drift.remediationDestructive && causes.length ? ` (it needs an approval: ${causes.join('; ')})` : '';
  const denied = plan.policy?.deniedTotal
    ? ` The policy denies a remediation apply, and no approval passes that: ${deniedInWords(ctx, plan.policy)}.`
    : '';
  return `Drift found: ${outside}; ${differ}. A remediation apply would make these changes: ${countsText(plan.counts)}${approval}.${denied}`;
}
