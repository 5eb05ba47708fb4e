// A setup shared by the tests of a suite: made once, on first use, and undone when the suite ends.
// For a setup that costs runner runs (an apply, a backup) and that every test would otherwise
// repeat identically: each test then starts from a copy of what it made, never from the thing itself.
import type { ChildProcess } from 'node:child_process';
import { after, type TestContext } from 'node:test';

/**
 * Returns a function that makes the setup on its first call and hands every caller the same
 * promise. `make` gets a context whose `after` hooks (those of tempDir, scenario, startPostgres)
 * run when the suite ends, not when the test that asked first does. Call at module level (the
 * file's suite) or in a describe().
 */
export function sharedSetup<T>(make: (suite: TestContext) => Promise<T>): () => Promise<T> {
  const cleanups: Array<() => unknown> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  const suite = { after: (cleanup: () => unknown) => void cleanups.push(cleanup) } as unknown as TestContext;
  let made: Promise<T> | undefined;
  return () => (made ??= make(suite));
}

/**
 * The process group leaders a file's tests start in the background (push each one): a group whose
 * leader still runs when the file ends is killed (an exited leader's pid may already be someone else's).
 */
export function groupsKilledAtEnd(): ChildProcess[] {
  const started: ChildProcess[] = [];
  after(() => {
    for (const child of started) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  });
  return started;
}
