// `captf-runner hash --inputs DIR --image REF [--kind pool] --json`: the hashes an approval names.
import { Kind } from '../contract/config.ts';
import { RunnerError } from '../errors.ts';
import { loadInputs } from './inputs.ts';
import { EXIT } from './exit-codes.ts';

export async function hashCommand(flags: Record<string, unknown>): Promise<number> {
  const kind = Kind.safeParse(flags.kind ?? process.env.CAPTF_KIND ?? 'cluster');
  if (!kind.success) {
    process.stderr.write(`captf-runner hash: --kind must be cluster, machine or pool, not "${String(flags.kind)}"\n`);
    return EXIT.usage;
  }
  const dir = String(flags.inputs ?? process.env.CAPTF_INPUTS ?? '/captf/inputs');
  const image = String(flags.image ?? process.env.CAPTF_IMAGE ?? '');
  try {
    const { hashes } = await loadInputs(dir, { image, kind: kind.data });
    process.stdout.write(flags.json ? JSON.stringify(hashes) + '\n' : `inputs hash:   ${hashes.inputsHash}\napproval hash: ${hashes.approvalHash}\n`);
    return EXIT.succeeded;
  } catch (error) {
    process.stderr.write(`captf-runner hash: ${(error as Error).message}\n`);
    return error instanceof RunnerError && error.kind === 'usage' ? EXIT.usage : EXIT.failed;
  }
}
