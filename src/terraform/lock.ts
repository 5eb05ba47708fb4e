// The state lock: force-unlock, the lock probe, and the local backend's lock info. The one place
// that knows how each backend's lock can (or cannot) be released; what terraform prints about a
// held lock is read in diagnostics.ts.
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { localLockInfoName } from '../workspace/terraform-files.ts';
import { diagnose, lockReportOf, type LockReport } from './diagnostics.ts';
import { succeeded, type Terraform } from './terraform.ts';

export type { LockReport } from './diagnostics.ts';

export interface ForceUnlockResult {
  exitCode: number;
}

/** -no-color: as for state push, terraform would colour its answer with ANSI escapes. */
export const forceUnlockArgs = (lockId: string): string[] => ['force-unlock', '-no-color', '-force', lockId];

export async function forceUnlock(tf: Terraform, lockId: string): Promise<ForceUnlockResult> {
  const run = await tf.run('force-unlock', forceUnlockArgs(lockId));
  return { exitCode: succeeded(run, 'UnlockFailed').exitCode };
}

// ---- the local backend (--state) ------------------------------------------------------------
//
// Observed with terraform 1.11: the local backend locks with a POSIX record lock (fcntl) on the
// state file, held by the process, and writes `.<state file>.lock.info` beside it to say who holds
// it. A holder killed by SIGKILL leaves the info file behind, but the kernel dropped the lock with
// the process: the stale file blocks nothing, and the next command that locks overwrites it and
// removes it on unlock. `terraform force-unlock` cannot release a local lock of another process
// at all: it answers "Failed to unlock state: LocalState not locked" (exit 1) for the right id and
// a wrong one, holder alive or dead. So the runner releases a local lock itself: only a lock whose
// info names the given id, and only when taking the lock proves its holder is gone.

/** Where the local backend writes who holds the lock of the state at `statePath`. */
export const localLockInfoPath = (statePath: string) =>
  join(dirname(statePath), localLockInfoName(basename(statePath)));

/** The lock info the local backend left beside the state, or undefined when there is none. */
export async function readLocalLockInfo(statePath: string): Promise<LockReport | undefined> {
  let text: string;
  try {
    text = await readFile(localLockInfoPath(statePath), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let info: Record<string, unknown>;
  try {
    info = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { holderKnown: false }; // unreadable: terraform would overwrite it; nobody is named
  }
  return lockReportOf((name) => (typeof info[name] === 'string' && info[name] !== '' ? info[name] : undefined));
}

/** An address no module can declare (the probe must never match a real object; -dry-run changes nothing anyway). */
const PROBE_ADDRESS = 'terraform_data.captf_runner_lock_probe_0000';

export const lockProbeArgs = (): string[] => [
  'state',
  'rm',
  '-dry-run',
  '-lock-timeout=0s',
  '-no-color',
  PROBE_ADDRESS,
];

/**
 * Tries to take the state lock at once and lets it go, changing nothing: `state rm -dry-run` of an
 * address that does not exist locks the state without needing any provider. Returns the holder
 * when the lock is held by a live process; undefined when it could be taken (which also clears a
 * stale local lock info: terraform rewrites it on lock and removes it on unlock). Its other
 * complaints (no state yet, no such object) are expected and ignored.
 */
export async function probeLock(tf: Terraform): Promise<LockReport | undefined> {
  const run = await tf.withOutput({ lines() {} }).run('state rm', lockProbeArgs());
  if (run.meaning === 'ok') return undefined;
  const { problem } = diagnose(run.stderrTail, { complete: run.stderrComplete });
  return problem.kind === 'stateLocked' ? problem.lock : undefined;
}
