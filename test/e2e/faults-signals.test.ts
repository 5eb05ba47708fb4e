// The stop choreography with the fake terraform (contract/sections/faults.md): exactly one SIGINT
// to terraform, a second only after --stop-grace, then a kill of its process group, and nothing
// left in it. Timing-sensitive: scripts/test.sh runs this file in its serial phase, where no
// CPU-bound file runs beside it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type FakeTerraformEvent } from '../support/tf-modules.ts';
import {
  checkRun,
  cleanupFake,
  fakeScenario,
  isScenarioProcess,
  runWithFake,
  signalsOf,
  stepStarted,
  RUNNER_STEP_OF,
  waitForEvents,
} from './faults.support.ts';

describe('signals: the stop choreography', () => {
  for (const step of ['init', 'plan', 'show', 'apply'] as const) {
    it(`SIGTERM while terraform ${step} runs: exactly one SIGINT, no further step, interrupted in ${RUNNER_STEP_OF[step]}, exit 143`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      const run = await runWithFake(s, {
        fake: { faults: [`${step}:hang`] },
        during: async (child) => {
          await stepStarted(s, step);
          await new Promise((r) => setTimeout(r, 200));
          child.kill('SIGTERM');
        },
      });
      const result = checkRun(
        run,
        s,
        { outcome: 'interrupted', reason: 'Interrupted', kind: 'interrupted', step: RUNNER_STEP_OF[step], exit: 143 },
        step,
      );
      assert.deepEqual(signalsOf(run, step), ['SIGINT']);
      assert.equal(result.error?.detail?.cause, 'SIGTERM');
    });
  }

  it('SIGINT to the runner: exit 130, reason Interrupted', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, {
      fake: { faults: ['plan:hang'] },
      during: async (child) => {
        await stepStarted(s, 'plan');
        child.kill('SIGINT');
      },
    });
    checkRun(
      run,
      s,
      { outcome: 'interrupted', reason: 'Interrupted', kind: 'interrupted', step: 'plan', exit: 130 },
      'plan',
    );
    assert.deepEqual(signalsOf(run, 'plan'), ['SIGINT']);
  });

  it("a SIGTERM to the runner's whole process group still reaches terraform once, as SIGINT (its own group)", async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, {
      ownGroup: true,
      fake: { faults: ['apply:hang'] },
      during: async (child) => {
        await stepStarted(s, 'apply');
        process.kill(-child.pid!, 'SIGTERM'); // what a shell or an init without signal forwarding does
      },
    });
    checkRun(run, s, { outcome: 'interrupted', reason: 'Interrupted', step: 'apply', exit: 143 }, 'apply');
    assert.deepEqual(signalsOf(run, 'apply'), ['SIGINT'], "terraform must not get the group's SIGTERM as well");
    const start = run.events.find((e) => e.event === 'start' && e.step === 'apply') as Extract<
      FakeTerraformEvent,
      { event: 'start' }
    >;
    assert.equal(start.pgid, start.pid, 'terraform leads its own process group');
  });

  it('terraform ignoring the first interrupt gets a second only after --stop-grace, and exits', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, {
      args: ['--stop-grace', '2s'],
      fake: { faults: ['apply:ignore-first-interrupt'] },
      during: async (child) => {
        await stepStarted(s, 'apply');
        child.kill('SIGTERM');
      },
    });
    checkRun(run, s, { outcome: 'interrupted', reason: 'Interrupted', step: 'apply', exit: 143 }, 'apply');
    assert.deepEqual(signalsOf(run, 'apply'), ['SIGINT', 'SIGINT']);
    // When the fake got each interrupt (its own clock, not this test's polling).
    const [first, second] = run.events.flatMap((e) => (e.event === 'signal' ? [e.at] : []));
    const gap = second! - first!;
    assert.ok(gap >= 1_900 && gap < 5_000, `the second interrupt came ${gap} ms after the first (grace 2 s)`);
  });

  it('terraform ignoring every interrupt: SIGINT, SIGINT after the grace, then its process group is killed', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    let signalledAt = 0;
    const run = await runWithFake(s, {
      args: ['--stop-grace', '1s'],
      fake: { faults: ['apply:ignore-interrupts', 'apply:orphan'] },
      during: async (child) => {
        const events = await stepStarted(s, 'apply');
        await waitForEvents(s, () => {
          try {
            return readFileSync(s.orphanPidFile, 'utf8').trim().length > 0;
          } catch {
            return false;
          }
        });
        // The leftover checks recognise this scenario's live processes (else they would prove nothing).
        const applyPid = events.find((e) => e.event === 'start' && e.step === 'apply')!.pid;
        assert.ok(isScenarioProcess(s, applyPid), 'the running fake apply is recognised');
        assert.ok(
          isScenarioProcess(s, Number(readFileSync(s.orphanPidFile, 'utf8').trim())),
          'its orphan is recognised',
        );
        signalledAt = Date.now();
        child.kill('SIGTERM');
      },
      timeoutMs: 40_000,
    });
    checkRun(run, s, { outcome: 'interrupted', reason: 'Interrupted', step: 'apply', exit: 143 }, 'apply');
    assert.deepEqual(signalsOf(run, 'apply'), ['SIGINT', 'SIGINT']);
    const applyPid = run.events.find((e) => e.event === 'start' && e.step === 'apply')!.pid;
    assert.ok(
      !run.events.some((e) => e.event === 'exit' && e.pid === applyPid),
      'terraform apply had to be killed (no exit of its own)',
    );
    const took = Date.now() - signalledAt;
    assert.ok(took < 15_000, `the kill came ${took} ms after SIGTERM (grace 1 s + 5 s)`);
  });

  it('a second SIGTERM escalates at once (no waiting for --stop-grace)', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    let firstAt = 0;
    const run = await runWithFake(s, {
      args: ['--stop-grace', '60s'],
      fake: { faults: ['apply:ignore-first-interrupt'] },
      during: async (child) => {
        await stepStarted(s, 'apply');
        firstAt = Date.now();
        child.kill('SIGTERM');
        await waitForEvents(s, (e) => e.some((x) => x.event === 'signal'));
        child.kill('SIGTERM');
      },
    });
    checkRun(run, s, { outcome: 'interrupted', reason: 'Interrupted', step: 'apply', exit: 143 }, 'apply');
    assert.deepEqual(signalsOf(run, 'apply'), ['SIGINT', 'SIGINT']);
    assert.ok(Date.now() - firstAt < 20_000, 'the second signal must not wait for the 60 s grace');
  });

  it('an orphan of an interrupted apply is ended too', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, {
      fake: { faults: ['apply:orphan', 'apply:hang'] },
      during: async (child) => {
        await waitForEvents(s, () => {
          try {
            return readFileSync(s.orphanPidFile, 'utf8').trim().length > 0;
          } catch {
            return false;
          }
        });
        child.kill('SIGTERM');
      },
    });
    checkRun(run, s, { outcome: 'interrupted', reason: 'Interrupted', step: 'apply', exit: 143 }, 'apply');
  });
});
