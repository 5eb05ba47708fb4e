import { randomBytes } from 'node:crypto';
import { link, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Write to a temporary name beside the target, fsync, rename: readers see the whole file or none of it. */
export async function writeFileAtomic(path: string, data: Buffer | string, mode: number): Promise<void> {
  await viaTemporary(path, data, mode, (temporary) => rename(temporary, path));
}

/**
 * As writeFileAtomic, but never replaces a file: the synced temporary file is linked to the name,
 * which fails with EEXIST when the name is taken.
 */
export async function writeFileExclusive(path: string, data: Buffer | string, mode: number): Promise<void> {
  await viaTemporary(path, data, mode, (temporary) => link(temporary, path));
}

/** Writes and fsyncs a temporary file beside `path`, hands it to `place`, and leaves no temporary file behind. */
async function viaTemporary(
  path: string,
  data: Buffer | string,
  mode: number,
  place: (temporary: string) => Promise<void>,
): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const file = await open(temporary, 'wx', mode);
    try {
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
    await place(temporary);
  } finally {
    await rm(temporary, { force: true });
  }
}
