// Whether a planned apply may run: the destructive-plan guard, as pure functions.
import { timingSafeEqual } from 'node:crypto';
import type { Classification, PlanPolicy, PolicyDenial } from '../schemas/classification.ts';
import { actionText, changeText } from '../plan/actions.ts';
import { classifiedChanges } from '../plan/gate.ts';
import { KIND_RESOURCE, type ObjectKind } from '../object-kind.ts';
import { isSha256 } from '../util/sha256.ts';

/** Constant time, and any malformed value (empty, wrong length, not hex) simply does not match. */
export function hashesEqual(given: string, expected: string): boolean {
  if (!isSha256(given) || !isSha256(expected)) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

export type ApplyDecision =
  /** terraform planned nothing at all: skip the apply step. */
  | { action: 'skip'; outcome: 'noChanges' }
  /** Apply; `outcome` noChanges when only the recorded inputs hash changes. */
  | { action: 'apply'; outcome: 'succeeded' | 'noChanges'; approvalRequired: boolean; approvalMatched: boolean }
  | { action: 'block'; approvalMatched: false };

export interface ApplyDecisionInput {
  /** plan -detailed-exitcode said 2, or the classification says the plan changes something (reconcilePlanExit). */
  planHasChanges: boolean;
  classification: Classification;
  guard: boolean;
  approvedHash: string;
  approvalHash: string;
}

export function decideApply(input: ApplyDecisionInput): ApplyDecision {
  const { classification: plan } = input;
  // An errored plan never gets here: refuseErrored (steps/plan.ts) stops it at show.
  if (!input.planHasChanges) return { action: 'skip', outcome: 'noChanges' };
  const approvalMatched = hashesEqual(input.approvedHash, input.approvalHash);
  const approvalRequired = input.guard && plan.gated;
  if (approvalRequired && !approvalMatched) return { action: 'block', approvalMatched: false };
  return {
    action: 'apply',
    outcome: changesOnlyTheRecord(plan) ? 'noChanges' : 'succeeded',
    approvalRequired,
    approvalMatched,
  };
}

/**
 * The plan changes no resource, no output and runs no action: at most the runner's record of the
 * inputs hash (new inputs that change nothing). Never a gated plan.
 */
export function changesOnlyTheRecord(plan: Classification): boolean {
  return !classifiedChanges(plan);
}

export function approveCommand(
  kind: ObjectKind,
  object: string | undefined,
  namespace: string | undefined,
  hash: string,
): string {
  return `kubectl annotate ${KIND_RESOURCE[kind]} ${object ?? '<name>'} -n ${namespace ?? '<namespace>'} captf.io/approve-destructive-plan=${hash} --overwrite`;
}

/** A bounded list in words: what it lists, and how many more its total counts. */
const listed = (texts: string[], total: number) =>
  `${texts.join(', ') || '(none listed)'}${total > texts.length ? ` and ${total - texts.length} more` : ''}`;

/** At most this many denials are named in a message; plan.policy.denied lists the rest. */
const NAMED_DENIALS = 5;

/** A policy finding in words: the rule, where, and why when the rule failed. */
export const findingText = (f: { rule: string; address?: string; error?: string }) =>
  `${f.rule}${f.address ? ` at ${f.address}` : ''}${f.error ? ` (the rule failed: ${f.error})` : ''}`;

/** A denial in words: the rule, where, and what its message says (what must change instead). */
export const denialText = (d: PolicyDenial) => `${findingText(d)}: ${d.message}`;

/** The policy's denials in words, the first few. */
export function deniedText(policy: PlanPolicy): string {
  const named = policy.denied.slice(0, NAMED_DENIALS).map(denialText);
  const more =
    policy.deniedTotal > named.length ? `; and ${policy.deniedTotal - named.length} more (plan.policy.denied)` : '';
  return `${named.join('; ')}${more}`;
}

/** The policy's requireApproval findings in words. */
const approvalRequiredText = (policy: PlanPolicy) =>
  `policy rules require an approval: ${listed(policy.approvalRequired.map(findingText), policy.approvalRequiredTotal)}`;

/** Why a gated plan needs an approval, one phrase per cause: what it destroys, the actions it runs, what the runner cannot read, what the policy's requireApproval rules found (a denial is no cause: no approval passes it). */
export function gateCauses(plan: Classification): string[] {
  const causes: string[] = [];
  if (plan.destructiveTotal > 0)
    causes.push(`it deletes or replaces: ${listed(plan.destructive.map(changeText), plan.destructiveTotal)}`);
  if (plan.actionsTotal > 0)
    causes.push(
      `it runs provider actions, which the runner cannot judge: ${listed(plan.actions.map(actionText), plan.actionsTotal)}`,
    );
  if (plan.failClosed.length > 0) causes.push(`the runner cannot fully read it: ${plan.failClosed.join('; ')}`);
  if (plan.policy?.approvalRequiredTotal) causes.push(approvalRequiredText(plan.policy));
  return causes;
}

/** What an approval of a gated plan would pass, in a few words each (the summaries' next step): never a denial, which none passes. */
export function gateKinds(plan: Classification): string[] {
  const kinds: string[] = [];
  if (plan.destructiveTotal > 0) kinds.push('the destructive changes');
  if (plan.actionsTotal > 0) kinds.push('the provider actions');
  if (plan.failClosed.length > 0) kinds.push('what the runner cannot read');
  if (plan.policy?.approvalRequiredTotal) kinds.push("the policy's findings");
  return kinds;
}

/** The message of a block: why the plan needs an approval, that nothing was applied, the hash (the command is result.approveCommand, the summary's next step). */
export function blockedMessage(plan: Classification, approvalHash: string): string {
  return `The plan needs an approval: ${gateCauses(plan).join('; ')}. Nothing was applied: an approval of approval hash ${approvalHash} applies it.`;
}

/**
 * The warnings of a gated plan that is applied without an approval (destroy, never gated; an apply
 * with --guard off): every action listed (bounded) and every reason the runner cannot read it.
 */
export function ungatedWarnings(plan: Classification, why: string): string[] {
  const warnings: string[] = [];
  if (plan.actionsTotal > 0)
    warnings.push(
      `${why}: the plan runs provider actions, which the runner cannot judge: ${listed(plan.actions.map(actionText), plan.actionsTotal)}`,
    );
  if (plan.failClosed.length > 0)
    warnings.push(`${why}: the runner cannot fully read the plan: ${plan.failClosed.join('; ')}`);
  if (plan.policy?.approvalRequiredTotal) warnings.push(`${why}: ${approvalRequiredText(plan.policy)}`);
  return warnings;
}
