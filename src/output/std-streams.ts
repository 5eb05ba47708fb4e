// stdout and stderr of the runner: a reader that goes away (EPIPE: `| head`, a log collector that
// died) or stalls must never end an op half way, before its result is written.
import type { Writable } from 'node:stream';

/** After a write error the stream is closed and later writes are dropped, instead of an uncaught error. Once, at start. */
export function tolerateClosedStdStreams(): void {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => stream.destroy());
}

/** Writes `text`; while the reader is slow, resolves only once it drained (backpressure) or went away. */
export function writeWithBackpressure(out: Writable, text: string): Promise<void> | undefined {
  if (out.destroyed || out.write(text)) return undefined;
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}
