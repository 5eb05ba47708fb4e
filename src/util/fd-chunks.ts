// The bytes of an open file descriptor, read into one buffer that every chunk reuses. A Node stream
// (process.stdin, createReadStream) allocates a Buffer per chunk, outside V8's heap and freed only when
// V8 next collects: on Node 24 60–100 MB of them pile up while a 600 MiB plan streams through a pipe
// (bench/HISTORY.md, "Issue 44: the 600 MiB plan on Node 24"); read this way they are 64 KiB.
import { read } from 'node:fs';

const CHUNK_BYTES = 64 * 1024;
/** How long a descriptor someone left non-blocking is waited for when it has nothing yet (EAGAIN). */
const AGAIN_MS = 5;

/**
 * The bytes of `fd` (a pipe such as stdin, or a file, from its current offset) to its end. Each chunk
 * is a view of the same buffer: valid only until the next chunk is asked for, so a consumer that keeps
 * bytes copies them. Errors of read (EISDIR, EIO) are thrown as they are.
 */
export async function* fdChunks(fd: number, chunkBytes = CHUNK_BYTES): AsyncGenerator<Buffer> {
  const buffer = Buffer.allocUnsafeSlow(chunkBytes);
  for (let n = await readInto(fd, buffer); n > 0; n = await readInto(fd, buffer)) yield buffer.subarray(0, n);
}

function readInto(fd: number, buffer: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const attempt = () =>
      read(fd, buffer, 0, buffer.length, null, (error, bytesRead) => {
        if (error?.code === 'EAGAIN') setTimeout(attempt, AGAIN_MS);
        else if (error) reject(error);
        else resolve(bytesRead);
      });
    attempt();
  });
}
