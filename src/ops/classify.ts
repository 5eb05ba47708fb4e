// `captf-runner classify FILE --json`: the classification of a show -json document, in the shape of result.plan.
import { createReadStream } from 'node:fs';
import { RunnerError } from '../errors.ts';
import { classifyPlanStream } from '../plan/stream.ts';
import { isDestructive } from '../contract/classification.ts';
import { changeText } from '../output/change-text.ts';
import { countsText } from '../output/summary.ts';
import { EXIT } from './exit-codes.ts';

export async function classifyCommand(file: string, flags: { json?: boolean; limit?: string }): Promise<number> {
  const limit = flags.limit === undefined ? undefined : Number.parseInt(flags.limit, 10);
  if (limit !== undefined && !(limit >= 0)) {
    process.stderr.write(`captf-runner classify: --limit must be a whole number, not "${flags.limit}"\n`);
    return EXIT.usage;
  }
  try {
    const source = file === '-' ? process.stdin : createReadStream(file);
    const plan = await classifyPlanStream(source, limit === undefined ? {} : { limit });
    if (flags.json) process.stdout.write(JSON.stringify(plan, null, 2) + '\n');
    else {
      process.stdout.write(`${isDestructive(plan) ? 'destructive' : 'not destructive'}: ${countsText(plan.counts)}\n`);
      for (const d of plan.destructive) process.stdout.write(`  ${changeText(d)}\n`);
      for (const why of plan.failClosed) process.stdout.write(`  counted as destructive: ${why}\n`);
    }
    return EXIT.succeeded;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = code ? `cannot read ${file} (${code}): pass the path of a terraform show -json document` : (error as Error).message;
    process.stderr.write(`captf-runner classify: ${message}\n`);
    return error instanceof RunnerError || code ? EXIT.usage : EXIT.failed;
  }
}
