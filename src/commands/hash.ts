// `captf-runner hash --inputs DIR --image REF [--kind pool] --json`: the hashes an approval names.
import { loadHashSettings, unknownSettingVariables } from '../schemas/config.ts';
import { loadInputs } from '../inputs/load.ts';
import type { Notice } from '../schemas/result.ts';

/** A Job's hash names its image: one without it never matches what a Job computes. */
const IMAGE_EMPTY: Notice = {
  code: 'ImageEmpty',
  message:
    "no --image (or CAPTF_IMAGE) was given: these hashes are of an empty image reference, and never match a Job's (its hash names the image it runs); pass --image with the image reference the Job runs",
};

export async function hashCommand(flags: Record<string, unknown>): Promise<void> {
  // The same settings rules as every op: flag, else CAPTF_*, else the default.
  const { inputs, image, kind } = loadHashSettings(flags, process.env);
  const loaded = await loadInputs(inputs, { image, kind });
  const notices = [...(image === '' ? [IMAGE_EMPTY] : []), ...unknownSettingVariables(process.env), ...loaded.notices];
  for (const notice of notices) process.stderr.write(`warning: ${notice.message}\n`);
  const { hashes } = loaded;
  process.stdout.write(
    flags.json
      ? JSON.stringify(notices.length ? { ...hashes, notices } : hashes) + '\n'
      : `inputs hash:   ${hashes.inputsHash}\napproval hash: ${hashes.approvalHash}\n`,
  );
}
