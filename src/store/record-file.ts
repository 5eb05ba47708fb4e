// A record the runner keeps beside its artifacts (blocked-<approval hash>.json in the backups dir):
// read like the store's chunks, a regular file only and bounded, since whoever can write that dir
// could plant a FIFO (a read that never returns) or a link to a device (one that never ends).
import { readRegularFile } from '../util/regular-file.ts';

/** A record is a masked result; one larger than this is not one the runner wrote. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** The record's text. Throws what open throws (ENOENT when there is none), NotRegularFileError, or an Error for one too large. */
export async function readRecordFile(path: string): Promise<string> {
  const bytes = await readRegularFile(path, MAX_RECORD_BYTES + 1);
  if (bytes.length > MAX_RECORD_BYTES) throw new Error(`${path} holds more than ${MAX_RECORD_BYTES} bytes: not a record the runner wrote`);
  return bytes.toString('utf8');
}
