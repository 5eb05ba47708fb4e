// The one funnel every terraform command runs through: argument arrays (never a shell), a
// controlled environment, terraform's human output streamed (masked) as it comes, and a stop
// sequence that sends exactly one interrupt before escalating.
import { execa, type ResultPromise } from 'execa';
import type { Readable } from 'node:stream';
import { createInterface } from 'node:readline';

/** Environment variables removed before terraform runs: each would change what terraform does behind the runner's back. */
export const REMOVED_ENV_PATTERNS: readonly RegExp[] = [
  /^TF_CLI_ARGS(_.*)?$/, // extra arguments on every command
  /^TF_VAR_/, //            variables from outside the inputs dir, so outside the inputs hash
  /^TF_WORKSPACE$/, //      a different state
  /^TF_DATA_DIR$/, //       the runner owns the working directory
  /^TF_LOG(_.*)?$/, //      trace logs print variable values in clear
  /^TF_INPUT$/, //          the runner never prompts
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
  /** A line of terraform's human-readable output (already without its newline). */
  line(stream: 'stdout' | 'stderr', text: string): void;
}

export interface RunOptions {
  terraformPath: string;
  cwd: string;
  args: readonly string[];
  env: Record<string, string>;
  /** Where human output goes. Ignored for stdout when `consumeStdout` takes the stream. */
  output: OutputSink;
  /** Reads stdout as a stream (e.g. show -json) instead of printing it. */
  consumeStdout?: (stdout: Readable) => Promise<unknown>;
  /** Keep stdout in memory (small documents only: version, validate, output). */
  captureStdout?: boolean;
}

export interface RunResult<T = unknown> {
  exitCode: number;
  /** Set when terraform died by a signal. */
  signal?: string;
  stdout: string;
  /** The tail of stderr, for error messages and lock detection. */
  stderrTail: string;
  consumed?: T;
  durationMs: number;
}

const STDERR_TAIL_BYTES = 16 * 1024;

/** The terraform process running now, so a signal handler can stop it. One at a time: steps are sequential. */
let current: { child: ResultPromise; pid: number } | undefined;

export async function runTerraform<T = unknown>(options: RunOptions): Promise<RunResult<T>> {
  const started = Date.now();
  const child = execa(options.terraformPath, options.args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    // Its own process group: a signal sent to the runner's group must not reach terraform a second time.
    detached: true,
    windowsHide: true,
  });
  const pid = child.pid;
  if (pid !== undefined) current = { child, pid };

  let stderrTail = '';
  const stderrDone = forEachLine(child.stderr!, (text) => {
    options.output.line('stderr', text);
    stderrTail = (stderrTail + text + '\n').slice(-STDERR_TAIL_BYTES);
  });

  let stdout = '';
  let consumed: unknown;
  let consumeError: unknown;
  let stdoutDone: Promise<unknown>;
  if (options.consumeStdout) {
    stdoutDone = options.consumeStdout(child.stdout!).then(
      (value) => (consumed = value),
      (error) => {
        consumeError = error;
        child.stdout!.resume(); // drain, so terraform is not blocked on a full pipe
      },
    );
  } else if (options.captureStdout) {
    stdoutDone = (async () => {
      child.stdout!.setEncoding('utf8');
      for await (const chunk of child.stdout!) stdout += chunk;
    })();
  } else {
    stdoutDone = forEachLine(child.stdout!, (text) => options.output.line('stdout', text));
  }

  const finished = await child;
  await Promise.all([stdoutDone, stderrDone]);
  // With reject:false a spawn failure (ENOENT, EACCES) comes back as a result: raise it as the error it is.
  if (finished.exitCode === undefined && !finished.signal && finished.cause instanceof Error) {
    if (current?.pid === pid) current = undefined;
    throw finished.cause;
  }
  if (pid !== undefined) {
    killGroup(pid, 'SIGKILL'); // end what it left behind (local-exec children), whatever the exit
    if (current?.pid === pid) current = undefined;
  }
  if (consumeError !== undefined && finished.exitCode === 0) throw consumeError;

  return {
    exitCode: finished.exitCode ?? (finished.signal ? 128 + signalNumber(finished.signal) : 1),
    signal: finished.signal ?? undefined,
    stdout,
    stderrTail,
    consumed: consumed as T,
    durationMs: Date.now() - started,
  };
}

async function forEachLine(stream: Readable, onLine: (text: string) => void): Promise<void> {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  for await (const text of lines) onLine(text);
}

function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // the group is already gone
  }
}

function signalNumber(signal: string): number {
  const numbers: Record<string, number> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15, SIGSEGV: 11, SIGABRT: 6, SIGHUP: 1 };
  return numbers[signal] ?? 0;
}

/** Whether a terraform process is running now. */
export const terraformRunning = () => current !== undefined;

/**
 * Terraform's graceful stop: exactly one SIGINT (it stops starting operations, saves state and
 * releases the lock). A second SIGINT makes it exit at once; SIGKILL ends the group.
 */
export function interruptTerraform(level: 'graceful' | 'immediate' | 'kill'): void {
  if (!current) return;
  if (level === 'kill') killGroup(current.pid, 'SIGKILL');
  else process.kill(current.pid, 'SIGINT');
}
