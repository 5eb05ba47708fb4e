// The base module's first apply by the runner, when a file's tests assert that run too (one run,
// several findings) and start from the state it left: made once per file on first use, and each
// test given a copy of that state (stateOnce) in a scenario of its own with the same inputs: what
// a test changes no other test sees.
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { sharedSetup } from '../support/suite-setup.ts';
import { modules } from '../support/tf-modules.ts';
import { stateOnce } from './state-once.ts';
import { explain, scenario, type RunnerRun, type Scenario } from './runner.ts';

/** Call at module level: `apply <args>` of modules.base with `inputs`, from no state. */
export function firstApplyOnce(inputs: Record<string, unknown>, args: string[]): (t: TestContext) => Promise<{ s: Scenario; first: RunnerRun }> {
  const made = sharedSetup(async (suite) => {
    const s = await scenario(suite, modules.base, inputs);
    return { s, run: await s.run('apply', args) };
  });
  const copyInto = stateOnce(async () => (await made()).s);
  return async (t) => {
    const { run } = await made();
    assert.equal(run.exitCode, 0, explain(run));
    const s = await scenario(t, modules.base, inputs);
    await copyInto(s);
    return { s, first: run };
  };
}
