// One run at a time per object, like the controller's run lease: a reconcile takes <dir>/active-run
// (created exclusively, holding its pid) before it decides, and removes it when done. A lock whose
// process is gone was left by a reconcile that was killed: it is taken over.
import { readFile, rm, writeFile } from 'node:fs/promises';
import type { LocalPaths } from './object.ts';

export interface RunLock {
  release(): Promise<void>;
}

/** The lock, or undefined while another live reconcile holds it. */
export async function acquireRunLock(paths: LocalPaths): Promise<RunLock | undefined> {
  const lock: RunLock = { release: () => rm(paths.activeRun, { force: true }) };
  if (await tryCreate(paths.activeRun)) return lock;
  if (await isRunLockHeld(paths)) return undefined;
  await rm(paths.activeRun, { force: true });
  return (await tryCreate(paths.activeRun)) ? lock : undefined;
}

/** Whether a live reconcile holds the lock: the local stand-in for an active Job. */
export async function isRunLockHeld(paths: LocalPaths): Promise<boolean> {
  const holder = Number.parseInt(await readFile(paths.activeRun, 'utf8').catch(() => ''), 10);
  return Number.isInteger(holder) && isAlive(holder);
}

async function tryCreate(path: string): Promise<boolean> {
  try {
    await writeFile(path, `${process.pid}\n`, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, owned by someone else
  }
}
