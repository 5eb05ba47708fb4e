// Reading a file someone else put in place (a module's configuration, an artifact store's chunk, a
// blocked run's record) without letting its kind decide what the runner does: a FIFO must not wait
// for a writer, a device must not stream forever, a link must not lead elsewhere. What is judged is
// the file opened (fstat), not a name that could change between a check and the read.
import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** The file is not a regular file: `found` says what it is, in words for a message. */
export class NotRegularFileError extends Error {
  constructor(
    readonly path: string,
    readonly found: string,
    options?: ErrorOptions,
  ) {
    super(`${path} is ${found}, not a regular file`, options);
    this.name = 'NotRegularFileError';
  }
}

/**
 * A regular file opened for reading, with its fstat. Never follows a link (the caller resolves one it
 * accepts); errors of open (ENOENT, EACCES) are thrown as they are. The caller closes the handle.
 */
export async function openRegularFile(path: string): Promise<{ handle: FileHandle; stat: Stats }> {
  let handle;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer (fstat refuses it below).
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP')
      throw new NotRegularFileError(path, 'a symbolic link', { cause: error });
    throw error;
  }
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new NotRegularFileError(path, 'a directory');
    if (!stat.isFile()) throw new NotRegularFileError(path, 'a special file (a device, FIFO or socket)');
    return { handle, stat };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The first `most` bytes of a regular file (all of it when it is shorter); refused as openRegularFile refuses. */
export async function readRegularFile(path: string, most: number): Promise<Buffer> {
  const { handle, stat: found } = await openRegularFile(path);
  try {
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
