// What every terraform command needs: the binary, the working directory, the environment and
// where its human output goes. Exit codes are interpreted here, in one place.
import { RunnerError } from '../errors.ts';
import { detectLockError } from './lock.ts';
import { runTerraform, type OutputSink, type RunOptions, type RunResult } from './exec.ts';

export interface Terraform {
  path: string;
  cwd: string;
  env: Record<string, string>;
  output: OutputSink;
}

/** The commands the runner runs, named as steps in results and logs. */
export type Command = 'version' | 'init' | 'validate' | 'plan' | 'show' | 'apply' | 'output' | 'state pull' | 'state push' | 'force-unlock';

/** How an exit code reads for a command. Only `plan -detailed-exitcode` gives 2 a meaning. */
export type ExitMeaning = 'ok' | 'changes' | 'error';

export function interpretExit(command: Command, exitCode: number, detailedExitCode = false): ExitMeaning {
  if (exitCode === 0) return 'ok';
  if (command === 'plan' && detailedExitCode && exitCode === 2) return 'changes';
  return 'error';
}

export async function run<T = unknown>(
  tf: Terraform,
  command: Command,
  args: readonly string[],
  extra: Pick<RunOptions, 'consumeStdout' | 'captureStdout'> = {},
): Promise<RunResult<T>> {
  try {
    return await runTerraform<T>({ terraformPath: tf.path, cwd: tf.cwd, env: tf.env, output: tf.output, args, ...extra });
  } catch (error) {
    if (error instanceof RunnerError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new RunnerError({
      kind: code === 'ENOENT' || code === 'EACCES' ? 'image' : 'terraform',
      reason: code === 'ENOENT' || code === 'EACCES' ? 'ImageInvalid' : 'TerraformFailed',
      step: command,
      message: `could not run ${tf.path} ${command}: ${(error as Error).message}`,
      cause: error,
    });
  }
}

/** Turns a failed run into a RunnerError: a lock held elsewhere is its own kind, so the controller can tell. */
export function commandFailed(command: Command, result: RunResult, reason: string): RunnerError {
  const lock = detectLockError(result.stderrTail);
  const diagnostic = lastError(result.stderrTail);
  const how = result.signal ? `was killed by ${result.signal}` : `exited ${result.exitCode}`;
  if (lock) {
    return new RunnerError({
      kind: 'lock',
      reason: 'StateLocked',
      step: command,
      message: `terraform ${command} could not acquire the state lock: ${lock.holderKnown ? `held by ${lock.who ?? 'unknown'} (lock id ${lock.id ?? 'unknown'}, since ${lock.created ?? 'unknown'})` : 'the backend does not say who holds it'}. Wait for the other run to finish, or if its owner is gone, unlock it (captf-runner unlock --lock-id ID where the backend reports one).`,
      detail: { lock },
    });
  }
  return new RunnerError({
    kind: 'terraform',
    reason,
    step: command,
    message: `terraform ${command} ${how}${diagnostic ? `: ${diagnostic}` : ''}`,
    detail: { exitCode: result.exitCode, ...(result.signal ? { signal: result.signal } : {}) },
  });
}

/** The first line of terraform's last "Error:" diagnostic, for a one-line message. */
function lastError(stderr: string): string | undefined {
  const lines = stderr.split('\n').map((l) => l.replace(/^[│╷╵\s]+/, '').trim());
  const index = lines.findLastIndex((l) => l.startsWith('Error:'));
  if (index < 0) return lines.filter(Boolean).at(-1);
  // Skip the location and the quoted source lines ("on main.tf line 3", "with …", "30:   provisioner …").
  const detail = lines.slice(index + 1).find((l) => l.length > 0 && !l.startsWith('on ') && !l.startsWith('with ') && !/^\d+:/.test(l));
  return detail ? `${lines[index]} ${detail}` : lines[index];
}
