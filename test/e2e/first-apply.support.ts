// A file's first apply of a module, made once: the test about what a first apply reports asserts on
// that run itself, and every other test starts from a copy of the state it left (stateOnce), in a
// scenario of its own with the same module and inputs. The first apply and its setup for the other
// tests are the same run, so it is not repeated.
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { sharedSetup } from '../support/suite-setup.ts';
import type { FileTree } from '../support/tf-modules.ts';
import { explain, scenario, type RunnerRun, type Scenario } from '../support/runner.ts';
import { stateOnce } from './state-once.support.ts';

export interface FirstApply {
  /** The one first apply and its scenario, unchecked (its test asserts on it). Read them, never change them. */
  first(): Promise<{ s: Scenario; run: RunnerRun }>;
  /** A scenario of its own holding a copy of the state the first apply left (which must have succeeded). */
  applied(t: TestContext): Promise<Scenario>;
}

/** Call at module level: `apply` with `args` of `tree` with `inputs`, in a fresh scenario. */
export function firstApplyOnce(tree: FileTree, inputs: Record<string, unknown>, args: string[]): FirstApply {
  const first = sharedSetup(async (suite) => {
    const s = await scenario(suite, tree, inputs);
    return { s, run: await s.run('apply', args) };
  });
  const copyState = stateOnce(async () => {
    const { s, run } = await first();
    assert.equal(run.exitCode, 0, explain(run));
    return s;
  });
  return {
    first,
    async applied(t) {
      const s = await scenario(t, tree, inputs);
      await copyState(s);
      return s;
    },
  };
}
