// A setup that is the same for every test of a file (a real run of the runner that leaves a state)
// made once, on first use (with its own checks, which fail the test that asked first), and kept
// until the file's tests are done. Each test gets a copy (terraform's own state, with its lineage
// and serial) in a scenario of its own: what a test changes no other test sees.
import type { TestContext } from 'node:test';
import { cp } from 'node:fs/promises';
import { dirname } from 'node:path';
import { sharedSetup } from '../support/suite-setup.ts';
import type { Scenario } from '../support/runner.ts';

/** Call at module level. `make` sets a scenario up; the returned function copies the state it left into another scenario. */
export function stateOnce(make: (suite: TestContext) => Promise<Scenario>): (into: Scenario) => Promise<void> {
  const stateDir = sharedSetup(async (suite) => dirname((await make(suite)).state));
  return async (into) => {
    await cp(await stateDir(), dirname(into.state), { recursive: true });
  };
}
