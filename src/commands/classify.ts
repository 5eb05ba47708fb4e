// `captf-runner classify FILE --json`: the classification of a show -json document, in the shape of
// result.plan, with the rules an apply uses (its reserved address), so its verdict is the apply's.
import { createReadStream } from 'node:fs';
import { RunnerError } from '../errors.ts';
import type { ClassifyOptions } from '../plan/classify.ts';
import { classifyPlanStream } from '../plan/stream.ts';
import { actionText, changeText } from '../plan/actions.ts';
import { countsText } from '../output/summary.ts';
import { INPUTS_HASH_RESOURCE } from '../workspace/reserved-names.ts';
import { EXIT } from '../run/exit-codes.ts';
import { givenSetting } from '../schemas/config.ts';
import { denialText, findingText } from '../guard/decide.ts';
import { loadRunPolicy } from '../steps/policy.ts';

/** How the runner classifies every plan (ops and `classify`): what it plans at its own record is its own (src/plan/classify.ts). */
export const runnerClassifyOptions = (options: ClassifyOptions = {}): ClassifyOptions => ({ ignoreAddresses: new Set([INPUTS_HASH_RESOURCE]), ...options });

export async function classifyCommand(file: string, flags: { json?: boolean; limit?: string; policy?: string }): Promise<number> {
  const limit = flags.limit === undefined ? undefined : Number.parseInt(flags.limit, 10);
  if (limit !== undefined && !(limit >= 0)) {
    process.stderr.write(`captf-runner classify: --limit must be a whole number, not "${flags.limit}"\n`);
    return EXIT.usage;
  }
  let policy;
  try {
    policy = await loadRunPolicy(givenSetting(flags, process.env, 'policy') as string | undefined);
  } catch (error) {
    process.stderr.write(`captf-runner classify: ${(error as Error).message}\n`);
    return EXIT.imageInvalid;
  }
  try {
    const source = file === '-' ? process.stdin : createReadStream(file);
    // A plan document does not say which tool made it; plan.version is its terraform_version.
    const judgement = policy?.judgement({ tool: 'terraform' });
    const classified = await classifyPlanStream(source, runnerClassifyOptions({ ...(limit !== undefined && { limit }), ...(judgement && { onChange: judgement.onChange, onAction: judgement.onAction }) }));
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
    return EXIT.succeeded;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = code ? `cannot read ${file} (${code}): pass the path of a terraform show -json document` : (error as Error).message;
    process.stderr.write(`captf-runner classify: ${message}\n`);
    return error instanceof RunnerError || code ? EXIT.usage : EXIT.failed;
  }
}
