// The human summary printed at the end of a run: what happened, in words and counts.
import type { ActionCounts, Classification } from '../schemas/classification.ts';
import type { Op, Result } from '../schemas/result.ts';
import { actionText, changeText } from '../plan/actions.ts';
import { denialText, findingText } from '../guard/decide.ts';
import { printableLine } from './printable.ts';

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
  'captf-runner ', '', 'plan: ', '  ', 'destructive changes ', 'provider actions ', 'incomplete plan ', 'the runner cannot fully read the plan: ',
  'denied by the policy ', 'the policy requires an approval ', 'applying this plan needs an approval ', 'approved without review ', 'inputs hash: ', 'warning: ', 'changed: ', 'next: ',
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
  if (plan.record) why.push(`it counts the runner's record ${plan.record.address} (${plan.record.actions.join(', ')}), which the runner never counts (README: "The runner's record")`);
  if (c.forget) why.push('terraform 1.11 leaves forgets out of it');
  return { line: `Plan: ${c.import ? `${c.import} to import, ` : ''}${add} to add, ${change} to change, ${destroy} to destroy.`, why };
}

/** The counts, then terraform's own line for the same plan and why the two differ, when they do. */
export function countsWithTerraformLine(plan: Classification, op: Op): string {
  const terraform = terraformPlanLine(plan, op);
  const own = terraform ? `; terraform's own count: "${terraform.line}"${terraform.why.length ? ` (${terraform.why.join('; ')})` : ''}` : '';
  return `${countsText(plan.counts)}${plan.hasOutputChanges ? '; outputs change' : ''}${own}`;
}

export function humanSummary(result: Result, context: SummaryContext = {}): string {
  const lines: [Label, string][] = [];
  const add = (label: Label, text: string) => lines.push([label, text]);
  add('captf-runner ', `${result.op}: ${result.outcome} (${result.reason})`);
  if (result.message) add('', result.message);
  const plan = result.plan;
  if (plan) {
    add('plan: ', countsWithTerraformLine(plan, result.op));
    if (plan.destructiveTotal > 0) {
      add('destructive changes ', `(${plan.destructiveTotal}):`);
      for (const d of plan.destructive) add('  ', changeText(d));
      if (plan.destructiveTotal > plan.destructive.length) add('  ', `… and ${plan.destructiveTotal - plan.destructive.length} more (see the log)`);
    }
    if (plan.actionsTotal > 0) {
      add('provider actions ', `(${plan.actionsTotal}: the runner cannot know what they do):`);
      for (const a of plan.actions) add('  ', `${actionText(a)}${a.triggeringResource ? ` on ${a.triggeringResource}` : ''}${a.onFailure ? `, on failure ${a.onFailure}` : ''}${a.deferred ? `, deferred (${a.deferredReason})` : ''}`);
      if (plan.actionsTotal > plan.actions.length) add('  ', `… and ${plan.actionsTotal - plan.actions.length} more (see the log)`);
    }
    if (plan.partial) {
      add('incomplete plan ', `(complete: ${plan.partial.complete}; ${plan.partial.deferredTotal} deferred change${plan.partial.deferredTotal === 1 ? '' : 's'}):`);
      for (const d of plan.partial.deferred) add('  ', `${d.address} (${d.action}, deferred: ${d.reason ?? 'no reason given'})`);
    }
    for (const why of plan.failClosed) add('the runner cannot fully read the plan: ', why);
    const policy = plan.policy;
    if (policy?.deniedTotal) {
      add('denied by the policy ', `(${policy.deniedTotal}: no approval can pass it):`);
      for (const d of policy.denied) add('  ', denialText(d));
      if (policy.deniedTotal > policy.denied.length) add('  ', `… and ${policy.deniedTotal - policy.denied.length} more`);
    }
    if (policy?.approvalRequiredTotal) {
      add('the policy requires an approval ', `(${policy.approvalRequiredTotal}):`);
      for (const a of policy.approvalRequired) add('  ', findingText(a));
      if (policy.approvalRequiredTotal > policy.approvalRequired.length) add('  ', `… and ${policy.approvalRequiredTotal - policy.approvalRequired.length} more`);
    }
    // A destroy is never gated: its warnings name the same things.
    if (plan.gated && result.op !== 'destroy') add('applying this plan needs an approval ', '(plan.gated)');
  }
  const approval = result.approval;
  if (approval?.unreviewedTotal) {
    const against = approval.blockedRun ? `the blocked run of ${approval.blockedRun.finishedAt} did not show` : 'no blocked run was found to show them';
    add('approved without review ', `(${approval.unreviewedTotal}: the approval covered them, ${against}):`);
    for (const d of approval.unreviewed ?? []) add('  ', changeText(d));
    const listed = approval.unreviewed?.length ?? 0;
    // approval.unreviewed is bounded too: the log names every one ("approved without review: …").
    if (approval.unreviewedTotal > listed) add('  ', `… and ${approval.unreviewedTotal - listed} more (see "approved without review" in the log)`);
  }
  if (result.inputsHash) add('inputs hash: ', result.inputsHash);
  for (const warning of result.warnings) add('warning: ', warning);
  add('changed: ', changedText(result));
  add('next: ', nextStep(result, context));
  const mask = context.mask ?? ((text: string) => text);
  return lines.map(([label, text]) => `${label}${printableLine(mask(text))}\n`).join('');
}

function changedText(result: Result): string {
  if (result.applied) return result.outcome === 'succeeded' ? 'yes, terraform apply ran' : 'maybe: terraform apply ran (see the state and the log)';
  if (result.mayHaveChanged) return 'maybe: the state may differ from before the run';
  return 'nothing: no infrastructure or state was changed';
}

/**
 * What to do next, by outcome and exit code. A block says how to approve it once: for a Job's object
 * (--object) the kubectl command, else (a laptop, CI) this command again with --approved-hash.
 */
function nextStep(result: Result, context: SummaryContext): string {
  switch (result.outcome) {
    case 'succeeded':
    case 'noChanges':
      return 'nothing: the run did its job';
    case 'blocked': {
      if (result.object.name && result.approveCommand) return `review the destructive changes above; to approve them: ${result.approveCommand}`;
      const hash = result.approvalHash ?? '<hash>';
      return `review the destructive changes above; to apply them, run again with the approval: ${context.argv ? rerunCommand(context.argv, hash) : `the same command with --approved-hash ${hash}`}`;
    }
    case 'interrupted':
      return 'run again once the cause of the stop is gone (a held state lock is named above)';
    case 'invalid':
      return result.exitCode === 4 ? 'fix the module or image named above (a new image), then run again' : 'fix the inputs or flags named above, then run again';
    case 'failed':
      if (result.exitCode === 5) return 'make a new plan (and approval): this one can never be applied';
      if (result.exitCode === 7) return "point the run at the object's own state, or restore it from a backup: a retry finds the same";
      if (result.exitCode === 4) return 'fix the module named above (a new image): a retry fails the same way';
      return 'see the error above; a retry can help';
  }
}

/** The settings that may hold a credential: their values are not repeated. */
const SECRET_FLAGS = new Set(['--backend-config']);

/** This run's command line with `--approved-hash <hash>` in place of any given, each argument shell-quoted. */
export function rerunCommand(argv: readonly string[], hash: string): string {
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--approved-hash') i++;
    else if (arg.startsWith('--approved-hash=')) continue;
    else if (SECRET_FLAGS.has(arg)) (kept.push(arg, '<as before>'), i++);
    else if (SECRET_FLAGS.has(arg.split('=')[0]!)) kept.push(`${arg.split('=')[0]}=<as before>`);
    else kept.push(arg);
  }
  return ['captf-runner', ...kept, '--approved-hash', hash].map(shellQuoted).join(' ');
}

const shellQuoted = (arg: string) => (/^[-\w.,/:=@+%]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);
