// The human summary printed at the end of a run: what happened, in words and counts.
import { denialMessage } from '../masking/boundary.ts';
import type { ActionCounts, Classification } from '../schemas/classification.ts';
import type { Op, Result } from '../schemas/result.ts';
import { actionText, changeText } from '../plan/actions.ts';
import { denialText, findingText, gateKinds } from '../guard/decide.ts';
import { diagnosticPlace, errorsOf } from '../terraform/known-diagnostics.ts';
import type { TerraformDiagnostic } from '../schemas/result.ts';
import { EXIT } from '../vocabulary/reasons.ts';
import { flagName } from '../schemas/setting-options.ts';
import { printableLine } from './printable.ts';
import { applyPlanArtifact, remediationApply, rerunWithApproval } from './next-commands.ts';

export const countsText = (c: ActionCounts) =>
  `${c.create} to create, ${c.update} to update, ${c.replace} to replace, ${c.delete} to delete, ${c.forget} to forget, ${c.import} to import, ${c.move} to move`;

/** What the summary knows beyond the result: the run's own arguments (masked), for the command to rerun; the masker of its texts. */
export interface SummaryContext {
  argv?: readonly string[];
  /** Masks one line's text (all of it but its label); none: nothing is secret. */
  mask?: (text: string) => string;
}

/**
 * What the summary's lines start with: the runner's own words, never masked. What follows a label is
 * masked as terraform's text is (the op, outcome and reason too: the result keeps those) and escaped
 * to one line, so a secret equal to a word of the runner's ("changed") leaves the summary's shape
 * readable, and no text, whatever it holds, starts a line of its own.
 */
export const SUMMARY_LABELS = [
  'captf-runner ',
  '',
  'terraform error: ',
  'plan: ',
  '  ',
  'destructive changes ',
  'provider actions ',
  'incomplete plan ',
  'the runner cannot fully read the plan: ',
  'denied by the policy ',
  'the policy requires an approval ',
  'applying this plan needs an approval ',
  'approved: ',
  'approved without review ',
  'inputs hash: ',
  'warning: ',
  'changed: ',
  'next: ',
] as const;
type Label = (typeof SUMMARY_LABELS)[number];

export function terraformPlanLine(plan: Classification, op: Op): { line: string; why: string[] } | undefined {
  if (op === 'refresh' || (!plan.hasResourceChanges && !plan.record)) return undefined;
  const c = plan.counts;
  const record = (action: string) => (plan.record?.actions.includes(action) ? 1 : 0);
  const add = c.create + c.replace + record('create');
  const change = c.update + record('update');
  const destroy = c.delete + c.replace + record('delete');
  const why: string[] = [];
  if (c.replace) why.push('it counts each replace as an add and a destroy');
  if (plan.record)
    why.push(
      `it counts the runner's record ${plan.record.address} (${plan.record.actions.join(', ')}), which the runner never counts (README: "The runner's record")`,
    );
  if (c.forget) why.push('terraform 1.11 leaves forgets out of it');
  return {
    line: `Plan: ${c.import ? `${c.import} to import, ` : ''}${add} to add, ${change} to change, ${destroy} to destroy.`,
    why,
  };
}

/** The counts, then terraform's own line for the same plan and why the two differ, when they do. */
export function countsWithTerraformLine(plan: Classification, op: Op): string {
  const terraform = terraformPlanLine(plan, op);
  const own = terraform
    ? `; terraform's own count: "${terraform.line}"${terraform.why.length ? ` (${terraform.why.join('; ')})` : ''}`
    : '';
  return `${countsText(plan.counts)}${plan.hasOutputChanges ? '; outputs change' : ''}${own}`;
}

/** terraform's action_reason for the replace of an object it marked tainted. */
const TAINTED = 'replace_because_tainted';
const TAINTED_TEXT =
  ': tainted, an apply that did not finish (interrupted, or failed) left it half made; the replace finishes that apply';

export function humanSummary(result: Result, context: SummaryContext = {}): string {
  const lines: [Label, string][] = [];
  const add = (label: Label, text: string) => lines.push([label, text]);
  add('captf-runner ', `${result.op}: ${result.outcome} (${result.reason})`);
  if (result.message) add('', result.message);
  const errors = terraformErrors(result);
  for (const { place, summary } of errors.named) add('terraform error: ', place ? `${place}: ${summary}` : summary);
  if (errors.more) add('terraform error: ', `… and ${errors.more} more (error.detail.diagnostics)`);
  const plan = result.plan;
  if (plan) {
    add('plan: ', countsWithTerraformLine(plan, result.op));
    if (plan.destructiveTotal > 0) {
      add('destructive changes ', `(${plan.destructiveTotal}):`);
      for (const d of plan.destructive) add('  ', `${changeText(d)}${d.reason === TAINTED ? TAINTED_TEXT : ''}`);
      if (plan.destructiveTotal > plan.destructive.length)
        add('  ', `… and ${plan.destructiveTotal - plan.destructive.length} more (see the log)`);
    }
    if (plan.actionsTotal > 0) {
      add('provider actions ', `(${plan.actionsTotal}: the runner cannot know what they do):`);
      for (const a of plan.actions)
        add(
          '  ',
          `${actionText(a)}${a.triggeringResource ? ` on ${a.triggeringResource}` : ''}${a.onFailure ? `, on failure ${a.onFailure}` : ''}${a.deferred ? `, deferred (${a.deferredReason})` : ''}`,
        );
      if (plan.actionsTotal > plan.actions.length)
        add('  ', `… and ${plan.actionsTotal - plan.actions.length} more (see the log)`);
    }
    if (plan.partial) {
      add(
        'incomplete plan ',
        `(complete: ${plan.partial.complete}; ${plan.partial.deferredTotal} deferred change${plan.partial.deferredTotal === 1 ? '' : 's'}):`,
      );
      for (const d of plan.partial.deferred)
        add('  ', `${d.address} (${d.action}, deferred: ${d.reason ?? 'no reason given'})`);
    }
    for (const why of plan.failClosed) add('the runner cannot fully read the plan: ', why);
    const policy = plan.policy;
    if (policy?.deniedTotal) {
      add('denied by the policy ', `(${policy.deniedTotal}: no approval can pass it):`);
      // A rule builds its message (up to 100,000 characters): cut as the result cuts it, masked whole first.
      const masker = { mask: context.mask ?? ((text: string) => text) };
      for (const d of policy.denied) add('  ', denialText({ ...d, message: denialMessage(masker, d.message) }));
      if (policy.deniedTotal > policy.denied.length)
        add('  ', `… and ${policy.deniedTotal - policy.denied.length} more`);
    }
    if (policy?.approvalRequiredTotal) {
      add('the policy requires an approval ', `(${policy.approvalRequiredTotal}):`);
      for (const a of policy.approvalRequired) add('  ', findingText(a));
      if (policy.approvalRequiredTotal > policy.approvalRequired.length)
        add('  ', `… and ${policy.approvalRequiredTotal - policy.approvalRequired.length} more`);
    }
    if (needsAnApproval(result)) add('applying this plan needs an approval ', '(plan.gated)');
  }
  const approval = result.approval;
  if (approvalPassed(result))
    add(
      'approved: ',
      `the approval given matched approval hash ${result.approvalHash}, so the plan was applied although it needed one (plan.gated)`,
    );
  if (approval?.unreviewedTotal) {
    const against = approval.blockedRun
      ? `the blocked run of ${approval.blockedRun.finishedAt} did not show`
      : 'no blocked run was found to show them';
    add('approved without review ', `(${approval.unreviewedTotal}: the approval covered them, ${against}):`);
    for (const d of approval.unreviewed ?? []) add('  ', changeText(d));
    const listed = approval.unreviewed?.length ?? 0;
    // approval.unreviewed is bounded too: the log names every one ("approved without review: …").
    if (approval.unreviewedTotal > listed)
      add('  ', `… and ${approval.unreviewedTotal - listed} more (see "approved without review" in the log)`);
  }
  if (result.inputsHash) add('inputs hash: ', result.inputsHash);
  for (const warning of result.warnings) add('warning: ', warning);
  add('changed: ', changedText(result));
  add('next: ', nextStep(result, context));
  const mask = context.mask ?? ((text: string) => text);
  return lines.map(([label, text]) => `${label}${printableLine(mask(text))}\n`).join('');
}

/** The most of terraform's errors the summaries name by place; error.detail.diagnostics holds them all. */
const NAMED_ERRORS = 5;

/** Where each of terraform's errors points (`main.tf:2`, '' for nowhere) and its summary, as error.detail.diagnostics reports them (init's preamble aside); `more`: those not named. */
export function terraformErrors(result: Result): { named: { place: string; summary: string }[]; more: number } {
  const errors = errorsOf((result.error?.detail?.diagnostics ?? []) as TerraformDiagnostic[]);
  return {
    named: errors.slice(0, NAMED_ERRORS).map((d) => ({ place: diagnosticPlace(d), summary: d.summary })),
    more: Math.max(0, errors.length - NAMED_ERRORS),
  };
}

/**
 * Whether the summaries say that applying the plan needs an approval: only where an approval is what
 * the run waits for (a blocked apply, a plan to approve, a drift's remediation), never after the
 * approval matched, never for a denied plan (none passes it), a destroy (never gated) or a refresh
 * (nobody approves one).
 */
export function needsAnApproval(result: Result): boolean {
  const plan = result.plan;
  if (!plan?.gated || plan.policy?.deniedTotal || result.reason === 'PolicyDenied') return false;
  if (result.op === 'apply') return result.outcome === 'blocked';
  return result.op === 'plan' || result.op === 'drift';
}

/** The plan needed an approval and the one given matched it: the run applied (or went on to apply) a gated plan. */
export const approvalPassed = (result: Result) =>
  result.approval?.required === true &&
  result.approval.matched &&
  result.outcome !== 'blocked' &&
  result.reason !== 'PolicyDenied';

function changedText(result: Result): string {
  if (result.applied)
    return result.outcome === 'succeeded' || result.outcome === 'noChanges'
      ? 'yes, terraform apply ran'
      : 'maybe: terraform apply ran (see the state and the log)';
  if (result.mayHaveChanged && result.outcome === 'succeeded') {
    if (result.op === 'restore')
      return "yes: the backup is the backend's newest state (pushed, then read back and checked)";
    if (result.op === 'unlock') return 'yes: the lock was released';
  }
  if (result.mayHaveChanged) return 'maybe: the state may differ from before the run';
  return 'nothing: no infrastructure or state was changed';
}

/** `a`, `a and b`, `a, b and c`. */
const inWords = (items: readonly string[]) =>
  items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;

/** What the run is one of: a Job's (--object: the controller acts next), or a person's on a laptop or in CI. */
const inACluster = (result: Result) => result.object.name !== undefined;

/**
 * What to do next, from the run's own record: its outcome, reason and exit code, what it planned,
 * and where it ran. A command is one the next op accepts (next-commands.ts), said once.
 */
function nextStep(result: Result, context: SummaryContext): string {
  const argv = context.argv;
  switch (result.outcome) {
    case 'succeeded':
    case 'noChanges':
      // Exit 1 on a success: the run did its job, but its result file could not be written (run/finish.ts).
      if (result.exitCode === EXIT.failed)
        return 'the run did its job, but result.json could not be written (the warning above says why), so nothing can read what it did: give the runner a writable --out; the log says what the run did';
      return nextAfterSuccess(result, argv);
    case 'blocked': {
      const what = inWords(result.plan ? gateKinds(result.plan) : []) || 'the plan';
      if (inACluster(result) && result.approveCommand)
        return `review ${what} above; to approve: ${result.approveCommand}`;
      const hash = result.approvalHash ?? '<hash>';
      return `review ${what} above; to apply the plan, run again with the approval: ${argv ? rerunWithApproval(argv, hash) : `the same command with --approved-hash ${hash}`}`;
    }
    case 'interrupted':
      return 'run again once the cause of the stop is gone (a held state lock is named above)';
    case 'invalid':
    case 'failed':
      return nextAfterFailure(result);
  }
}

function nextAfterSuccess(result: Result, argv: readonly string[] | undefined): string {
  if (result.op === 'plan' && result.reason === 'PlanCreated' && result.planArtifact && result.planHash) {
    const artifact = `${result.planArtifact.location}/${result.planArtifact.object}`;
    if (inACluster(result) || !argv)
      return `review the plan above, then approve plan hash ${result.planHash}: the apply of exactly this plan (${artifact}) follows`;
    // A plan of a --state FILE not there yet (a dry run of a first apply): its apply starts the state.
    const startsState = result.state?.serialBefore === null && argv.some((arg) => /^--state(?:=|$)/.test(arg));
    return `review the plan above, then apply exactly this plan: ${applyPlanArtifact(argv, artifact, result.planHash, startsState)}`;
  }
  if (result.op === 'drift' && result.drift?.found) {
    if (result.plan?.policy?.deniedTotal)
      return 'the policy denies a remediation apply (named above): change the module, its inputs or the policy, or the infrastructure back to the state';
    const approval = result.drift.remediationDestructive
      ? ' (it needs an approval: it will be blocked first, and say how to approve)'
      : '';
    if (inACluster(result) || !argv)
      return `to remediate, apply the inputs again${approval}: the controller does when the object's drift action is Remediate`;
    return `to remediate, apply the inputs again${approval}: ${remediationApply(argv)}`;
  }
  return 'nothing: the run did its job';
}

function nextAfterFailure(result: Result): string {
  if (result.reason === 'PolicyDenied')
    return 'change the module, its inputs or the policy (no approval passes a denial), then plan again';
  switch (result.exitCode) {
    case EXIT.usage: {
      if (result.reason === 'UsageInvalid')
        return `fix the command line (captf-runner ${result.op} --help lists its flags), then run again`;
      return 'fix the inputs or flags named above, then run again';
    }
    case EXIT.imageInvalid: {
      const setting = result.error?.detail?.setting;
      if (!inACluster(result) && typeof setting === 'string')
        return `fix ${flagName(setting)} (it names what is wrong above), then run again`;
      return inACluster(result)
        ? 'fix the module or image named above (a new image): a retry with this image fails the same way'
        : 'fix the module named above, then run again';
    }
    case EXIT.planStale:
      return 'make a new plan (and approval): this one can never be applied';
    case EXIT.otherState:
      return "point the run at the object's own state, or restore it from a backup: every retry finds the same until then";
    case EXIT.failed:
      return 'see the error above; a retry can help';
    default:
      return 'see the error above: a retry fails the same way';
  }
}
