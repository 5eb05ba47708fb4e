// The one funnel every terraform process runs through (only createTerraform, terraform.ts, calls
// it): argument arrays (never a shell), the environment rules, terraform's human output streamed
// (masked) as it comes, and registration with the run's stop handle while it runs. terraform's stdout
// and stderr are read into one reused buffer each (util/socket-chunks.ts), not a new Buffer a read.
import { execa } from 'execa';
import { tmpdir } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { RunnerError } from '../errors.ts';
import { maskThenCutStart, NOTHING_SECRET } from '../masking/boundary.ts';
import type { Masker } from '../masking/mask.ts';
import { readLineBatches } from '../util/lines.ts';
import { openOutputChannels, type OutputChannel } from '../util/socket-chunks.ts';
import { killGroup, type StopHandle } from './stop.ts';

/** Environment variables removed before terraform runs: each would change what terraform does behind the runner's back. */
const REMOVED_ENV_PATTERNS: readonly RegExp[] = [
  /^TF_CLI_ARGS(_.*)?$/, // extra arguments on every command
  /^TF_VAR_/, //            variables from outside the inputs dir, so outside the inputs hash
  /^TF_WORKSPACE$/, //      a different state
  /^TF_DATA_DIR$/, //       the runner owns the working directory
  /^TF_LOG(_.*)?$/, //      trace logs print variable values in clear
  /^TF_INPUT$/, //          the runner never prompts
  /^TF_REATTACH_PROVIDERS$/, // providers served by some other process instead of the image's
];

export function terraformEnv(base: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || REMOVED_ENV_PATTERNS.some((p) => p.test(name))) continue;
    env[name] = value;
  }
  env.TF_IN_AUTOMATION = '1';
  env.TF_INPUT = '0';
  env.CHECKPOINT_DISABLE = '1';
  return env;
}

export interface OutputSink {
  /**
   * Lines of terraform's human-readable output (each without its newline): those one read of the
   * pipe ended. A returned promise is backpressure: no more of terraform's output is read until it settles.
   */
  lines(stream: 'stdout' | 'stderr', texts: readonly string[]): void | Promise<void>;
  /** The stream ended (a sink may hold a line back until it knows what follows). */
  end?(stream: 'stdout' | 'stderr'): void | Promise<void>;
}

export interface RunOptions {
  terraformPath: string;
  cwd: string;
  args: readonly string[];
  /** The runner's environment: terraform gets it as terraformEnv leaves it. */
  env: NodeJS.ProcessEnv;
  /** The run's stop handle: it can interrupt terraform while it runs. */
  stop: StopHandle;
  /** Where human output goes. Ignored for stdout when `consumeStdout` takes the stream. */
  output: OutputSink;
  /**
   * Reads stdout as it comes (e.g. show -json) instead of printing it. Each chunk is a view of one
   * reused buffer, valid until the next is asked for: a consumer that keeps bytes copies them. What it
   * leaves unread (it stopped early, or failed) is drained, so terraform is never blocked on its output.
   */
  consumeStdout?: (stdout: AsyncIterable<Buffer>) => Promise<unknown>;
  /** Keep stdout in memory (small documents only: version, validate, output). */
  captureStdout?: boolean;
  /**
   * With captureStdout, the bytes of stdout kept at most (default 32 MiB); past them the output is cut
   * to its first KiB and the rest drained without being decoded or kept.
   */
  captureStdoutBytes?: number;
  /** Open files of the runner terraform inherits, as its descriptors 3, 4, … (a held plan file). */
  passFds?: readonly number[];
  /** Told once terraform's process exists (never when it could not be started): from then on it may act. */
  onStart?: () => void;
  /** The run's masker: the tail of stderr is masked with it before it is cut (none: nothing is secret). */
  masker?: Pick<Masker, 'secretRanges'>;
  /**
   * Awaited once terraform has ended, before the tail of stderr is masked: a caller that teaches the
   * masker only after terraform ran (the state a plan was made against) does it here when it failed.
   */
  beforeTail?: (ended: { exitCode: number | undefined; signal: string | undefined }) => Promise<void>;
}

export interface RunResult<T = unknown> {
  exitCode: number;
  /** Set when terraform died by a signal. */
  signal?: string;
  stdout: string;
  /** The tail of stderr, masked, for error messages and lock detection (LineTail). */
  stderrTail: string;
  /** false when stderr was longer than its tail: what terraform printed first is gone from it. */
  stderrComplete: boolean;
  consumed?: T;
  durationMs: number;
}

const STDERR_TAIL_BYTES = 16 * 1024;
/**
 * What is kept of stderr before its tail, for the masker to see a secret the tail's cut falls inside
 * whole: a secret printed longer than this, begun before it, is not seen (contract faults §5).
 */
const STDERR_TAIL_CONTEXT = 64 * 1024;
/** Captured stdout (version, validate, output: small JSON documents) stops growing here; the rest is drained. */
const CAPTURE_LIMIT_BYTES = 32 * 1024 * 1024;

export async function runTerraform<T = unknown>(options: RunOptions): Promise<RunResult<T>> {
  const started = Date.now();
  const [out, err] = await outputChannels();
  let child: ReturnType<typeof spawnTerraform>;
  try {
    child = spawnTerraform(options, out, err);
  } catch (error) {
    out.destroy();
    err.destroy();
    throw error;
  }
  const pid = child.pid;
  const ended = pid === undefined ? () => {} : options.stop.started(pid);
  if (pid !== undefined) options.onStart?.();

  const stderrTail = new LineTail(options.masker);
  const stderrDone = forEachBatch(err.chunks(), (texts) => {
    for (const text of texts) stderrTail.push(text);
    return options.output.lines('stderr', texts);
  });

  let stdout = '';
  let stdoutOverflow = false;
  let consumed: unknown;
  let consumeError: unknown;
  let stdoutDone: Promise<unknown>;
  if (options.consumeStdout) {
    stdoutDone = options.consumeStdout(out.chunks()).then(
      (value) => (consumed = value),
      (error) => (consumeError = error),
    );
    // What the consumer left unread is drained, so terraform is not blocked on a full socket.
    stdoutDone = stdoutDone.then(() => drain(out));
  } else if (options.captureStdout) {
    const limit = options.captureStdoutBytes ?? CAPTURE_LIMIT_BYTES;
    stdoutDone = (async () => {
      // Bytes, decoded only while they are kept: what is drained past the limit is never made a string.
      const decoder = new StringDecoder('utf8');
      let kept = 0;
      for await (const chunk of out.chunks()) {
        if (stdoutOverflow) continue;
        if (kept + chunk.length > limit) stdoutOverflow = true;
        else {
          kept += chunk.length;
          stdout += decoder.write(chunk);
        }
      }
      if (!stdoutOverflow) stdout += decoder.end();
    })();
  } else {
    stdoutDone = forEachBatch(out.chunks(), (texts) => options.output.lines('stdout', texts));
  }

  let finished: Awaited<typeof child>;
  try {
    finished = await child;
  } finally {
    // terraform has exited: with the runner's copies of its ends closed, the reads end once whatever it
    // started in its group (a local-exec child) has closed them too.
    out.closeChildEnd();
    err.closeChildEnd();
  }
  await Promise.all([stdoutDone, stderrDone]);
  await options.output.end?.('stdout');
  await options.output.end?.('stderr');
  // With reject:false a spawn failure (ENOENT, EACCES) comes back as a result: raise it as the error it is.
  if (finished.exitCode === undefined && !finished.signal && finished.cause instanceof Error) {
    ended();
    throw finished.cause;
  }
  if (pid !== undefined) killGroup(pid, 'SIGKILL'); // end what it left behind (local-exec children), whatever the exit
  ended();
  // More than any document the runner reads: cut, so it fails to parse where it is read.
  if (stdoutOverflow) stdout = stdout.slice(0, 1024);
  if (consumeError !== undefined && finished.exitCode === 0) throw consumeError;
  await options.beforeTail?.({ exitCode: finished.exitCode, signal: finished.signal ?? undefined });

  return {
    exitCode: finished.exitCode ?? (finished.signal ? 128 + signalNumber(finished.signal) : 1),
    signal: finished.signal ?? undefined,
    stdout,
    stderrTail: stderrTail.text(),
    stderrComplete: stderrTail.complete,
    consumed: consumed as T,
    durationMs: Date.now() - started,
  };
}

/**
 * The tail of what terraform printed: its last STDERR_TAIL_BYTES from the start of a line, masked
 * before it is cut (maskThenCutStart), with STDERR_TAIL_CONTEXT of what came before it in view. A line
 * cut away could hold the beginning of a secret terraform wrapped onto the tail's first line: masked
 * whole with its beginning, no part of it stays. Lines are cut down to the window in batches of twice
 * its size, not at every line: cutting at every line copied the window whole each time.
 */
export class LineTail {
  #window = '';
  #pending: string[] = [];
  #length = 0;
  /** Whether every line is still held (nothing was ever cut). */
  complete = true;

  constructor(private readonly masker: Pick<Masker, 'secretRanges'> = NOTHING_SECRET) {}

  push(line: string): void {
    this.#pending.push(line, '\n');
    this.#length += line.length + 1;
    if (this.#length > STDERR_TAIL_BYTES) this.complete = false;
    if (this.#length > 2 * (STDERR_TAIL_BYTES + STDERR_TAIL_CONTEXT)) this.#cut();
  }

  /** The tail, masked (every call masks it again: call it once). */
  text(): string {
    this.#cut();
    return maskThenCutStart(this.masker, this.#window, STDERR_TAIL_BYTES);
  }

  #cut(): void {
    if (this.#pending.length === 0) return;
    const kept = STDERR_TAIL_BYTES + STDERR_TAIL_CONTEXT;
    const added = this.#pending.join('');
    // Sliced apart, then joined: slicing the joined whole copied it at ≈ 0.7 ms a cut (25 times slower).
    this.#window = added.length >= kept ? added.slice(-kept) : this.#window.slice(-(kept - added.length)) + added;
    this.#pending = [];
    this.#length = this.#window.length;
  }
}

/** The two channels terraform's stdout and stderr are read through; a temp directory that cannot hold their sockets is the run's to fix. */
async function outputChannels(): Promise<[OutputChannel, OutputChannel]> {
  try {
    const [out, err] = await openOutputChannels(2);
    return [out!, err!];
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new RunnerError({
      kind: 'io',
      reason: 'WorkdirUnusable',
      message: `terraform's output cannot be read: the runner makes the sockets it reads it through in a new directory of ${tmpdir()}, which failed (${code ?? (error as Error).message}): give the runner a writable TMPDIR with a short path (an emptyDir volume in a Job)`,
      cause: error,
    });
  }
}

function spawnTerraform(options: RunOptions, out: OutputChannel, err: OutputChannel) {
  return execa(options.terraformPath, options.args, {
    cwd: options.cwd,
    env: terraformEnv(options.env),
    extendEnv: false,
    reject: false,
    // execa's types list only descriptors 3–9 for the parent's files; it passes any number to spawn.
    stdio: ['ignore', out.childEnd, err.childEnd, ...((options.passFds ?? []) as 3[])],
    buffer: false,
    // Its own process group: a signal sent to the runner's group must not reach terraform a second time.
    detached: true,
    windowsHide: true,
  });
}

async function drain(channel: OutputChannel): Promise<void> {
  for await (const _ of channel.chunks());
}

async function forEachBatch(
  chunks: AsyncIterable<Buffer>,
  onLines: (texts: string[]) => void | Promise<void>,
): Promise<void> {
  for await (const texts of readLineBatches(chunks)) {
    const wait = onLines(texts);
    if (wait) await wait; // the sink is full (a slow log reader): terraform waits on its pipe, memory stays flat
  }
}

function signalNumber(signal: string): number {
  const numbers: Record<string, number> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15, SIGSEGV: 11, SIGABRT: 6, SIGHUP: 1 };
  return numbers[signal] ?? 0;
}
