// The terraform the image build verified: the build checks the binary against its pinned sha256,
// asks it its version and writes runner/terraform-record.sh's record beside the runner's entry. A
// run whose terraform is the recorded path and still that file takes the version from the record
// instead of a `version` launch (one terraform start fewer per Job). Recognising the file must cost
// less than the launch it saves, so it is not a full sha256 (≈ 90 ms of CPU for 90 MB, half the
// launch's CPU, all of it the runner's own): the size, and the sha256 of the first and the last
// 64 KiB (≈ 0.6 ms; the first holds the Go build ID, which differs between any two builds). In the image the file is
// root's and the runner is not, so only an image build can change it, and a build of another binary
// changes those bytes. Anything else (another path, no record, a record that does not parse, a file
// writable by others, another size or other bytes) leaves the launch as it was.
import { closeSync, fstatSync, openSync, readFileSync, readSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as z from '../schemas/zod.ts';
import { SHA256_HEX, sha256Hex } from '../util/sha256.ts';

/** The record's file name, in the dir of the runner's entry (/usr/local/lib/captf-runner/ in the image). */
const RECORD_FILE = 'terraform-verified.json';

const recordSchema = z.object({
  path: z.string().startsWith('/'),
  size: z.nonNegativeInt(),
  sha256: z.string().regex(SHA256_HEX),
  head_sha256: z.string().regex(SHA256_HEX),
  tail_sha256: z.string().regex(SHA256_HEX),
  sample_bytes: z.number().int().positive(),
  version_line: z.string(),
});

export type TerraformRecord = z.infer<typeof recordSchema>;

/** The record beside the entry this process runs (its real path: the image links to it from /usr/local/bin). */
export function recordBesideEntry(entry = process.argv[1]): string | undefined {
  if (!entry) return undefined;
  try {
    return join(dirname(realpathSync(entry)), RECORD_FILE);
  } catch {
    return undefined;
  }
}

/** The record at `file`, or undefined when there is none or it does not parse (the launch then answers). */
export function readRecord(file: string): TerraformRecord | undefined {
  try {
    const parsed = recordSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // none there, or not JSON
  }
}

/**
 * The recorded `version` line when `path` (absolute, as resolveExecutable found it) is the recorded
 * path and the file there is the recorded one; undefined otherwise. Stat and samples are read from
 * one open file, so a file swapped between them is never taken for the recorded one.
 */
export function recordedVersionLine(path: string, record: TerraformRecord): string | undefined {
  if (path !== record.path) return undefined;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    // A binary others may write is not the file the build verified, whatever its bytes say now.
    if (!stat.isFile() || stat.size !== record.size || (stat.mode & 0o022) !== 0) return undefined;
    const length = Math.min(record.sample_bytes, stat.size);
    const sample = Buffer.allocUnsafe(length);
    if (readFully(fd, sample, 0) !== length || sha256Hex(sample) !== record.head_sha256) return undefined;
    if (readFully(fd, sample, stat.size - length) !== length || sha256Hex(sample) !== record.tail_sha256)
      return undefined;
    return record.version_line;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function readFully(fd: number, into: Buffer, position: number): number {
  let done = 0;
  while (done < into.length) {
    const n = readSync(fd, into, done, into.length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}
