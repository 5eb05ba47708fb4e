import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { commandFailed, run, type Terraform } from './terraform.ts';

export const statePullArgs = (): string[] => ['state', 'pull'];

/** Streams the current state to a new file (states can be large), mode 0600: it holds secrets. The file must not exist yet. */
export async function statePull(tf: Terraform, toFile: string): Promise<{ exitCode: number }> {
  const result = await run(tf, 'state pull', statePullArgs(), {
    consumeStdout: (stdout) => pipeline(stdout, createWriteStream(toFile, { mode: 0o600, flags: 'wx' })),
  });
  if (result.exitCode !== 0) throw commandFailed('state pull', result, 'StatePullFailed');
  return { exitCode: 0 };
}

export interface StatePushOptions {
  force?: boolean;
  lockTimeout?: string;
}

export const statePushArgs = (file: string, o: StatePushOptions = {}): string[] => [
  'state',
  'push',
  ...(o.force ? ['-force'] : []),
  ...(o.lockTimeout ? [`-lock-timeout=${o.lockTimeout}`] : []),
  file,
];

export async function statePush(tf: Terraform, file: string, options: StatePushOptions = {}): Promise<{ exitCode: number }> {
  const result = await run(tf, 'state push', statePushArgs(file, options));
  if (result.exitCode !== 0) throw commandFailed('state push', result, 'StatePushFailed');
  return { exitCode: 0 };
}

export const forceUnlockArgs = (lockId: string): string[] => ['force-unlock', '-force', lockId];

export async function forceUnlock(tf: Terraform, lockId: string): Promise<{ exitCode: number }> {
  const result = await run(tf, 'force-unlock', forceUnlockArgs(lockId));
  if (result.exitCode !== 0) throw commandFailed('force-unlock', result, 'UnlockFailed');
  return { exitCode: 0 };
}
