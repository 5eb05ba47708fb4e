// `captf-runner hash --inputs DIR --image REF [--kind pool] --json`: the hashes an approval names.
import { loadHashSettings } from '../schemas/config.ts';
import { loadInputs } from '../inputs/load.ts';

export async function hashCommand(flags: Record<string, unknown>): Promise<void> {
  // The same settings rules as every op: flag, else CAPTF_*, else the default.
  const { inputs, image, kind } = loadHashSettings(flags, process.env);
  const { hashes } = await loadInputs(inputs, { image, kind });
  process.stdout.write(flags.json ? JSON.stringify(hashes) + '\n' : `inputs hash:   ${hashes.inputsHash}\napproval hash: ${hashes.approvalHash}\n`);
}
