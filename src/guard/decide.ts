// Whether a planned apply may run: the destructive-plan guard, as pure functions.
import { timingSafeEqual } from 'node:crypto';
import { isDestructive, type Classification } from '../contract/classification.ts';
import { changeText } from '../output/change-text.ts';
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
  /** plan -detailed-exitcode said 2. */
  planHasChanges: boolean;
  classification: Classification;
  guard: boolean;
  approvedHash: string;
  approvalHash: string;
}

export function decideApply(input: ApplyDecisionInput): ApplyDecision {
  const { classification: plan } = input;
  // An errored plan never gets here: refuseErrored (ops/steps.ts) stops it at show.
  if (!input.planHasChanges) return { action: 'skip', outcome: 'noChanges' };
  const approvalMatched = hashesEqual(input.approvedHash, input.approvalHash);
  const approvalRequired = input.guard && isDestructive(plan);
  if (approvalRequired && !approvalMatched) return { action: 'block', approvalMatched: false };
  return { action: 'apply', outcome: changesOnlyTheRecord(plan) ? 'noChanges' : 'succeeded', approvalRequired, approvalMatched };
}

/**
 * The plan changes no resource and no output: at most the runner's record of the inputs hash (new
 * inputs that change nothing). Never a plan the classifier failed closed on: that one is destructive.
 */
export function changesOnlyTheRecord(plan: Classification): boolean {
  return !plan.hasResourceChanges && !plan.hasOutputChanges && !isDestructive(plan);
}

export function approveCommand(kind: 'cluster' | 'machine' | 'pool', object: string | undefined, namespace: string | undefined, hash: string): string {
  const resource = kind === 'pool' ? 'terraformmachinepool' : kind === 'machine' ? 'terraformmachine' : 'terraformcluster';
  return `kubectl annotate ${resource} ${object ?? '<name>'} -n ${namespace ?? '<namespace>'} captf.io/approve-destructive-plan=${hash} --overwrite`;
}

/** The message of a block: every destructive address with its action, that nothing was applied, the hash and the command. */
export function blockedMessage(plan: Classification, approvalHash: string, command: string): string {
  const listed = plan.destructive.map(changeText);
  const more = plan.destructiveTotal > listed.length ? ` and ${plan.destructiveTotal - listed.length} more` : '';
  const why = plan.failClosed.length ? ` The plan also counts as destructive because: ${plan.failClosed.join('; ')}.` : '';
  return `The plan deletes or replaces: ${listed.join(', ') || '(none listed)'}${more}.${why} Nothing was applied. To approve inputs hash ${approvalHash}, run: ${command}`;
}
