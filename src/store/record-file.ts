// A record read from a file (<out>/result.json, the newest run's; the directory store's
// blocked-<approval hash>.json): a regular file only and bounded, like the store's chunks, since whoever
// can write that dir could plant a FIFO (a read that never returns) or a link to a device (one that never ends).
import { readRegularFile } from '../util/regular-file.ts';

/** A record is a masked result; one larger than this is not one the runner wrote (every store reads at most this much of one). */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** The record's text. Throws what open throws (ENOENT when there is none), NotRegularFileError, or an Error for one too large. */
export async function readRecordFile(path: string): Promise<string> {
  const bytes = await readRegularFile(path, MAX_RECORD_BYTES + 1);
  if (bytes.length > MAX_RECORD_BYTES)
    throw new Error(`${path} holds more than ${MAX_RECORD_BYTES} bytes: not a record the runner wrote`);
  return bytes.toString('utf8');
}
