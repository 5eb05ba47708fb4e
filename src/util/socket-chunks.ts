// Output channels for a child process, each read into one buffer that every chunk reuses. A child's
// 'pipe' (child_process, execa) is a Socket whose handle reads into a new Buffer per read, outside V8's
// heap and freed only when V8 next collects (what fd-chunks.ts avoids for a descriptor the runner
// opens), and no public API gives its descriptor to read another way. So the runner makes the
// connection itself: a Unix stream socket pair (what libuv makes for 'pipe' too) through a listening
// socket in a 0700 directory of its own, removed before the child starts; the child gets one end as
// its stdout or stderr, the runner reads the other with net's `onread` into one buffer.
// While the child runs, a small read waits a moment before the next: terraform writes a line at a time
// (10,000 "Refreshing state..." lines at 10,000 instances), and a wake-up a line cost node ≈ 35 µs of CPU
// (poll, read, the socket paused and resumed, the consumer's turn): 0.35 s of a 10,000-instance apply
// (bench/HISTORY.md, "Issue 44: terraform's lines gathered"). Bulk output (show -json) fills reads and
// is read without waiting; so is what is left once the child has exited.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CHUNK_BYTES = 64 * 1024;
/** A read smaller than this waits GATHER_MS before the next: the child writes slowly, or in small writes. */
const GATHER_BELOW_BYTES = 16 * 1024;
/**
 * At most 40 small reads a second. A Unix socket holds ≈ 200 KiB of the child's writes (each write
 * accounted with its overhead: ≈ 250 lines of 100 bytes), so a child writing fast enough to fill it
 * in this time is read in reads over GATHER_BELOW_BYTES, without waiting.
 */
const GATHER_MS = 25;
/** A Unix socket's path is at most 108 bytes on Linux (104 on BSDs): longer, bind(2) fails or cuts it. */
const SOCKET_PATH_BYTES = 100;

/** One output of a child: its end (given as its stdout or stderr) and the runner's, read as chunks. */
export interface OutputChannel {
  /** The child's end, for spawn's stdio; the runner's copy of it is closed by `closeChildEnd` once the child has it. */
  readonly childEnd: Socket;
  /**
   * The runner's copy of the child's end closed, once the child has exited: the reads end once what it
   * started closes its own too, and what is left is read without waiting between reads.
   */
  closeChildEnd(): void;
  /**
   * The bytes the child writes, to their end. Each chunk is a view of the same buffer, valid only until
   * the next chunk is asked for: a consumer that keeps bytes copies them. Nothing more is read until the
   * next chunk is asked for (the child waits on a full socket). A consumer that stops early can call
   * `chunks()` again for the rest.
   */
  chunks(): AsyncGenerator<Buffer>;
  /** Both ends closed (a child that never started; what was not read is dropped). */
  destroy(): void;
}

/**
 * `count` channels, connected through a listening socket in a new 0700 directory, which is removed before
 * this returns. `gatherMs`: how long a small read waits before the next (GATHER_MS; tests give others).
 */
export async function openOutputChannels(count: number, gatherMs = GATHER_MS): Promise<OutputChannel[]> {
  // Synchronous: two quick calls, where a round trip through libuv's threads cost ≈ 0.3 ms of CPU a launch.
  const dir = mkdtempSync(join(tmpdir(), 'captf-io-'));
  const path = join(dir, 's');
  const made: OutputChannel[] = [];
  try {
    if (Buffer.byteLength(path) > SOCKET_PATH_BYTES)
      throw Object.assign(new Error(`the socket path ${path} is longer than ${SOCKET_PATH_BYTES} bytes`), {
        code: 'ENAMETOOLONG',
      });
    // pauseOnConnect: the runner's copy of the child's end never reads what is meant for the child.
    const server = createServer({ pauseOnConnect: true });
    await listen(server, path);
    try {
      // One after the other: each connection accepted is then the one its reader made (stdout never stderr's).
      for (let i = 0; i < count; i++) made.push(await connectChannel(server, path, gatherMs));
    } finally {
      server.close();
    }
    return made;
  } catch (error) {
    for (const channel of made) channel.destroy();
    throw error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** One connection: the accepted end is the child's, the connecting end the runner's reader. */
async function connectChannel(server: Server, path: string, gatherMs: number): Promise<OutputChannel> {
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  const reader = new ChunkReader(gatherMs);
  const socket = connect({ path, onread: { buffer: reader.buffer, callback: (n) => reader.read(n) } });
  reader.attach(socket);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
  } catch (error) {
    socket.destroy();
    throw error;
  }
  const childEnd = await accepted;
  return {
    childEnd,
    closeChildEnd: () => {
      childEnd.destroy();
      reader.stopGathering();
    },
    chunks: () => reader.chunks(),
    destroy: () => {
      childEnd.destroy();
      socket.destroy();
    },
  };
}

/**
 * What one socket read into its buffer: each read pauses the socket (`read` returns false) until the
 * chunk has been taken and the next is asked for, so the buffer is never written while a chunk of it
 * is still being read; after a small read, the next waits `gatherMs` first.
 */
class ChunkReader {
  readonly buffer = Buffer.allocUnsafeSlow(CHUNK_BYTES);
  readonly #gatherMs: number;
  #socket: Socket | undefined;
  /** Bytes read into the buffer that no chunk has taken yet. */
  #pending = 0;
  /** The last read was small: the next waits `gatherMs` (false again once it has waited). */
  #gatherNext = false;
  #gathering = true;
  /** Ends the current wait early. */
  #endWait: (() => void) | undefined;
  #ended = false;
  #error: Error | undefined;
  #waiting: (() => void) | undefined;

  constructor(gatherMs: number) {
    this.#gatherMs = gatherMs;
  }

  attach(socket: Socket): void {
    this.#socket = socket;
    const end = () => {
      this.#ended = true;
      this.#wake();
    };
    socket.on('end', end);
    socket.on('close', end);
    socket.on('error', (error) => {
      this.#error = error;
      this.#wake();
    });
  }

  /** net's onread callback: `n` bytes are in the buffer. */
  read(n: number): false {
    this.#pending = n;
    this.#gatherNext = this.#gathering && n < GATHER_BELOW_BYTES;
    this.#wake();
    return false;
  }

  /** The child has exited: what is left is read without waiting. */
  stopGathering(): void {
    this.#gathering = false;
    this.#gatherNext = false;
    this.#endWait?.();
  }

  async *chunks(): AsyncGenerator<Buffer> {
    for (;;) {
      const idle = this.#pending === 0 && !this.#ended && this.#error === undefined;
      if (idle && this.#gatherNext) {
        // The socket stays paused: the child's writes gather in it (the end or an error is seen after).
        this.#gatherNext = false;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.#gatherMs);
          this.#endWait = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.#endWait = undefined;
        continue;
      }
      if (idle) {
        const woken = new Promise<void>((resolve) => (this.#waiting = resolve));
        this.#socket!.resume(); // the last chunk was taken: the buffer may be read into again
        await woken;
      }
      if (this.#pending > 0) {
        const n = this.#pending;
        this.#pending = 0;
        yield this.buffer.subarray(0, n);
      } else if (this.#error !== undefined) throw this.#error;
      else if (this.#ended) return;
    }
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.();
  }
}
