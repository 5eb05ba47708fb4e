import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { succeeded, type Terraform } from './terraform.ts';

export interface StateResult {
  exitCode: number;
}

/** -no-color: its refusals would be coloured (stdout, the state itself, is the same either way). */
export const statePullArgs = (): string[] => ['state', 'pull', '-no-color'];

/** Streams the current state to a new file (states can be large), mode 0600: it holds secrets. The file must not exist yet. */
export async function statePull(tf: Terraform, toFile: string): Promise<StateResult> {
  const run = await tf.run('state pull', statePullArgs(), {
    consumeStdout: (stdout) => pipeline(stdout, createWriteStream(toFile, { mode: 0o600, flags: 'wx' })),
  });
  return { exitCode: succeeded(run, 'StatePullFailed').exitCode };
}

export interface StatePushOptions {
  force?: boolean;
  lockTimeout?: string;
}

/** -no-color: without it terraform colours its refusals with ANSI escapes, even on a pipe, and they would reach messages and logs. */
export const statePushArgs = (file: string, o: StatePushOptions = {}): string[] => [
  'state',
  'push',
  '-no-color',
  ...(o.force ? ['-force'] : []),
  ...(o.lockTimeout ? [`-lock-timeout=${o.lockTimeout}`] : []),
  file,
];

export async function statePush(tf: Terraform, file: string, options: StatePushOptions = {}): Promise<StateResult> {
  const run = await tf.run('state push', statePushArgs(file, options));
  return { exitCode: succeeded(run, 'StatePushFailed').exitCode };
}
