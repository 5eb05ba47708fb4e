import { StringDecoder } from 'node:string_decoder';

/**
 * The lines of a stream's chunks (without their line ends), a batch for each chunk read: every whole line
 * the chunk ended, none when it ended none. The consumer may await between batches and the stream
 * waits for it (readline's async iterator queues lines instead, and was seen to drop some when its
 * consumer stalled). A batch per chunk, not a line at a time: a line's own handling (its yield, its
 * write) cost more than the line (BENCHMARKS.md, "Apply overhead"), and a chunk bounds a batch.
 */
export async function* readLineBatches(stream: AsyncIterable<Buffer | string>): AsyncGenerator<string[]> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of stream) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    const last = pending.lastIndexOf('\n');
    if (last < 0) continue;
    const lines = pending.slice(0, last).split('\n');
    pending = pending.slice(last + 1);
    for (let i = 0; i < lines.length; i++) lines[i] = stripCarriageReturn(lines[i]!);
    yield lines;
  }
  pending += decoder.end();
  if (pending.length > 0) yield [stripCarriageReturn(pending)];
}

const stripCarriageReturn = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);
