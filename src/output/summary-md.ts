// The Markdown summary for CI (--summary-md FILE, e.g. $GITHUB_STEP_SUMMARY): a sink that takes the
// finished result, appends (GitHub collects what every step appends) and never decides anything. An
// op's summary is built from the masked result (and the masked command line), like every byte the
// runner writes; the Markdown escaping comes after the masking, so no escaped form of a secret can
// slip past it. classify's summary holds no value at all: addresses, actions and replace_paths only.
import type { Classification, DestructiveChange } from '../schemas/classification.ts';
import type { Result } from '../schemas/result.ts';
import { actionText, wasText } from '../plan/actions.ts';
import { denialText, findingText, gateCauses } from '../guard/decide.ts';
import { maskValue, type Masker } from '../masking/mask.ts';
import { printable, printableLine } from './printable.ts';
import { maskResult } from '../masking/mask-result.ts';
import { CUTS, MASKED_WHOLE, maskThenCut } from '../masking/boundary.ts';
import { approvalPassed, countsText, countsWithTerraformLine, needsAnApproval, terraformErrors } from './summary.ts';
import { applyPlanArtifact, remediationApply, rerunWithApproval } from './next-commands.ts';

/** Entries listed per table; the result (and the log) has them all. */
const LISTED = 50;

export interface SummaryPlaces {
  /** Where result.json was written. */
  resultFile?: string;
  /** The command line of this run (argv after the program), to say exactly what to run next. */
  argv?: readonly string[];
}

/**
 * GitHub's step summaries take 1 MiB at most (GITHUB_STEP_SUMMARY): a summary above this many bytes
 * leaves out the plan's text, then its last lines, and says so. Below 1 MiB by a margin for the
 * line that says what was left out.
 */
export const SUMMARY_LIMIT = 1_000_000;
/** Characters of one text (a message, an address, a warning) shown at most: the result and the log have them whole. */
const TEXT_LIMIT = CUTS.summaryText;

/** `text` cut to TEXT_LIMIT characters, saying how many it left out: cut at the boundary, after it was masked whole (the result is masked before any summary is built). */
const bounded = (text: string) =>
  maskThenCut(MASKED_WHOLE, text, TEXT_LIMIT, (leftOut) => `… (${leftOut} more characters: see the result)`);

/** One line of text: its line breaks (CR alone too: Markdown ends a line there) as spaces, every other control character escaped. */
const oneLine = (text: string) => printableLine(bounded(text).replace(/\r\n|[\r\n\u2028\u2029]/g, ' '));

/**
 * A word (between white space) GitHub could turn into a link (its autolinks: `http://`, `https://`,
 * `ftp://`, `www.`, an e-mail address, `mailto:`/`xmpp:`, an @mention): shown as code, which never links.
 */
const LINKISH = /:\/\/|www\.|@/i;

/** Markdown text with every character that could format, link or open HTML escaped, and every word that could autolink as code; one line whatever it holds. */
const mdText = (text: string): string =>
  oneLine(text).replace(/\S+/g, (word) => (LINKISH.test(word) ? codeSpan(word, true) : escapeMarkdown(word)));

const escapeMarkdown = (text: string) =>
  text.replace(/[\\`*_{}[\]<>#+!|~&]/g, (c) =>
    c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '&' ? '&amp;' : `\\${c}`,
  );

/** Inline code that no backtick in the text ends early; in a table cell, `|` is escaped too (GitHub splits cells on it even in code). */
export function mdCode(text: string, inTable = false): string {
  return codeSpan(oneLine(text), inTable);
}

function codeSpan(body: string, inTable: boolean): string {
  const longest = Math.max(0, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const padded = body.startsWith('`') || body.endsWith('`') ? ` ${body} ` : body;
  return `${fence}${inTable ? padded.replace(/\|/g, '\\|') : padded}${fence}`;
}

/** A fenced block that no line of the text closes early: its lines end at newlines only (a CR is escaped, as every control character is). */
function mdBlock(text: string, info = ''): string {
  const body = printable(text);
  const longest = Math.max(2, ...[...body.matchAll(/^\s*(`{3,}|~{3,})/gm)].map((m) => m[1]!.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${info}\n${body.replace(/\n$/, '')}\n${fence}`;
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
const more = (total: number, listed: number, where: string) =>
  total > listed ? [`… and ${total - listed} more (${where})`, ''] : [];

function destructiveTable(
  plan: Pick<Classification, 'destructive' | 'destructiveTotal'>,
  withReason: boolean,
): string[] {
  if (plan.destructiveTotal === 0) return [];
  const head = withReason
    ? '| Change | Address | Reason | Forces replacement |\n| --- | --- | --- | --- |'
    : '| Change | Address | Forces replacement |\n| --- | --- | --- |';
  const row = (d: DestructiveChange) => {
    const paths = d.replacePaths?.map((path) => mdCode(JSON.stringify(path), true)).join(', ') || '–';
    const address = mdCode(
      d.address + (d.deposed ? ` (deposed ${d.deposed})` : '') + (d.previousAddress ? ` (${wasText(d)})` : ''),
      true,
    );
    return withReason
      ? `| ${d.action} | ${address} | ${mdText(d.why ?? d.reason ?? '–')} | ${paths} |`
      : `| ${d.action} | ${address} | ${paths} |`;
  };
  const rows = plan.destructive.slice(0, LISTED);
  return [
    `**Deletes or replaces (${plan.destructiveTotal})**`,
    '',
    head,
    ...rows.map(row),
    '',
    ...more(plan.destructiveTotal, rows.length, 'see the result and the log'),
  ];
}

function actionsList(plan: Pick<Classification, 'actions' | 'actionsTotal'>): string[] {
  if (plan.actionsTotal === 0) return [];
  const rows = plan.actions
    .slice(0, LISTED)
    .map((a) => `- ${mdCode(actionText(a))}${a.triggeringResource ? ` on ${mdCode(a.triggeringResource)}` : ''}`);
  return [
    `**Provider actions (${plan.actionsTotal}: the runner cannot know what they do)**`,
    '',
    ...rows,
    '',
    ...more(plan.actionsTotal, rows.length, 'see the result'),
  ];
}

function changesList(plan: Pick<Classification, 'changes' | 'changesTotal'>): string[] {
  if (plan.changesTotal === 0) return [];
  const rows = plan.changes
    .slice(0, LISTED)
    .map(
      (c) =>
        `- ${mdCode(c.address)} (${c.actions.map(mdText).join(', ')})${c.previousAddress ? ` from ${mdCode(c.previousAddress)}` : ''}`,
    );
  return [
    '<details><summary>Every change (' + plan.changesTotal + ')</summary>',
    '',
    ...rows,
    ...more(plan.changesTotal, rows.length, 'see the result'),
    '',
    '</details>',
    '',
  ];
}

/** What to run next, exactly, as the human summary's `next:` says it: approve or apply a block, apply an approved plan, remediate drift. */
function nextCommands(result: Result, argv: readonly string[] | undefined): string[] {
  const lines: string[] = [];
  const block = (title: string, command: string) => lines.push(title, '', mdBlock(command, 'sh'), '');
  if (result.outcome === 'blocked' && result.approvalHash) {
    // The kubectl form names the object of a Job: a run without --object has none to annotate.
    if (result.approveCommand && result.object.name) block('**To approve** (in the cluster):', result.approveCommand);
    if (argv) block('**To apply it here once reviewed:**', rerunWithApproval(argv, result.approvalHash));
  }
  if (result.op === 'plan' && result.reason === 'PlanCreated' && result.planArtifact && result.planHash && argv)
    block(
      '**To apply this plan once reviewed:**',
      applyPlanArtifact(argv, `${result.planArtifact.location}/${result.planArtifact.object}`, result.planHash),
    );
  if (result.op === 'drift' && result.drift?.found && !result.plan?.policy?.deniedTotal && argv)
    block(
      result.drift.remediationDestructive
        ? '**To remediate** (it needs an approval first: this apply is blocked and says how to approve):'
        : '**To remediate:**',
      remediationApply(argv),
    );
  return lines;
}

function places(result: Result, resultFile: string | undefined): string[] {
  const rows: string[] = [];
  if (resultFile) rows.push(`- result: ${mdCode(resultFile)}`);
  if (result.backup)
    rows.push(`- backup of the state before the run: ${mdCode(`${result.backup.location}/${result.backup.object}`)}`);
  if (result.planArtifact)
    rows.push(
      `- plan artifact: ${mdCode(`${result.planArtifact.location}/${result.planArtifact.object}`)} (plan hash ${mdCode(result.planHash ?? '')})`,
    );
  if (result.erroredState?.keptAt)
    rows.push(`- the state terraform could not save: ${mdCode(result.erroredState.keptAt)}`);
  if (result.killedApply) {
    const { marker, startedAt, addresses, addressesLeftOut } = result.killedApply;
    const more = addressesLeftOut ? ` and up to ${addressesLeftOut} more` : '';
    rows.push(
      `- objects a killed apply (started ${startedAt}, marker ${mdCode(marker)}) may have left outside the state: ${addresses.length ? addresses.map((a) => mdCode(a)).join(', ') : 'none listed'}${more}`,
    );
  }
  return rows.length ? ['**Where**', '', ...rows, ''] : [];
}

/** The summary of an op's finished result, masked. */
export function opSummaryMarkdown(unmasked: Result, masker: Masker, where: SummaryPlaces = {}): string {
  const result = maskResult(masker, unmasked);
  const argv = where.argv?.map((word) => masker.mask(word));
  const resultFile = where.resultFile === undefined ? undefined : masker.mask(where.resultFile);
  const planText = result.planText;
  const lines = summaryLines(result, masker, argv, resultFile);
  const full = [...lines, ...(planText ? planTextLines(mdBlock(planText)) : [])];
  if (Buffer.byteLength(full.join('\n')) < SUMMARY_LIMIT) return full.join('\n') + '\n';
  const leftOut = planText
    ? [
        "terraform's plan (masked) is left out: with it this summary is over GitHub's 1 MiB; the result (planText) and the log have it",
        '',
      ]
    : [];
  return withinLimit([...lines, ...leftOut]).join('\n') + '\n';
}

const planTextLines = (block: string) => [
  "<details><summary>terraform's plan (masked)</summary>",
  '',
  block,
  '',
  '</details>',
  '',
];

/** `lines` whole when under SUMMARY_LIMIT bytes; else its first lines, and one that says how many were left out. */
function withinLimit(lines: readonly string[]): string[] {
  const kept: string[] = [];
  let size = 0;
  for (const [index, line] of lines.entries()) {
    size += Buffer.byteLength(line) + 1;
    if (size >= SUMMARY_LIMIT - 200)
      return [
        ...kept,
        '',
        `… the last ${lines.length - index} lines of this summary are left out: GitHub takes 1 MiB at most (the result has everything)`,
      ];
    kept.push(line);
  }
  return kept;
}

/** The summary's lines but the plan's text. */
function summaryLines(
  result: Result,
  masker: Masker,
  argv: readonly string[] | undefined,
  resultFile: string | undefined,
): string[] {
  const plan = result.plan;
  // Masked as terraform's text is: its op, outcome and reason too (the result keeps those).
  const word = (text: string) => mdText(maskValue(masker, text));
  const lines = [
    `### captf-runner ${word(result.op)}: ${word(result.outcome)} (${word(result.reason)}), exit ${result.exitCode}`,
    '',
    `> ${mdText(result.message)}`,
    '',
  ];
  const errors = terraformErrors(result);
  if (errors.named.length)
    lines.push(
      "**terraform's errors:**",
      '',
      ...errors.named.map(({ place, summary }) => `- ${place ? `${mdCode(place)}: ` : ''}${mdText(summary)}`),
      ...(errors.more ? [`- … and ${errors.more} more (error.detail.diagnostics)`] : []),
      '',
    );
  if (plan) {
    if (plan.policy?.deniedTotal)
      lines.push(
        `**Denied by the policy (no approval passes it; the module, its inputs or the policy must change):**`,
        '',
        ...plan.policy.denied.slice(0, LISTED).map((d) => `- ${mdText(denialText(d))}`),
        '',
      );
    if (needsAnApproval(result)) lines.push(`**Needs an approval:** ${mdText(gateCauses(plan).join('; '))}`, '');
    lines.push(...destructiveTable(plan, true), ...actionsList(plan));
    lines.push(`**Counts:** ${mdText(countsWithTerraformLine(plan, result.op))}`, '');
    lines.push(...changesList(plan));
  }
  if (result.drift?.found) {
    lines.push(
      `**Changed outside terraform (${result.drift.resourceDriftTotal}):** ${
        result.drift.resourceDrift
          .slice(0, LISTED)
          .map((d) => mdCode(d.address))
          .join(', ') || 'nothing reported'
      }`,
      '',
    );
    lines.push(
      `**The inputs differ from the state (${result.drift.inputsDifferTotal}):** ${
        result.drift.inputsDiffer
          .slice(0, LISTED)
          .map((d) => `${mdCode(d.address)} (${d.actions.map(mdText).join(', ')})`)
          .join(', ') || 'nowhere'
      }`,
      '',
    );
  }
  if (approvalPassed(result))
    lines.push(
      `**Approved:** the approval given matched approval hash ${mdCode(result.approvalHash ?? '')}, so the plan was applied although it needed one`,
      '',
    );
  if (result.approval?.unreviewedTotal)
    lines.push(
      `**Approved without review (${result.approval.unreviewedTotal}):** ${(result.approval.unreviewed ?? [])
        .slice(0, LISTED)
        .map((u) => mdCode(`${u.address} (${u.action}${u.trigger ? ` ${u.trigger}` : ''})`))
        .join(', ')}`,
      '',
    );
  lines.push(...nextCommands(result, argv), ...places(result, resultFile));
  if (result.inputsHash)
    lines.push(
      `Inputs hash ${mdCode(result.inputsHash)}${result.approvalHash && result.approvalHash !== result.inputsHash ? `, approval hash ${mdCode(result.approvalHash)}` : ''}`,
      '',
    );
  if (result.warnings.length) lines.push('**Warnings**', '', ...result.warnings.map((w) => `- ${mdText(w)}`), '');
  return lines;
}

/**
 * The summary of `classify`: the verdict, the counts and, by address, what deletes or replaces (with
 * the attributes forcing it), the provider actions and the changes. No value of the plan: `classify`
 * has no secrets to mask with, so reasons and failClosed texts (which quote the document) are counted, not shown.
 */
export function classifySummaryMarkdown(plan: Classification, file: string): string {
  const lines = [
    `### captf-runner classify: ${plan.gated ? 'gated (applying it needs an approval)' : 'not gated'}`,
    '',
    `Plan document ${mdCode(file)}`,
    '',
  ];
  lines.push(...destructiveTable(plan, false), ...actionsList(plan));
  // Rule names and addresses only: a rule's message is the team's text, and classify shows no text it cannot mask.
  if (plan.policy?.deniedTotal)
    lines.push(
      `**Denied by the policy (${plan.policy.deniedTotal}):** ${plan.policy.denied
        .slice(0, LISTED)
        .map((d) => mdCode(findingText(d)))
        .join(', ')}`,
      '',
    );
  if (plan.policy?.approvalRequiredTotal)
    lines.push(
      `**Needs an approval by the policy (${plan.policy.approvalRequiredTotal}):** ${plan.policy.approvalRequired
        .slice(0, LISTED)
        .map((f) => mdCode(findingText(f)))
        .join(', ')}`,
      '',
    );
  if (plan.failClosed.length)
    lines.push(
      `**The runner cannot fully read it:** ${plural(plan.failClosed.length, 'reason')} (\`captf-runner classify FILE --json\` names them)`,
      '',
    );
  lines.push(`**Counts:** ${mdText(countsText(plan.counts))}`, '', ...changesList(plan));
  return withinLimit(lines).join('\n') + '\n';
}
