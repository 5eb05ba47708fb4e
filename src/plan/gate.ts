// Whether applying a plan needs an approval: the one definition, read by the guarded apply, drift,
// plan, refresh, classify and every output that says so. Pure.
import type { Classification } from '../schemas/classification.ts';

/** What the gate reads of a classification. */
export type GateFacts = Pick<Classification, 'destructiveTotal' | 'actionsTotal' | 'failClosed' | 'policy'>;

/** What the plan holds needs an approval: it deletes or replaces something, it runs a provider action (the runner cannot know what one does), or it holds something the runner cannot read (failClosed). */
const contentNeedsApproval = (plan: GateFacts): boolean =>
  plan.destructiveTotal > 0 || plan.actionsTotal > 0 || plan.failClosed.length > 0;

/** A policy rule or limit matched: requireApproval, or a denial (a denied plan is never applied; nothing that reads `gated` may take it as harmless). */
const policyMatched = (plan: Pick<Classification, 'policy'>): boolean =>
  (plan.policy?.approvalRequiredTotal ?? 0) + (plan.policy?.deniedTotal ?? 0) > 0;

/** Applying the plan needs an approval: what it holds (above), or a policy match. */
export const needsApproval = (plan: GateFacts): boolean => contentNeedsApproval(plan) || policyMatched(plan);

/**
 * The classification says the plan changes something: a resource, an output, an action, or content
 * it cannot read. A policy match is not a change (a rule may match a no-op).
 */
export const classifiedChanges = (plan: Classification): boolean =>
  plan.hasResourceChanges || plan.hasOutputChanges || contentNeedsApproval(plan);

/**
 * `plan -detailed-exitcode` and the classification can disagree (a wrapper, a buggy build): the one
 * that means more change wins, so a plan classified as changing something is never "no changes".
 * Exit 2 with nothing classified is ordinary (only the runner's record changes): not worth a warning.
 * The classification skips the runner's record, so `facts.recordChanges` says what the plan does to it:
 * the plan sets the record to a hash the state does not hold yet. Exit 0 then is not "the state
 * already records these inputs": the plan is applied, and records them.
 */
export function reconcilePlanExit(
  exitSaysChanges: boolean,
  plan: Classification,
  facts: { recordChanges: boolean; destroyPlan: boolean },
): { hasChanges: boolean; warning?: string } {
  if (exitSaysChanges) return { hasChanges: true };
  if (classifiedChanges(plan))
    return {
      hasChanges: true,
      warning:
        'terraform plan -detailed-exitcode exited 0 (no changes), but the plan document it saved changes something: the runner goes by the plan document, so this plan is treated as changing something' +
        // A destroy is never gated: there the plan only changes something.
        (plan.gated && !facts.destroyPlan ? ' and needs an approval' : ''),
    };
  if (facts.recordChanges)
    return {
      hasChanges: true,
      warning:
        "terraform plan -detailed-exitcode exited 0 (no changes), but the plan sets the runner's inputs-hash record to a hash the state does not record yet: this plan is treated as changing that record",
    };
  return { hasChanges: false };
}
