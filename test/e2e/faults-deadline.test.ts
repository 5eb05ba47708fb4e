// The fault matrix's hangs (contract/sections/faults.md): every step the runner runs terraform in
// hangs, and --deadline stops it in time. Timing-sensitive: scripts/test.sh runs this file in its
// serial phase, where no CPU-bound file runs beside it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkRun,
  cleanupFake,
  explainFake,
  FAKE_STEPS,
  type FakeRun,
  type FakeScenario,
  type FakeStep,
  fakeScenario,
  runWithFake,
  RUNNER_STEP_OF,
} from './faults.support.ts';

/** What the hung plan prints before it hangs (on stdout, and a diagnostic quoting it on stderr): kept back, never printed. */
const PLAN_SECRET = 'CANARY-hung-plan-Tz4q';

const runHanging = (s: FakeScenario, step: FakeStep, deadlineSeconds: number) =>
  runWithFake(s, {
    // The plan prints before it hangs: the run is stopped before it has read the state the plan was made against.
    fake:
      step === 'plan'
        ? { faults: ['plan:leak-secret', 'plan:huge-stdout=1000', 'plan:hang'], secret: PLAN_SECRET }
        : { faults: [`${step}:hang`] },
    args: ['--deadline', `${deadlineSeconds}s`, '--stop-grace', '1s'],
    timeoutMs: 60_000 + deadlineSeconds * 1000,
  });

/** Whether terraform's hung command started before the run was stopped. */
const reachedHang = (run: FakeRun, step: FakeStep) => run.events.some((e) => e.event === 'start' && e.step === step);

describe('fault matrix: every step hangs → the deadline stops it', () => {
  for (const [index, step] of FAKE_STEPS.entries()) {
    // The runner stops itself at deadline - stop grace (1 s) - 5 s: at 2 s for the first three steps,
    // 3 s for the next three, 4 s for apply, late enough that the steps before the hung one finish
    // (≈ 0.3 s to the first, ≈ 1.2 s to apply, alone on the machine). On a busy machine they may not:
    // a run stopped before terraform reached the hung step tested nothing, so it runs again with twice
    // the deadline (at most twice more); every check below is made on a run that reached the hang.
    const firstDeadline = 8 + Math.floor(index / 3);
    it(`${step}: hangs → the deadline stops it: interrupted/JobDeadlineExceeded, exit 124, one SIGINT`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      let deadline = firstDeadline;
      let run = await runHanging(s, step, deadline);
      while (!reachedHang(run, step) && deadline < firstDeadline * 4) {
        t.diagnostic(
          `the run was stopped before terraform ${step} started (a busy machine): again with ${deadline * 2} s`,
        );
        deadline *= 2;
        run = await runHanging(s, step, deadline);
      }
      assert.ok(reachedHang(run, step), `terraform ${step} never started before the deadline: ${explainFake(run)}`);
      const result = checkRun(
        run,
        s,
        {
          outcome: 'interrupted',
          reason: 'JobDeadlineExceeded',
          kind: 'interrupted',
          step: RUNNER_STEP_OF[step],
          exit: 124,
        },
        step,
      );
      assert.ok(
        run.durationMs < deadline * 1000,
        `the runner must be done before its ${deadline} s deadline (${run.durationMs} ms)`,
      );
      const hung = run.events.filter((e) => e.event === 'start' && e.step === step).map((e) => e.pid);
      for (const pid of hung) {
        const signals = run.events.filter((e) => e.event === 'signal' && e.pid === pid);
        assert.deepEqual(
          signals.map((e) => (e as { signal: string }).signal),
          ['SIGINT'],
          `terraform ${step} (pid ${pid}) gets exactly one SIGINT`,
        );
      }
      assert.equal(result.steps.find((x) => x.name === RUNNER_STEP_OF[step])?.status, 'interrupted');
      if (step === 'plan') {
        // terraform's output during the plan is withheld (the state's secrets unknown), and the run says so.
        for (const tail of [run.stdoutTail, run.stderrTail, run.resultText ?? ''])
          for (const printed of [PLAN_SECRET, 'terraform_data.filler', 'does not declare a variable'])
            assert.ok(!tail.includes(printed), `${printed} was printed: ${explainFake(run)}`);
        assert.ok(
          result.warnings.some((warning) =>
            warning.startsWith(
              "terraform's output during the plan was not printed: the run was stopped before it read the state the plan was made against",
            ),
          ),
          JSON.stringify(result.warnings),
        );
      }
    });
  }
});
