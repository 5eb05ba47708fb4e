// The nets under the servers the tests start (pg.ts, radosgw.ts): a live server is stopped when the
// test process exits or is interrupted, whatever the tests did; a server whose test process died
// without running its hooks (SIGKILL, OOM) is stopped by the next process that starts one of its kind.
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { isProcessRunning } from './tf-modules.ts';

const live = new Set<() => void>();
let exitNetInstalled = false;

/** Runs `stopNow` (synchronous: it may run in an `exit` handler) if the process exits or is interrupted before releaseAtExit(stopNow). */
export function stopAtExit(stopNow: () => void): void {
  live.add(stopNow);
  if (exitNetInstalled) return;
  exitNetInstalled = true;
  const stopAll = () => {
    for (const stop of live) stop();
    live.clear();
  };
  process.on('exit', stopAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, function onSignal() {
      stopAll();
      // Let the signal do what it would have done without us.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

/** The server of `stopNow` is stopped (or being stopped) by its own means. */
export function releaseAtExit(stopNow: () => void): void {
  live.delete(stopNow);
}

/** Names this process the owner of the server in `dir` (for reapOrphanedServers). */
export const markOwner = (dir: string) => writeFile(join(dir, 'owner.pid'), `${process.pid}\n`);

/** `stopOrphan(dir)` for each server dir in tmpdir() named `prefix…` whose owner process is gone. */
export function reapOrphanedServers(prefix: string, stopOrphan: (dir: string) => void): void {
  for (const entry of readdirSync(tmpdir())) {
    if (!entry.startsWith(prefix)) continue;
    const dir = join(tmpdir(), entry);
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, 'owner.pid'), 'utf8'));
    } catch {
      continue; // not ours, or still being set up
    }
    if (!owner || isProcessRunning(owner)) continue;
    stopOrphan(dir);
  }
}

/** A loopback port nothing listens on now (taken from the kernel, then released): for a server to start on, or a store that is down. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
