// Reading a file someone else put in place (a module's configuration, an artifact store's chunk, a
// blocked run's record) without letting its kind decide what the runner does: a FIFO must not wait
// for a writer, a device must not stream forever, a link must not lead elsewhere. What is judged is
// the file opened (fstat), not a name that could change between a check and the read.
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** The file is not a regular file: `found` says what it is, in words for a message. */
export class NotRegularFileError extends Error {
  constructor(
    readonly path: string,
    readonly found: string,
  ) {
    super(`${path} is ${found}, not a regular file`);
    this.name = 'NotRegularFileError';
  }
}

/**
 * The first `most` bytes of a regular file (all of it when it is shorter). Never follows a link
 * (the caller resolves one it accepts); errors of open (ENOENT, EACCES) are thrown as they are.
 */
export async function readRegularFile(path: string, most: number): Promise<Buffer> {
  let handle;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer (fstat refuses it below).
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new NotRegularFileError(path, 'a symbolic link');
    throw error;
  }
  try {
    const found = await handle.stat();
    if (found.isDirectory()) throw new NotRegularFileError(path, 'a directory');
    if (!found.isFile()) throw new NotRegularFileError(path, 'a special file (a device, FIFO or socket)');
    // Until end of file or `most`, whatever fstat said: the file may grow while it is read.
    const parts: Buffer[] = [];
    let length = 0;
    while (length < most) {
      const part = Buffer.alloc(Math.min(Math.max(found.size - length, 0) + 1, 1024 * 1024, most - length));
      const { bytesRead } = await handle.read(part, 0, part.length, length);
      if (bytesRead === 0) break;
      parts.push(part.subarray(0, bytesRead));
      length += bytesRead;
    }
    return Buffer.concat(parts, length);
  } finally {
    await handle.close();
  }
}
