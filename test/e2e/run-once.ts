// A setup run whose own output some tests assert too (one run, several findings), made once per
// file on first use; each test that starts from the state it left gets a copy of that state in a
// scenario of its own (stateOnce): what a test changes no other test sees.
import type { TestContext } from 'node:test';
import { sharedSetup } from '../support/suite-setup.ts';
import { stateOnce } from './state-once.ts';
import type { RunnerRun, Scenario } from './runner.ts';

export interface RunOnce {
  /** The setup's scenario and run, made on the first call. */
  made(): Promise<{ s: Scenario; run: RunnerRun }>;
  /** Copies the state the setup left into `into` (making the setup first if need be). */
  copyInto(into: Scenario): Promise<void>;
}

/** Call at module level. `make` sets a scenario up and returns the run that did it. */
export function runOnce(make: (suite: TestContext) => Promise<{ s: Scenario; run: RunnerRun }>): RunOnce {
  const made = sharedSetup(make);
  return { made, copyInto: stateOnce(async () => (await made()).s) };
}
