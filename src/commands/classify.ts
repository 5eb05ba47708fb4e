// `captf-runner classify FILE --json`: the classification of a show -json document, in the shape of
// result.plan, with the rules an apply uses (its reserved address), so its verdict is the apply's.
import { createReadStream } from 'node:fs';
import { RunnerError, usageError } from '../errors.ts';
import { classifyPlanStream } from '../plan/stream.ts';
import { actionText, changeText } from '../plan/actions.ts';
import { countsText } from '../output/summary.ts';
import { runnerClassifyOptions } from '../plan/runner-options.ts';
import { givenSetting } from '../schemas/config.ts';
import { denialText, findingText } from '../guard/decide.ts';
import { loadRunPolicy } from '../steps/policy.ts';
import { appendSummaryMd, classifySummaryMarkdown } from '../output/summary-md.ts';
import { detailedExitCode } from '../run/exit-codes.ts';
import { EXIT } from '../vocabulary/reasons.ts';
import type { ClassifyFlags } from '../cli.ts';

/** Exits 0, or with --detailed-exitcode 3 when the plan is gated; a --summary-md FILE that cannot be written is a warning on stderr. */
export async function classifyCommand(file: string, flags: ClassifyFlags): Promise<number> {
  const limit = flags.limit === undefined ? undefined : Number.parseInt(flags.limit, 10);
  if (limit !== undefined && !(limit >= 0)) throw usageError('SettingsInvalid', `--limit must be a whole number, not "${flags.limit}"`);
  // An invalid policy dir is ImageInvalid (exit 4), as in an op.
  const policy = await loadRunPolicy(givenSetting({ ...flags }, process.env, 'policy') as string | undefined);
  // A plan document does not say which tool made it; plan.version is its terraform_version.
  const judgement = policy?.judgement({ tool: 'terraform' });
  const source = file === '-' ? process.stdin : createReadStream(file);
  const classified = await classifyPlanStream(source, runnerClassifyOptions({ ...(limit !== undefined && { limit }), ...(judgement && { onChange: judgement.onChange, onAction: judgement.onAction }) })).catch((error: unknown) => {
    throw documentError(file, error);
  });
  const plan = judgement ? judgement.judge(classified) : classified;
  if (flags.json) process.stdout.write(JSON.stringify(plan, null, 2) + '\n');
  else {
    process.stdout.write(`${plan.gated ? 'gated (applying it needs an approval)' : 'not gated'}: ${countsText(plan.counts)}\n`);
    for (const d of plan.destructive) process.stdout.write(`  ${changeText(d)}\n`);
    for (const a of plan.actions) process.stdout.write(`  ${actionText(a)}\n`);
    for (const why of plan.failClosed) process.stdout.write(`  needs an approval: ${why}\n`);
    for (const d of plan.policy?.denied ?? []) process.stdout.write(`  denied by the policy: ${denialText(d)}\n`);
    for (const a of plan.policy?.approvalRequired ?? []) process.stdout.write(`  needs an approval: policy rule ${findingText(a)}\n`);
  }
  const summaryProblem = flags.summaryMd && (await appendSummaryMd(flags.summaryMd, classifySummaryMarkdown(plan, file)));
  if (summaryProblem) process.stderr.write(`captf-runner classify: warning: ${summaryProblem}\n`);
  return flags.detailedExitcode ? detailedExitCode(EXIT.succeeded, { gated: plan.gated }) : EXIT.succeeded;
}

/** The document is the caller's: one that cannot be read, or is no plan the runner can classify, is a usage error. */
function documentError(file: string, error: unknown): unknown {
  if (error instanceof RunnerError) return usageError(error.reason, error.message, error.detail);
  const code = (error as NodeJS.ErrnoException).code;
  return code ? usageError('PlanDocumentInvalid', `cannot read ${file} (${code}): pass the path of a terraform show -json document`) : error;
}
