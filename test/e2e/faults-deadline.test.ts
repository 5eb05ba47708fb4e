// The fault matrix's hangs (contract/sections/faults.md): every step the runner runs terraform in
// hangs, and --deadline stops it in time. Timing-sensitive: scripts/test.sh runs this file in its
// serial phase, where no CPU-bound file runs beside it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkRun, cleanupFake, FAKE_STEPS, fakeScenario, runWithFake, STEPS,
} from './faults-support.ts';

describe('fault matrix: every step hangs → the deadline stops it', () => {
  for (const step of FAKE_STEPS) {
    it(`${step}: hangs → the deadline stops it: interrupted/JobDeadlineExceeded, exit 124, one SIGINT`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      // --deadline 10s with --stop-grace 1s: the runner stops itself at 10 - 1 - 5 = 4 s, late enough
      // that the steps before the hung one finish (≈ 1 s, alone on the machine in the serial phase);
      // the check of the interrupted step fails the case if they did not.
      const run = await runWithFake(s, { fake: { faults: [`${step}:hang`] }, args: ['--deadline', '10s', '--stop-grace', '1s'], timeoutMs: 60_000 });
      const result = checkRun(run, s, { outcome: 'interrupted', reason: 'JobDeadlineExceeded', kind: 'interrupted', step: STEPS[step], exit: 124 }, step);
      assert.ok(run.durationMs < 10_000, `the runner must be done before its deadline (${run.durationMs} ms)`);
      const hung = run.events.filter((e) => e.event === 'start' && e.step === step).map((e) => e.pid);
      for (const pid of hung) {
        const signals = run.events.filter((e) => e.event === 'signal' && e.pid === pid);
        assert.deepEqual(signals.map((e) => (e as { signal: string }).signal), ['SIGINT'], `terraform ${step} (pid ${pid}) gets exactly one SIGINT`);
      }
      assert.equal(result.steps.find((x) => x.name === STEPS[step])?.status, 'interrupted');
    });
  }
});

