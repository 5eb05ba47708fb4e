// The runner's own events as pino JSON lines on stderr (stdout carries terraform's human output
// and --json documents). Every line passes the masker.
import { pino, type Logger } from 'pino';
import { Writable } from 'node:stream';
import { writeSync } from 'node:fs';
import type { Masker } from './mask.ts';

export type { Logger };

/** A synchronous, masking writer to a file descriptor: logs must not be lost when the process exits. */
export function maskingWriter(fd: number, masker: Masker): Writable {
  return new Writable({
    write(chunk, _encoding, callback) {
      try {
        writeSync(fd, masker.mask(chunk.toString()));
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}

export async function createLogger(format: 'json' | 'pretty', masker: Masker, fd = 2): Promise<Logger> {
  const destination = maskingWriter(fd, masker);
  // pino-pretty and its dependencies load only for a person at a terminal: Jobs log JSON.
  const stream = format === 'pretty' ? (await import('pino-pretty')).default({ destination, sync: true, colorize: false, ignore: 'pid,hostname' }) : destination;
  return pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime, messageKey: 'msg' }, stream);
}
