// The saved plan, held open from the moment it is hashed until it is applied. terraform reads it
// through the runner's own descriptor (passed as its fd 3, named /dev/fd/3), so what it shows and
// applies is the very file that was hashed: a file renamed over the path meanwhile is never read.
// What this cannot stop (a process of the runner's uid writing the same file in place after the
// last check, or ptrace) is in contract/sections/faults.md.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';

export class HeldPlanFile {
  private constructor(
    private readonly handle: FileHandle,
    readonly path: string,
  ) {}

  /** Opens the plan terraform wrote at `path`: a regular file, never through a symbolic link. */
  static async open(path: string): Promise<HeldPlanFile> {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      if (!(await handle.stat()).isFile()) throw new Error(`${path} is not a regular file`);
    } catch (error) {
      await handle.close();
      throw error;
    }
    return new HeldPlanFile(handle, path);
  }

  get fd(): number {
    return this.handle.fd;
  }

  /** The held file by a name of its own (Linux), for readers that take a path: the same file, whatever the path now names. */
  get reopenPath(): string {
    return `/dev/fd/${this.handle.fd}`;
  }

  async size(): Promise<number> {
    return (await this.handle.stat()).size;
  }

  /** Up to `length` bytes of the held file at `position`. */
  async read(position: number, length: number): Promise<Buffer> {
    const buffer = Buffer.alloc(length);
    let filled = 0;
    while (filled < length) {
      const { bytesRead } = await this.handle.read(buffer, filled, length - filled, position + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  }

  /** sha256 of the held file from its first byte, read through the descriptor. */
  async sha256(): Promise<string> {
    const hash = createHash('sha256');
    await pipeline(this.handle.createReadStream({ start: 0, autoClose: false }), hash);
    return hash.digest('hex');
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined); // closed already
  }
}
