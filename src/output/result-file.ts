// Sinks that take a finished result. The result never knows where it goes.
import { makeDirs } from '../util/mkdirs.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { join } from 'node:path';
import { Result, type Result as ResultT } from '../schemas/result.ts';
import { RunnerError } from '../errors.ts';
import type { Masker } from '../masking/mask.ts';
import { maskResult } from '../masking/mask-result.ts';
import { printableJson } from './printable.ts';

/** result.json's text: masked, and with no character that acts on a terminal that prints it (printable.ts). */
export const serializeResult = (result: ResultT, masker: Masker) =>
  printableJson(JSON.stringify(maskResult(masker, Result.parse(result)), null, 2)) + '\n';

/** <out>/result.json, written atomically: a reader sees the old file or the whole new one. */
export async function writeResultFile(outDir: string, result: ResultT, masker: Masker): Promise<string> {
  const target = join(outDir, 'result.json');
  try {
    const text = serializeResult(result, masker);
    await makeDirs(outDir);
    await writeFileAtomic(target, text, 0o644);
    return target;
  } catch (error) {
    throw new RunnerError({
      kind: 'io',
      reason: 'ResultNotWritten',
      message: `could not write ${target}: ${(error as Error).message}. Give the runner a writable --out directory.`,
      cause: error,
    });
  }
}
