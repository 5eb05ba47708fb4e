// The progress of a long step, on a fake clock: when it is logged (terraform's output held, or
// quiet for an interval), what it counts from terraform's lines, and that it never quotes them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ProgressWatch,
  elapsedText,
  progressIntervalMs,
  progressMessage,
  reportedEvent,
  PROGRESS_INTERVAL_MS,
  TEST_INTERVAL_VARIABLE,
  type ProgressClock,
  type ProgressReport,
} from '../../src/output/progress.ts';
import { capturedOutput } from '../support/terraform-output.ts';

/** A clock whose time moves only when the test says so; its timers fire as the time passes them. */
function fakeClock(): ProgressClock & { advance(ms: number): void; timers: number } {
  let now = 1_000_000;
  const timers = new Set<{ every: number; next: number; tick: () => void }>();
  return {
    now: () => now,
    every(ms, tick) {
      const timer = { every: ms, next: now + ms, tick };
      timers.add(timer);
      return { stop: () => void timers.delete(timer) };
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const due = [...timers].filter((t) => t.next <= until).sort((a, b) => a.next - b.next)[0];
        if (!due) break;
        now = due.next;
        due.next += due.every;
        due.tick();
      }
      now = until;
    },
    get timers() {
      return timers.size;
    },
  };
}

function watch(interval = 30_000) {
  const clock = fakeClock();
  const reports: ProgressReport[] = [];
  return { clock, reports, progress: new ProgressWatch((r) => reports.push(r), interval, clock) };
}

describe('output: the progress of a long step', () => {
  it('counts the resource instances terraform 1.11.4 reports, from its own lines', () => {
    const lines = (name: string) => capturedOutput(name).stdout.split('\n');
    assert.deepEqual(lines('plan-no-changes').map(reportedEvent).filter(Boolean), ['refreshed']);
    assert.deepEqual(
      lines('apply-ok').map(reportedEvent).filter(Boolean),
      ['created'],
      '"Creating..." is no completion',
    );
    // The other hook lines, as terraform prints them (internal/command/views/hook_ui.go).
    assert.equal(reportedEvent('data.terraform_remote_state.net: Read complete after 0s'), 'read');
    assert.equal(reportedEvent('terraform_data.cluster: Modifications complete after 1s [id=2f1c]'), 'updated');
    assert.equal(reportedEvent('terraform_data.node["b"]: Destruction complete after 0s'), 'destroyed');
    assert.equal(reportedEvent('module.m["k"].terraform_data.n["a\\"]: x"]: Creation complete after 0s'), 'created');
    assert.equal(
      reportedEvent('terraform_data.a (deposed object 1a2b3c4d): Destruction complete after 0s'),
      'destroyed',
    );
    for (const other of [
      'terraform_data.slow[0]: Still creating... [10s elapsed]',
      'terraform_data.slow[0]: Creating...',
      'terraform_data.slow[0] (local-exec): Executing: ["/bin/sh" "-c" "sleep 5"]',
      // A provisioner's output is the module's text: terraform's words in it are no event (issue 41).
      'terraform_data.liar (local-exec): terraform_data.victim[1]: Destruction complete after 0s',
      'terraform_data.liar["a b"] (local-exec): module.m.terraform_data.v: Creation complete after 0s',
      '  # terraform_data.cluster will be updated in-place',
      'Refreshing state...',
      '',
    ])
      assert.equal(reportedEvent(other), undefined, other);
  });

  it('a step whose output is held logs every interval: the step, the time it has run and the counts, never a held line', () => {
    const { clock, reports, progress } = watch();
    const end = progress.start('plan');
    progress.hold();
    clock.advance(10_000);
    progress.saw('terraform_data.credentials: Refreshing state... [id=SECRET-ID-1]', 'held');
    progress.saw('terraform_data.cluster: Refreshing state... [id=SECRET-ID-2]', 'held');
    clock.advance(20_000);
    progress.saw('data.terraform_remote_state.net: Read complete after 0s', 'held');
    clock.advance(30_000);
    end();
    clock.advance(90_000);
    assert.deepEqual(reports, [
      { step: 'plan', elapsedMs: 30_000, output: 'held', reported: { refreshed: 2 } },
      { step: 'plan', elapsedMs: 60_000, output: 'held', reported: { refreshed: 2, read: 1 } },
    ]);
    assert.equal(clock.timers, 0, 'the step ended: its timer is gone');
    assert.ok(!JSON.stringify(reports).includes('SECRET-ID'), 'a count, never the line');
    assert.equal(
      progressMessage(reports[1]!, 30_000),
      "plan: running for 1m0s; terraform's output is held until the plan is classified; so far terraform reported 2 refreshed, 1 read",
    );
  });

  it('a step that prints says nothing more; once quiet for a whole interval it says so', () => {
    const { clock, reports, progress } = watch(30_000);
    progress.start('apply');
    for (let i = 0; i < 3; i++) {
      clock.advance(15_000);
      progress.saw(`terraform_data.slow[${i}]: Creation complete after 14s [id=x]`, 'printed');
      clock.advance(15_000);
      progress.saw(`terraform_data.slow[${i + 1}]: Still creating... [10s elapsed]`, 'printed');
    }
    assert.deepEqual(reports, [], 'terraform printed within every interval');
    clock.advance(30_000);
    assert.deepEqual(reports, [{ step: 'apply', elapsedMs: 120_000, output: 'quiet', reported: { created: 3 } }]);
    assert.equal(
      progressMessage(reports[0]!, 30_000),
      'apply: running for 2m0s; nothing printed for 30s; so far terraform reported 3 created',
    );
  });

  it('each step starts from nothing; a line between steps counts for none', () => {
    const { clock, reports, progress } = watch(1000);
    const endPlan = progress.start('plan');
    progress.hold();
    progress.saw('terraform_data.a: Refreshing state... [id=1]', 'held');
    endPlan();
    progress.saw('terraform_data.a: Refreshing state... [id=1]', 'printed'); // the held plan, printed once classified
    progress.start('backup');
    clock.advance(1000);
    assert.deepEqual(reports, [{ step: 'backup', elapsedMs: 1000, output: 'quiet', reported: {} }]);
    assert.equal(
      progressMessage(reports[0]!, 1000),
      'backup: running for 1s; nothing printed for 1s; no resource reported yet',
    );
  });

  it('the interval is 30 s; only the test-only variable changes it, never below 100 ms', () => {
    assert.equal(PROGRESS_INTERVAL_MS, 30_000);
    assert.equal(progressIntervalMs({}), 30_000);
    assert.equal(progressIntervalMs({ CAPTF_PROGRESS_INTERVAL: '5' }), 30_000);
    assert.equal(progressIntervalMs({ [TEST_INTERVAL_VARIABLE]: '250' }), 250);
    assert.equal(progressIntervalMs({ [TEST_INTERVAL_VARIABLE]: '1' }), 100);
    assert.equal(progressIntervalMs({ [TEST_INTERVAL_VARIABLE]: 'soon' }), 30_000);
    assert.deepEqual([400, 1000, 59_999, 95_000, 3_723_000].map(elapsedText), ['0.4s', '1s', '59s', '1m35s', '1h2m3s']);
  });
});
