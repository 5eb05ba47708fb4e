// `captf-runner hash --inputs DIR --image REF [--kind pool] --json`: the hashes an approval names.
import { loadHashSettings } from '../schemas/config.ts';
import { RunnerError } from '../errors.ts';
import { loadInputs } from '../inputs/load.ts';
import { EXIT } from '../run/exit-codes.ts';

export async function hashCommand(flags: Record<string, unknown>): Promise<number> {
  try {
    // The same settings rules as every op: flag, else CAPTF_*, else the default.
    const { inputs, image, kind } = loadHashSettings(flags, process.env);
    const { hashes } = await loadInputs(inputs, { image, kind });
    process.stdout.write(flags.json ? JSON.stringify(hashes) + '\n' : `inputs hash:   ${hashes.inputsHash}\napproval hash: ${hashes.approvalHash}\n`);
    return EXIT.succeeded;
  } catch (error) {
    process.stderr.write(`captf-runner hash: ${(error as Error).message}\n`);
    return error instanceof RunnerError && error.kind === 'usage' ? EXIT.usage : EXIT.failed;
  }
}
