// Where the run writes what it must report, checked in preflight before anything runs: a run that
// applied and then could not write its result would be retried by the Job, and the controller
// would never learn of the apply.
import { randomBytes } from 'node:crypto';
import { lstat, open, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Settings } from '../schemas/config.ts';
import type { Op } from '../schemas/result.ts';
import { usageError } from '../errors.ts';
import { makeDirs } from '../util/mkdirs.ts';

/**
 * The run's locations, checked; returns a warning when the run goes on without a state it was told
 * of: a `plan` of a --state FILE that does not exist (in a directory that does) is a dry run against
 * an empty state. It writes no state, and its plan, an apply of which would start the state, says
 * everything is created; the apply of it still needs --new-state.
 */
export async function checkRunLocations(settings: Settings, op: Op): Promise<string | undefined> {
  await probeWritableDir(settings.out, 0o777, '--out', 'OutDirUnusable', 'where result.json goes');
  await checkResultPath(join(settings.out, 'result.json'));
  // The default (<out>/backups) is under the dir just probed; Secrets in a cluster are not a dir.
  // 0700 as the backup store makes it: backups hold the state's secrets.
  if (settings.backups)
    await probeWritableDir(settings.backups, 0o700, '--backups', 'BackupsDirUnusable', 'where the state backups go');
  if (!settings.state) return undefined;
  const missing = await checkStatePath(settings.state, settings.newState, op === 'plan');
  if (missing && op === 'plan' && !settings.newState)
    return `--state ${settings.state} does not exist: this plan is against an empty state, so it creates everything, and no state was written. If the path is a typo, fix it and plan again; an apply of this plan starts the state only with --new-state`;
  return undefined;
}

/** Creates the dir when it is missing, then writes and removes a file in it: permission bits do not tell about a read-only mount. */
async function probeWritableDir(
  dir: string,
  mode: number,
  flag: string,
  reason: 'OutDirUnusable' | 'BackupsDirUnusable',
  what: string,
): Promise<void> {
  const probe = join(dir, `.captf-runner-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await makeDirs(dir, mode);
    await (await open(probe, 'wx', 0o600)).close();
    await rm(probe, { force: true });
  } catch (error) {
    throw usageError(
      reason,
      `${flag} ${dir} (${what}) cannot be created or written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): nothing was run. Give the runner a writable ${flag} directory.`,
    );
  }
}

/** result.json is replaced by a rename: that fails over a directory, and a special file there is not the runner's. */
async function checkResultPath(path: string): Promise<void> {
  const found = await lstat(path).catch((error: NodeJS.ErrnoException) => error);
  if (found instanceof Error && found.code === 'ENOENT') return;
  if (found instanceof Error || !found.isFile())
    throw usageError(
      'OutDirUnusable',
      `${path} is ${found instanceof Error ? `unreadable (${found.code ?? found.message})` : found.isDirectory() ? 'a directory' : 'not a regular file'}: the result could not be written there. Nothing was run. Remove it, or give the runner another --out directory.`,
    );
}

/**
 * A local state that does not exist is a new, empty state: with a typo in the path (its directory
 * or its file name), an apply would create everything a second time, and a destroy would find
 * nothing to destroy. Only a run told so (a first apply) may start one, or a plan, which writes no
 * state, in a directory that exists (`fileMayBeMissing`). Returns whether the file is missing
 * (undefined when its directory is too, with `newState`).
 */
async function checkStatePath(
  statePath: string,
  newState: boolean,
  fileMayBeMissing: boolean,
): Promise<boolean | undefined> {
  const dir = dirname(resolve(statePath));
  const found = await stat(dir).catch((error: NodeJS.ErrnoException) => error);
  if (found instanceof Error && found.code === 'ENOENT' && newState) return undefined;
  if (found instanceof Error && found.code === 'ENOENT')
    throw usageError(
      'StateDirMissing',
      `the directory of --state ${statePath} (${dir}) does not exist: a state there would be a new, empty one, and an apply would create everything again. Nothing was run. Fix the path, or pass --new-state (CAPTF_NEW_STATE=1) when this run is to start the state.`,
    );
  if (found instanceof Error || !found.isDirectory())
    throw usageError(
      'StateDirMissing',
      `the directory of --state ${statePath} (${dir}) is not a directory${found instanceof Error ? ` (${found.code ?? found.message})` : ''}: nothing was run. Give --state a file in a directory.`,
    );
  const file = await stat(statePath).catch((error: NodeJS.ErrnoException) => error);
  const missing = file instanceof Error && file.code === 'ENOENT';
  if (newState || fileMayBeMissing) return missing;
  if (missing)
    throw usageError(
      'StateFileMissing',
      `--state ${statePath} does not exist: a state there would be a new, empty one (an apply would create everything again, a destroy would destroy nothing). Nothing was run. Fix the file name, or pass --new-state (CAPTF_NEW_STATE=1) when this run is to start the state.`,
    );
  return false;
}
