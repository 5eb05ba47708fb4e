// Each op runs as a child process of the runner's own entrypoint, with an argument array, exactly
// as a Job runs it: the same flags, the same result.json, the same exit code. In-process would
// share one process's signal handlers, exit code and terraform process group between the
// reconcile and the op, and the local lifecycle would no longer exercise what a cluster runs.
import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import { constants } from 'node:os';
import { RunnerError } from '../errors.ts';

/**
 * How this process was started (node [--snapshot-blob BLOB | --import tsx] <entrypoint>), so the child
 * is the same runner started the same way: through the startup snapshot when this process was (the
 * image's command), the plain bundle when not (no blob, NODE_OPTIONS: the child inherits the environment).
 */
function runnerEntrypoint(): { command: string; prefix: string[] } {
  const entrypoint = process.argv[1];
  if (!entrypoint)
    throw new RunnerError({
      kind: 'internal',
      reason: 'EntrypointUnknown',
      message: 'cannot tell which script is the runner (process.argv[1] is empty)',
    });
  return { command: process.execPath, prefix: [...process.execArgv, entrypoint] };
}

export interface RunnerProcessOptions {
  /** Where the runner's stdout and stderr go; ignored when `verbose`. */
  logFile: string;
  /** Stream the runner's output (terraform's and the logs) to this terminal instead. */
  verbose: boolean;
}

/** Runs `captf-runner <args>` and resolves with its exit code. */
export async function runRunnerProcess(args: readonly string[], options: RunnerProcessOptions): Promise<number> {
  const { command, prefix } = runnerEntrypoint();
  const log = options.verbose ? undefined : await open(options.logFile, 'w');
  // A Ctrl-C reaches the runner too (same process group), and the runner stops terraform
  // gracefully and writes its result. This process waits for that instead of dying first.
  const ignore = () => {};
  process.on('SIGINT', ignore);
  process.on('SIGTERM', ignore);
  try {
    const child = spawn(command, [...prefix, ...args], { stdio: log ? ['ignore', log.fd, log.fd] : 'inherit' });
    return await new Promise<number>((resolve, reject) => {
      child.once('error', (error) =>
        reject(
          new RunnerError({
            kind: 'internal',
            reason: 'RunnerStartFailed',
            message: `could not start the runner (${command}): ${error.message}`,
            cause: error,
          }),
        ),
      );
      child.once('close', (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)));
    });
  } finally {
    process.off('SIGINT', ignore);
    process.off('SIGTERM', ignore);
    await log?.close();
  }
}
