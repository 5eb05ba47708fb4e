// What runs the unit group's test files several to a process (a shard: scripts/build/test-shards.mjs builds its
// entry, scripts/test.sh runs it; test/README.md "Running them"). Each file is a suite named by its path: its
// tests, and its top-level hooks (`before`, `after`, `beforeEach`), are the suite's, and a failure is reported
// under the file's path. The files run one after the other, each loaded when the one before it has ended (its
// `after` hooks included), so a file's top-level code runs right before its tests, as in a process of its own.
//
// Files that share a process share its environment, working directory, listeners and stdio: a file that leaves
// one of them changed fails, named, with what it changed (`processChanges`), rather than a later file failing
// for it. Not checked: globals, which packages set as they load (zod, the AWS SDK) and no test file sets, and
// process.exitCode, which node's test runner sets at a failure. A test that escapes its file's suite fails too:
// node's runner finds a test's suite through the async context, so a test registered from a promise made before
// its file loaded (another file's, or one a helper keeps) lands in that other file's suite, ended by then
// ("test could not be started because its parent finished"), or at the top, where `beforeEach` below fails it.
import { AsyncResource } from 'node:async_hooks';
import { after, beforeEach, describe } from 'node:test';

/** What a test file must leave as it found it. */
interface ProcessState {
  env: Record<string, string | undefined>;
  cwd: string;
  listeners: Record<string, number>;
  stdoutWrite: unknown;
  stderrWrite: unknown;
}

function processState(): ProcessState {
  return {
    env: { ...process.env },
    cwd: process.cwd(),
    listeners: Object.fromEntries(process.eventNames().map((name) => [String(name), process.listenerCount(name)])),
    stdoutWrite: process.stdout.write,
    stderrWrite: process.stderr.write,
  };
}

/** What differs between two states, one line each (a variable's name, never its value: it may be a secret). */
function processChanges(before: ProcessState, now: ProcessState): string[] {
  const changes: string[] = [];
  for (const name of new Set([...Object.keys(before.env), ...Object.keys(now.env)]))
    if (before.env[name] !== now.env[name])
      changes.push(
        `process.env.${name} ${name in before.env ? (name in now.env ? 'changed' : 'deleted') : 'set'} (restore it in an after hook)`,
      );
  if (before.cwd !== now.cwd)
    changes.push(`the working directory is ${now.cwd}, was ${before.cwd} (process.chdir back)`);
  for (const event of new Set([...Object.keys(before.listeners), ...Object.keys(now.listeners)]))
    if ((before.listeners[event] ?? 0) !== (now.listeners[event] ?? 0))
      changes.push(
        `process has ${now.listeners[event] ?? 0} '${event}' listeners, had ${before.listeners[event] ?? 0} (remove what the file added)`,
      );
  if (before.stdoutWrite !== now.stdoutWrite) changes.push('process.stdout.write replaced');
  if (before.stderrWrite !== now.stderrWrite) changes.push('process.stderr.write replaced');
  return changes;
}

/** The file whose suite runs now; undefined between files. */
let running: string | undefined;
/** Settled when the file registered last has ended: the next one loads then (the first once the runner has set up). */
let previous = new Promise<void>((resolve) => setImmediate(resolve));

beforeEach((t) => {
  if (running === undefined)
    throw new Error(
      `the test "${t.name}" ran outside its file's suite: it was registered from a promise made before its file loaded (another file's, or one a helper keeps): make that promise in the file, or register the test at its top level (test/support/shard.ts)`,
    );
});

/** `path` (a test file, as the suite's name) run by `load` (its import) once the file before it has ended. */
export function testFile(path: string, load: () => Promise<unknown>): void {
  const turn = previous;
  let ended = () => {};
  previous = new Promise((resolve) => {
    ended = resolve;
  });
  describe(path, () =>
    turn.then(
      // Bound to the suite's async context: the file's tests and hooks are registered in it.
      AsyncResource.bind(async () => {
        running = path;
        const found = processState();
        try {
          await load();
        } finally {
          // Registered after the file's own `after` hooks, so it runs after them.
          after(() => {
            running = undefined;
            ended();
            const changes = processChanges(found, processState());
            if (changes.length > 0)
              throw new Error(
                `${path} left the process changed for the files after it: ${changes.join('; ')} (test/support/shard.ts)`,
              );
          });
        }
      }),
    ),
  );
}
