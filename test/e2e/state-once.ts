// A setup that is the same for every test of a file (a real run of the runner that leaves a state)
// made once: the first test that asks makes it, with its own checks, and the state dir it leaves is
// kept until the file's tests are done. Each test gets a copy (terraform's own state, with its
// lineage and serial) in a scenario of its own: what a test changes no other test sees.
import { after, type TestContext } from 'node:test';
import { cp, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { tempDir } from '../support/tf-modules.ts';
import type { Scenario } from './runner.ts';

// A hook registered as the module loads belongs to the file, not to the test running then.
const keptStateDirs: string[] = [];
after(() => Promise.all(keptStateDirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** `make` sets a scenario up (in the asking test); the returned function copies the state it left into another scenario. */
export function stateOnce(make: (t: TestContext) => Promise<Scenario>): (t: TestContext, into: Scenario) => Promise<void> {
  let kept: Promise<string> | undefined;
  return async (t, into) => {
    kept ??= (async () => {
      const made = await make(t);
      const dir = await tempDir(undefined, 'captf-e2e-state-once-');
      keptStateDirs.push(dir);
      await cp(dirname(made.state), dir, { recursive: true });
      return dir;
    })();
    await cp(await kept, dirname(into.state), { recursive: true });
  };
}
