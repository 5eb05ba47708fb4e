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
export type Command = 'version' | 'init' | 'validate' | 'plan' | 'show' | 'apply' | 'output' | 'state pull' | 'state push' | 'state rm' | 'force-unlock';

/** How an exit code reads for a command. Only `plan -detailed-exitcode` gives 2 a meaning. */
export type ExitMeaning = 'ok' | 'changes' | 'error';

export function interpretExit(command: Command, exitCode: number, detailedExitCode = false): ExitMeaning {
  if (exitCode === 0) return 'ok';
  if (command === 'plan' && detailedExitCode && exitCode === 2) return 'changes';
  return 'error';
}

/**
 * A saved plan as terraform gets it: a path, or a file the runner holds open, passed to terraform as
 * its descriptor 3 and named `/dev/fd/3` (terraform 1.11 shows and applies a plan read that way), so
 * terraform reads the very file the runner hashed.
 */
export type PlanFileRef = string | { readonly fd: number };

const PASSED_PLAN_FD = 3;

/** The plan argument and the descriptors terraform must inherit for it. */
export function planFileArgument(plan: PlanFileRef): { arg: string; passFds: number[] } {
  return typeof plan === 'string' ? { arg: plan, passFds: [] } : { arg: `/dev/fd/${PASSED_PLAN_FD}`, passFds: [plan.fd] };
}

export async function run<T = unknown>(
  tf: Terraform,
  command: Command,
  args: readonly string[],
  extra: Pick<RunOptions, 'consumeStdout' | 'captureStdout' | 'passFds'> = {},
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
  const diagnostic = lastDiagnostic(result.stderrTail) ?? result.stderrTail.trim().split('\n').at(-1);
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

/**
 * terraform's last "Error:" diagnostic on one line: the summary and the paragraph after it (where
 * terraform says what is wrong), without the box drawing. undefined when there is none.
 */
export function lastDiagnostic(stderr: string): string | undefined {
  // Only box drawing, spaces and tabs go: other white space may belong to a secret the masker must still find.
  const lines = stderr.split('\n').map((l) => l.replace(/^[│╷╵ \t]+/, '').replace(/[ \t]+$/, ''));
  const start = lines.findLastIndex((line) => line.startsWith('Error:'));
  if (start < 0) return undefined;
  let from = start + 1;
  while (from < lines.length && lines[from] === '') from++; // the blank line after the summary
  // Skip the location and the quoted source ("on main.tf line 3:", "  30:   provisioner …").
  while (from < lines.length && /^(on .* line \d+|with |\d+:)/.test(lines[from]!)) from++;
  while (from < lines.length && lines[from] === '') from++;
  let to = from;
  while (to < lines.length && lines[to] !== '') to++;
  const detail = lines.slice(from, to).join(' ').trim();
  return detail ? `${lines[start]} ${detail}` : lines[start];
}
