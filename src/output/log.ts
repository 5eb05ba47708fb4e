// The runner's log stream (stderr): JSON objects only, one to a line (stdout carries terraform's human
// output and the summary). What terraform writes to its stderr becomes records of their own
// (`source: "terraform"`), so that no line of terraform's can pass for one of the runner's. Values are
// masked one by one before pino serialises them, never the serialised line: the line stays JSON
// whatever a secret equals, and the fields that hold only the runner's own words stay as they are.
import { pino, type Logger } from 'pino';
import { Writable } from 'node:stream';
import { writeSync } from 'node:fs';
import { maskValue, type Masker } from '../masking/mask.ts';
import { printable, printableJson, printableLine } from './printable.ts';

export type { Logger };

/** How every line of terraform's output starts where people read it (stdout; stderr with `--log-format pretty`): a line without it is the runner's. */
export const TERRAFORM_LINE_PREFIX = '| ';

/**
 * The fields of a record that hold only the runner's own words (an op, a step, an outcome, a reason,
 * a kind of error or object, a stop's cause, …): never masked, so that a secret equal to one of them
 * ("apply") leaves them readable; every other string value is masked, and no key ever is.
 */
export const RUNNER_WORD_FIELDS: readonly string[] = [
  'op',
  'step',
  'outcome',
  'reason',
  'kind',
  'cause',
  'output',
  'action',
  'source',
  'command',
  'stream',
];
const RUNNER_WORDS = new Set(RUNNER_WORD_FIELDS);

/** A record whose message the runner masked already (terraform's lines, masked across line breaks). */
const MASKED_MESSAGE = Symbol('masked message');

/**
 * A synchronous writer of log lines to a file descriptor, each line as `format` leaves it: logs must
 * not be lost when the process exits. A full pipe (stderr is non-blocking once Node opened it) is
 * waited out for a while, but never so long that signals and the deadline wait on it: a line the
 * reader does not take in time is dropped. A reader that went away drops the logs, never the op.
 */
export function logWriter(fd: number, format: (line: string) => string): Writable {
  let gone = false;
  return new Writable({
    write(chunk, _encoding, callback) {
      if (!gone) {
        try {
          writeAllSync(fd, Buffer.from(format(chunk.toString())));
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
/** What a stalled write waits on, made at the first wait: a startup snapshot holds no SharedArrayBuffer (src/startup-snapshot.ts). */
let pause: Int32Array | undefined;

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
      pause ??= new Int32Array(new SharedArrayBuffer(4));
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

export async function createLogger(
  format: 'json' | 'pretty',
  masker: Masker,
  bindings: RunBindings,
  fd = 2,
): Promise<Logger> {
  const destination = logWriter(fd, format === 'pretty' ? await prettyLines(Object.keys(bindings)) : printableJson);
  return pino(
    {
      base: null,
      // On every line, so that a line read alone (a log collector's query) names its run; masked at
      // each line, for the masker learns secrets as the run goes.
      mixin: () => ({
        op: bindings.op,
        object: maskValue(masker, bindings.object),
        namespace: maskValue(masker, bindings.namespace),
      }),
      timestamp: pino.stdTimeFunctions.isoTime,
      messageKey: 'msg',
      hooks: {
        logMethod(args, method) {
          method.apply(this, maskedArguments(masker, args) as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}

/** pino's level of `info`: a record at it or below is the run's progress, which the JSON log keeps whole. */
const INFO_LEVEL = 30;

/**
 * Lines for a person (`--log-format pretty`): pino-pretty's, loaded only then (Jobs log JSON), the
 * run's bindings named once in the first line, not under every line; terraform's lines as on stdout.
 * A message is one line: nothing in it starts a line that could pass for another record. What a
 * person reads: a progress record (info) is its message alone, one line (its fields, the step's
 * duration and the like, stay in the JSON log, `--log-format json`); a warning or an error keeps its fields.
 */
async function prettyLines(bindingKeys: string[]): Promise<(line: string) => string> {
  const { prettyFactory } = (await import('pino-pretty')).default;
  const pretty = prettyFactory({ colorize: false, ignore: ['pid', 'hostname', ...bindingKeys].join(',') });
  return (line) => {
    const record = JSON.parse(line) as Record<string, unknown>;
    const message = printableLine(String(record.msg ?? ''));
    if (record.source === 'terraform') return `${TERRAFORM_LINE_PREFIX}${message}\n`;
    const level = typeof record.level === 'number' ? record.level : INFO_LEVEL;
    const shown = level <= INFO_LEVEL ? { level, time: record.time } : record;
    return printable(pretty({ ...shown, msg: message }));
  };
}

/** One line terraform printed on its stderr (masked by the caller): a record of its own, naming the command and the step it came from. */
export function logTerraformLine(
  log: Logger,
  from: { command: string; step: string | undefined },
  maskedLine: string,
): void {
  log.info(
    { [MASKED_MESSAGE]: true, source: 'terraform', command: from.command, stream: 'stderr', step: from.step ?? null },
    maskedLine,
  );
}

/** pino's arguments (a record's fields, then its message), masked value by value. */
function maskedArguments(masker: Masker, args: unknown[]): unknown[] {
  const [first, ...rest] = args;
  if (first === null || typeof first !== 'object' || first instanceof Error || Array.isArray(first))
    return args.map((arg) => maskForLog(masker, arg));
  const fields = Object.fromEntries(
    Object.entries(first).map(([key, value]) => [
      key,
      RUNNER_WORDS.has(key) && typeof value === 'string' ? value : maskForLog(masker, value),
    ]),
  );
  const masked = MASKED_MESSAGE in first;
  return [fields, ...rest.map((arg) => (masked ? arg : maskForLog(masker, arg)))];
}

/** A log argument, masked: strings and the fields of objects; an error becomes its type, message and stack, masked. */
function maskForLog(masker: Masker, value: unknown): unknown {
  if (value instanceof Error) {
    const cause = value.cause === undefined ? {} : { cause: maskForLog(masker, value.cause) };
    return {
      type: value.name,
      message: masker.mask(value.message),
      ...(value.stack ? { stack: masker.mask(value.stack) } : {}),
      ...cause,
    };
  }
  if (typeof value === 'string') return maskValue(masker, value);
  if (Array.isArray(value)) return value.map((item) => maskForLog(masker, item));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskForLog(masker, item)]));
  return value;
}
