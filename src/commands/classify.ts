// `captf-runner classify FILE --json`: the classification of a show -json document, in the shape of
// result.plan, with the rules an apply uses (its reserved address), so its verdict is the apply's.
import { open } from 'node:fs/promises';
import { RunnerError, usageError } from '../errors.ts';
import { classifyPlanStream, type StreamOptions } from '../plan/stream.ts';
import { DOCUMENT_HEAD_BYTES, misfedDocument, peekHead } from '../plan/document-kind.ts';
import { actionText, changeText } from '../plan/actions.ts';
import { countsText } from '../output/summary.ts';
import { printableJson, printableLine } from '../output/printable.ts';
import { runnerClassifyOptions } from '../plan/runner-options.ts';
import { observers } from '../plan/observer.ts';
import { givenSetting } from '../schemas/config.ts';
import { denialText, findingText } from '../guard/decide.ts';
import { loadRunPolicy } from '../steps/policy.ts';
import { classifySummaryMarkdown } from '../output/summary-md.ts';
import { openSummaryMd } from '../output/summary-md-file.ts';
import { detailedExitCode } from '../run/exit-codes.ts';
import { EXIT } from '../vocabulary/reasons.ts';
import { fdChunks } from '../util/fd-chunks.ts';
import type { ClassifyFlags } from '../cli.ts';

/** Exits 0, or with --detailed-exitcode 8 when a policy denies the plan and 3 when it is otherwise gated; a --summary-md FILE that is refused is a usage error (exit 2), one that cannot be written a warning on stderr. */
export async function classifyCommand(file: string, flags: ClassifyFlags): Promise<number> {
  // Before anything is read: the summary is a regular file of its own, never the document itself.
  const summary =
    flags.summaryMd === undefined
      ? undefined
      : await openSummaryMd(flags.summaryMd, { files: file === '-' ? [] : [{ flag: 'FILE', path: file }], dirs: [] });
  const limit = flags.limit === undefined ? undefined : Number.parseInt(flags.limit, 10);
  if (limit !== undefined && !(limit >= 0))
    throw usageError('SettingsInvalid', `--limit must be a whole number, not "${flags.limit}"`);
  // An invalid policy dir is ImageInvalid (exit 4), as in an op.
  const policy = await loadRunPolicy(givenSetting({ ...flags }, process.env, 'policy') as string | undefined);
  // A plan document does not say which tool made it; plan.version is its terraform_version.
  const judgement = policy?.judgement({ tool: 'terraform' });
  const classified = await classifyDocument(file, {
    ...observers(judgement),
    ...runnerClassifyOptions(limit !== undefined ? { limit } : {}),
  }).catch((error: unknown) => {
    throw documentError(file, error);
  });
  const plan = judgement ? await judgement.judge(classified) : classified;
  // The document's addresses and texts are printed as every sink prints them: no control character raw, one line each.
  if (flags.json) process.stdout.write(printableJson(JSON.stringify(plan, null, 2)) + '\n');
  else {
    const lines = [`${plan.gated ? 'gated (applying it needs an approval)' : 'not gated'}: ${countsText(plan.counts)}`];
    for (const d of plan.destructive) lines.push(`  ${printableLine(changeText(d))}`);
    for (const a of plan.actions) lines.push(`  ${printableLine(actionText(a))}`);
    for (const why of plan.failClosed) lines.push(`  needs an approval: ${printableLine(why)}`);
    for (const d of plan.policy?.denied ?? []) lines.push(`  denied by the policy: ${printableLine(denialText(d))}`);
    for (const a of plan.policy?.approvalRequired ?? [])
      lines.push(`  needs an approval: policy rule ${printableLine(findingText(a))}`);
    process.stdout.write(lines.map((line) => `${line}\n`).join(''));
  }
  const summaryProblem = await summary?.append(classifySummaryMarkdown(plan, file));
  if (summaryProblem) process.stderr.write(`captf-runner classify: warning: ${summaryProblem}\n`);
  return flags.detailedExitcode
    ? detailedExitCode(EXIT.succeeded, { gated: plan.gated, denied: (plan.policy?.deniedTotal ?? 0) > 0 })
    : EXIT.succeeded;
}

/** The document classified, unless its first bytes show it is another file people take for a plan's JSON (refused, named with the fix). */
async function classifyDocument(file: string, options: StreamOptions) {
  const { head, source } = await peekHead(file === '-' ? fdChunks(0) : fileChunks(file), DOCUMENT_HEAD_BYTES);
  const misfed = misfedDocument(head);
  if (misfed)
    throw usageError(
      'PlanDocumentInvalid',
      `${file === '-' ? 'the document on stdin' : file} is ${misfed.what}, not the JSON document of a plan: ${misfed.fix}, and classify that`,
    );
  return classifyPlanStream(source, options);
}

/** The file's bytes, read as stdin is (fdChunks: one buffer, not one a chunk); closed at its end (one the reader stops in is closed as the command exits). */
async function* fileChunks(path: string): AsyncGenerator<Buffer> {
  const handle = await open(path, 'r');
  try {
    yield* fdChunks(handle.fd);
  } finally {
    await handle.close();
  }
}

/** The document is the caller's: one that cannot be read, or is no plan the runner can classify, is a usage error. */
function documentError(file: string, error: unknown): unknown {
  // A plan the runner cannot read is the document's fault here: exit 2, not an op's PlanUnreadable (exit 1, terraform printed it).
  if (error instanceof RunnerError)
    return error.kind === 'plan' ? usageError('PlanDocumentInvalid', error.message, error.detail) : error;
  const code = (error as NodeJS.ErrnoException).code;
  return code
    ? usageError(
        'PlanDocumentInvalid',
        `cannot read ${file} (${code}): pass the path of a terraform show -json document`,
      )
    : error;
}
