import { createWriteStream, type WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { succeeded, type Terraform } from './terraform.ts';

export interface StateResult {
  exitCode: number;
}

/** -no-color: its refusals would be coloured (stdout, the state itself, is the same either way). */
export const statePullArgs = (): string[] => ['state', 'pull', '-no-color'];

/**
 * Streams the current state to a new file (states can be large), mode 0600: it holds secrets. The
 * file must not exist yet. `read` is handed the same bytes as they are written (the state is read
 * as it is pulled, not from the file again); its value is the pull's once the file is complete.
 */
export async function statePull<T>(
  tf: Terraform,
  toFile: string,
  read: (state: AsyncIterable<Buffer>) => Promise<T>,
): Promise<StateResult & { read: T }> {
  const run = await tf.run<T>('state pull', statePullArgs(), {
    consumeStdout: async (stdout) => {
      const file = createWriteStream(toFile, { mode: 0o600, flags: 'wx' });
      const written = finished(file);
      written.catch(() => {}); // a failure to open or write is raised by the write that meets it, or below
      try {
        const value = await read(writtenAsRead(stdout, file, written));
        file.end();
        await written;
        return value;
      } catch (error) {
        file.destroy();
        throw error;
      }
    },
  });
  return { exitCode: succeeded(run, 'StatePullFailed').exitCode, read: run.consumed as T };
}

/**
 * Each chunk of stdout, as it is written to the file: the chunk is a view of the driver's one buffer
 * (exec.ts, consumeStdout), so the next is asked for only once the file has taken this one. A reader
 * that stops early leaves the rest unread: the driver drains it, so terraform's exit still says whether
 * the pull itself failed.
 */
async function* writtenAsRead(
  stdout: AsyncIterable<Buffer>,
  file: WriteStream,
  written: Promise<void>,
): AsyncGenerator<Buffer> {
  for await (const chunk of stdout) {
    const wrote = new Promise<void>((resolve, reject) =>
      file.write(chunk, (error) => (error ? reject(error) : resolve())),
    );
    wrote.catch(() => {}); // awaited below, once the reader is done with the chunk
    try {
      yield chunk; // read while it is written
    } finally {
      await Promise.race([wrote, written]); // a file that failed (to open, to write) ends it either way
    }
  }
}

export interface StatePushOptions {
  force?: boolean;
  lockTimeout?: string;
}

/** -no-color: without it terraform colours its refusals with ANSI escapes, even on a pipe, and they would reach messages and logs. */
export const statePushArgs = (file: string, o: StatePushOptions = {}): string[] => [
  'state',
  'push',
  '-no-color',
  ...(o.force ? ['-force'] : []),
  ...(o.lockTimeout ? [`-lock-timeout=${o.lockTimeout}`] : []),
  file,
];

export async function statePush(tf: Terraform, file: string, options: StatePushOptions = {}): Promise<StateResult> {
  const run = await tf.run('state push', statePushArgs(file, options));
  return { exitCode: succeeded(run, 'StatePushFailed').exitCode };
}
