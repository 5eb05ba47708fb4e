import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/**
 * The lines of a stream (without their line ends), read chunk by chunk: the consumer may await
 * between lines and the stream waits for it (readline's async iterator queues lines instead, and
 * was seen to drop some when its consumer stalled).
 */
export async function* readLines(stream: Readable): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of stream) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      yield stripCarriageReturn(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
    }
  }
  pending += decoder.end();
  if (pending.length > 0) yield stripCarriageReturn(pending);
}

const stripCarriageReturn = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);
