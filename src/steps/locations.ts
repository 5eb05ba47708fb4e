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
  for (const value of settings.backendConfig) await checkBackendConfigFile(value);
  if (!settings.state) return undefined;
  const missing = await checkStatePath(settings.state, settings.newState, op === 'plan');
  if (missing && op === 'plan' && !settings.newState)
    return `--state ${settings.state} does not exist: this plan is against an empty state, so it creates everything, and no state was written. If the path is a typo, fix it and plan again; an apply of this plan starts the state only with --new-state`;
  return undefined;
}

/** terraform's -backend-config value: KEY=VALUE when it holds `=`, else the path of a file of backend settings. */
const isBackendConfigFile = (value: string): boolean => !value.includes('=');

/**
 * The -backend-config values init is given: a file resolved against the runner's working directory,
 * as --module, --inputs and --state are (terraform would read it from the workdir it runs in).
 */
export const backendConfigArgs = (values: readonly string[]): string[] =>
  values.map((value) => (isBackendConfigFile(value) ? resolve(value) : value));

/** A --backend-config file that is not there (or no regular file) fails init the same way on every retry: refused before anything runs. */
async function checkBackendConfigFile(value: string): Promise<void> {
  if (!isBackendConfigFile(value)) return;
  const found = await stat(value).catch((error: NodeJS.ErrnoException) => error);
  if (!(found instanceof Error) && found.isFile()) return;
  const what =
    found instanceof Error
      ? found.code === 'ENOENT'
        ? 'does not exist'
        : `cannot be read (${found.code ?? found.message})`
      : found.isDirectory()
        ? 'is a directory'
        : 'is not a regular file';
  throw usageError(
    'SettingsInvalid',
    `--backend-config ${value} (${resolve(value)}) ${what}: init would fail the same way on every retry. Nothing was run. Give --backend-config (CAPTF_BACKEND_CONFIG) the file of the object's backend settings (a relative path is read from the runner's working directory), or KEY=VALUE.`,
  );
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
  if (!(file instanceof Error) && !file.isFile())
    throw usageError(
      'SettingsInvalid',
      `--state ${statePath} is ${file.isDirectory() ? 'a directory' : 'not a regular file'}, not a state file: terraform would refuse it on every retry. Nothing was run. Give --state the path of the state file (e.g. ${join(statePath, 'terraform.tfstate')}).`,
    );
  const missing = file instanceof Error && file.code === 'ENOENT';
  if (newState || (missing && fileMayBeMissing)) return missing;
  if (missing)
    throw usageError(
      'StateFileMissing',
      `--state ${statePath} does not exist: a state there would be a new, empty one (an apply would create everything again, a destroy would destroy nothing). Nothing was run. Fix the file name, or pass --new-state (CAPTF_NEW_STATE=1) when this run is to start the state.`,
    );
  // terraform reads an empty (or whitespace-only) state file as no state at all: a truncated file is a missing one.
  if (!(file instanceof Error) && file.isFile() && (await holdsOnlyWhitespace(statePath)))
    throw usageError(
      'StateFileMissing',
      `--state ${statePath} is empty (${file.size === 0 ? '0 bytes' : `${file.size} bytes of whitespace only`}): terraform would read it as no state, a new, empty one (an apply would create everything again, a destroy would destroy nothing). Nothing was run. Put the object's state back (restore it from a backup), or pass --new-state (CAPTF_NEW_STATE=1) when this run is to start the state.`,
    );
  return false;
}

/** Whether the file holds nothing but JSON's whitespace (or nothing): read up to its first other byte (a state's first). */
async function holdsOnlyWhitespace(path: string): Promise<boolean> {
  // One the runner cannot read is terraform's to report.
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return false;
  try {
    const buffer = Buffer.alloc(64 * 1024);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return true;
      for (let i = 0; i < bytesRead; i++) if (!JSON_WHITESPACE.has(buffer[i]!)) return false;
    }
  } finally {
    await handle.close();
  }
}

/** Space, tab, LF, CR: the whitespace JSON allows around a value. */
const JSON_WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
