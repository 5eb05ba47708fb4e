// The runner's own events as pino JSON lines on stderr (stdout carries terraform's human output
// and --json documents). Every line passes the masker.
import { pino, type Logger } from 'pino';
import { Writable } from 'node:stream';
import { writeSync } from 'node:fs';
import { maskValue, type Masker } from './mask.ts';

export type { Logger };

/**
 * A synchronous, masking writer to a file descriptor: logs must not be lost when the process exits.
 * A full pipe (stderr is non-blocking once Node opened it) is waited out for a while, but never so
 * long that signals and the deadline wait on it: a line the reader does not take in time is dropped.
 * A reader that went away drops the logs, never the op.
 */
export function maskingWriter(fd: number, masker: Masker): Writable {
  let gone = false;
  return new Writable({
    write(chunk, _encoding, callback) {
      if (!gone) {
        try {
          writeAllSync(fd, Buffer.from(masker.mask(chunk.toString())));
        } catch {
          gone = true;
        }
      }
      callback();
    },
  });
}

/** A line cut short still ends, so that the next one starts on a line of its own. */
function endCutLine(fd: number): void {
  try {
    writeSync(fd, '\n');
  } catch {
    // the reader still does not read: the next line shares this one
  }
}

/** The longest one log line may hold the runner up while the reader does not read. */
const STALLED_READER_MS = 1_000;
const pause = new Int32Array(new SharedArrayBuffer(4));

function writeAllSync(fd: number, bytes: Buffer): void {
  const giveUpAt = Date.now() + STALLED_READER_MS;
  let rest = bytes;
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(fd, rest));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      if (Date.now() >= giveUpAt) {
        if (rest.length < bytes.length) endCutLine(fd);
        return;
      }
      Atomics.wait(pause, 0, 0, 5);
    }
  }
}

/** What every line of a run's log names: the op and the CAPTF object it serves (null when not given: a laptop's dry run). */
export interface RunBindings {
  op: string;
  object: string | null;
  namespace: string | null;
}

export async function createLogger(format: 'json' | 'pretty', masker: Masker, bindings: RunBindings, fd = 2): Promise<Logger> {
  const destination = maskingWriter(fd, masker);
  // pino-pretty and its dependencies load only for a person at a terminal: Jobs log JSON. A person
  // reads the run's bindings once, in its first line, not under every line.
  const stream = format === 'pretty' ? (await import('pino-pretty')).default({ destination, sync: true, colorize: false, ignore: ['pid', 'hostname', ...Object.keys(bindings)].join(',') }) : destination;
  return pino(
    {
      // On every line, so that a line read alone (a log collector's query) names its run.
      base: { ...bindings },
      timestamp: pino.stdTimeFunctions.isoTime,
      messageKey: 'msg',
      // Masked before pino serialises them too: the line's own JSON escaping would otherwise be one
      // more layer around a secret that a message already quotes escaped.
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((arg) => maskForLog(masker, arg)) as Parameters<typeof method>);
        },
      },
    },
    stream,
  );
}

/** A log argument, masked: strings and the fields of objects; an error becomes its type, message and stack, masked. */
function maskForLog(masker: Masker, value: unknown): unknown {
  if (value instanceof Error) {
    const cause = value.cause === undefined ? {} : { cause: maskForLog(masker, value.cause) };
    return { type: value.name, message: masker.mask(value.message), ...(value.stack ? { stack: masker.mask(value.stack) } : {}), ...cause };
  }
  if (typeof value === 'string') return maskValue(masker, value);
  if (Array.isArray(value)) return value.map((item) => maskForLog(masker, item));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskForLog(masker, item)]));
  return value;
}
