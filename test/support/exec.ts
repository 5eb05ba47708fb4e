// Starts a process for a test (never through a shell) and gives back what it printed. Not execa: a
// test needs none of what it adds, and each test process would load its hundred-odd modules (≈ 35 ms
// of CPU from the test bundles, ≈ 0.45 s when a file runs under tsx).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

export interface ProcessRun {
  /** undefined when a signal ended the process. */
  exitCode: number | undefined;
  signal: NodeJS.Signals | undefined;
  /** What the process printed, as UTF-8, without one final newline (as execa gives it). */
  stdout: string;
  stderr: string;
  /** The process outlived `timeoutMs` and was stopped (SIGTERM, then SIGKILL 5 s later). */
  timedOut: boolean;
}

export interface ProcessOptions {
  cwd?: string;
  /** The whole environment of the process: nothing of the test process's own is added. */
  env?: Record<string, string>;
  /** Written to its stdin, then closed; without it stdin is /dev/null. */
  input?: string;
  timeoutMs?: number;
  /** What it printed byte for byte, its final newline kept (a capture of terraform's output). */
  keepFinalNewline?: boolean;
  /** In a process group of its own, SIGKILLed when the process ends or times out: nothing it started (a local-exec) outlives it. */
  ownGroup?: boolean;
}

/** SIGKILLs the process group `pid` leads, if it is still there. */
export function killProcessGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is gone
  }
}

const withoutFinalNewline = (text: string) => text.replace(/\r?\n$/, '');

/** Runs `file` to its end; rejects only when it cannot be started (ENOENT, EACCES). */
export function runProcess(file: string, args: readonly string[], options: ProcessOptions = {}): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      detached: options.ownGroup === true,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const stop = (signal: NodeJS.Signals) => (options.ownGroup ? killProcessGroup(child.pid) : child.kill(signal));
    const printed = (chunks: Buffer[]) => {
      const text = Buffer.concat(chunks).toString('utf8');
      return options.keepFinalNewline ? text : withoutFinalNewline(text);
    };
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
    let timedOut = false;
    const timers: NodeJS.Timeout[] = [];
    if (options.timeoutMs !== undefined) {
      timers.push(
        setTimeout(() => {
          timedOut = true;
          stop('SIGTERM');
          timers.push(setTimeout(() => stop('SIGKILL'), 5000));
        }, options.timeoutMs),
      );
    }
    const stopTimers = () => timers.forEach(clearTimeout);
    child.once('error', (error) => {
      stopTimers();
      reject(error);
    });
    child.once('close', (code, signal) => {
      stopTimers();
      if (options.ownGroup) killProcessGroup(child.pid);
      resolve({
        exitCode: code ?? undefined,
        signal: signal ?? undefined,
        stdout: printed(stdout),
        stderr: printed(stderr),
        timedOut,
      });
    });
    if (options.input !== undefined) {
      child.stdin!.on('error', () => {}); // a process that exits without reading its input
      child.stdin!.end(options.input);
    }
  });
}

/** Like runProcess, for a step of a test's own setup (mkfifo, mount): rejects unless the process exits 0. */
export async function runChecked(
  file: string,
  args: readonly string[],
  options: ProcessOptions = {},
): Promise<ProcessRun> {
  const run = await runProcess(file, args, options);
  if (run.exitCode !== 0)
    throw new Error(`${file} ${args.join(' ')} failed (${run.exitCode ?? run.signal}): ${run.stderr.slice(-2000)}`);
  return run;
}

export interface Background {
  child: ChildProcess;
  /** Resolves when the process has exited, with what it printed until then. */
  exited: Promise<{ exitCode: number | null; stdout: string; stderr: string }>;
}

/**
 * Starts `file` in the background, in a process group of its own, and resolves once its stdout or
 * stderr has printed `mark` (rejects if it exits first). Its group is SIGKILLed after `killAfterMs`,
 * so a hung test process never outlives the test file.
 */
export async function startInBackground(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env: Record<string, string>; mark: string; killAfterMs: number },
): Promise<Background> {
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killer = setTimeout(() => killProcessGroup(child.pid), options.killAfterMs);
  const printed = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk: Buffer) => (printed.stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (printed.stderr += chunk.toString()));
  const exited = new Promise<{ exitCode: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (exitCode) => {
      clearTimeout(killer);
      resolve({ exitCode, ...printed });
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const seen = () => {
      if (printed.stdout.includes(options.mark) || printed.stderr.includes(options.mark)) resolve();
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    void exited.then(() =>
      reject(new Error(`${file} exited before it printed ${options.mark}: ${printed.stderr.slice(-2000)}`)),
    );
  });
  return { child, exited };
}

/** The non-empty lines of `file` (none while it does not exist): what a process appended so far. */
export const fileLines = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

/** Resolves once `ok()` holds (polled every 50 ms); fails naming `what` after `withinMs`. */
export async function until(what: string, ok: () => boolean, withinMs = 60_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what}: not after ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
