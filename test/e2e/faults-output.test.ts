// The fault matrix's output faults (contract/sections/faults.md): enormous output from any step
// streams through with bounded memory and backpressure, and a log reader that goes away does not
// stop the op.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkRun, cleanupFake, type Expect, explainFake, failedAt, fakeScenario, type FakeStep, MiB, RSS_LIMIT_KIB, runWithFake,
} from './faults-support.ts';

// Memory that does not grow with terraform's output, shown with tens of MB instead of hundreds
// (bench/ measures hundreds): retaining what streams through would add as much memory as it.
describe('fault matrix: enormous output streams through with bounded memory', { concurrency: 2 }, () => {
  const streamedCases: Array<{ step: FakeStep; fault: 'huge-stdout' | 'huge-stderr'; stallStdoutMs?: number }> = [
    { step: 'init', fault: 'huge-stdout' },
    // the human plan is held in a private file and printed after classification: all of it.
    { step: 'plan', fault: 'huge-stdout' },
    { step: 'plan', fault: 'huge-stderr' },
    { step: 'apply', fault: 'huge-stdout' },
    // a log reader that stalls (kubelet under pressure) while the held plan is printed
    { step: 'plan', fault: 'huge-stdout', stallStdoutMs: 4_000 },
  ];
  const TOTAL = 48 * MiB;
  const MARK = 12 * MiB;
  // More than a step of V8's heap growth (~16 MiB), well under what retaining the rest would add (36 MiB).
  const GROWTH_LIMIT = 20 * MiB;
  for (const c of streamedCases) {
    it(`${c.step}: ${c.fault}${c.stallStdoutMs ? ' to a stalled stdout reader' : ''} → all of it reaches the runner's ${c.fault === 'huge-stderr' ? 'stderr' : 'stdout'}, and the peak RSS after ${MARK / MiB} MiB grows by < ${GROWTH_LIMIT / MiB} MiB over the next ${(TOTAL - MARK) / MiB} MiB`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      const run = await runWithFake(s, { fake: { faults: [`${c.step}:${c.fault}=${TOTAL}`] }, timeoutMs: 240_000, stallStdoutMs: c.stallStdoutMs, peakAfterBytes: MARK });
      checkRun(run, s, { outcome: 'succeeded', reason: 'ApplySucceeded', exit: 0 }, undefined);
      const bytes = c.fault === 'huge-stderr' ? run.stderrBytes : run.stdoutBytes;
      assert.ok(bytes >= TOTAL, `terraform's output reached the runner's ${c.fault === 'huge-stderr' ? 'stderr' : 'stdout'} (${bytes} bytes)`);
      assert.ok(run.peakRssAtMarkKiB !== undefined && run.peakRssAtMarkKiB > 0, 'the runner\'s memory was sampled at the mark');
      const grewKiB = run.peakRssKiB - run.peakRssAtMarkKiB!;
      assert.ok(grewKiB * 1024 < GROWTH_LIMIT, `peak RSS grew ${Math.round(grewKiB / 1024)} MiB (${Math.round(run.peakRssAtMarkKiB! / 1024)} → ${Math.round(run.peakRssKiB / 1024)} MiB) while ${(TOTAL - MARK) / MiB} MiB more streamed: memory grows with the output`);
      assert.ok(run.peakRssKiB < RSS_LIMIT_KIB, `peak RSS ${Math.round(run.peakRssKiB / 1024)} MiB`);
      assert.ok(run.resultText!.length < 2 * MiB, 'the result stays small whatever terraform printed');
    });
  }

  it('apply: huge-stdout to a stalled stdout reader → terraform waits on its pipe until the reader resumes (backpressure), then all of it arrives', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const bytes = 16 * MiB;
    const run = await runWithFake(s, { fake: { faults: [`apply:huge-stdout=${bytes}`] }, stallStdoutMs: 4_000 });
    checkRun(run, s, { outcome: 'succeeded', reason: 'ApplySucceeded', exit: 0 }, undefined);
    const applyExit = run.events.find((e) => e.event === 'exit' && e.step === 'apply');
    assert.ok(applyExit && applyExit.event === 'exit' && run.resumedAt !== undefined, explainFake(run));
    // Buffering instead of waiting would let terraform write its 16 MiB and exit while nobody read.
    assert.ok(applyExit.at >= run.resumedAt!, `terraform apply exited ${run.resumedAt! - applyExit.at} ms before the reader resumed: the runner buffered its output`);
    assert.ok(run.stdoutBytes >= bytes, `all of terraform's output arrived (${run.stdoutBytes} bytes)`);
  });

  // Read whole (version, validate: capped at 32 MiB, then drained), to a file (state pull) or
  // classified as it streams (show): two runs beyond the cap, the second with twice the output.
  const wholeCases: Array<{ step: FakeStep; fault: string; expect: Expect; failed?: FakeStep }> = [
    // version and validate print JSON documents: the filler before them makes them unreadable.
    { step: 'version', fault: 'huge-stdout', expect: failedAt('version'), failed: 'version' },
    { step: 'validate', fault: 'huge-stdout', expect: failedAt('validate'), failed: 'validate' },
    { step: 'state-pull', fault: 'huge-stdout', expect: { outcome: 'failed', reason: 'StateUnreadable', step: 'state before', exit: 1 }, failed: 'state-pull' },
    { step: 'show', fault: 'huge-plan', expect: { outcome: 'succeeded', reason: 'ApplySucceeded', exit: 0 } },
  ];
  const SMALL = 40 * MiB; // beyond the 32 MiB cap; half of it is more than a step of V8's heap growth
  for (const c of wholeCases) {
    it(`${c.step}: ${c.fault} → ${c.expect.outcome}/${c.expect.reason}; with ${(2 * SMALL) / MiB} MiB the peak RSS is within ${SMALL / 2 / MiB} MiB of that with ${SMALL / MiB} MiB`, async (t) => {
      const peaks: number[] = [];
      const creates: number[] = [];
      for (const bytes of [SMALL, 2 * SMALL]) {
        const s = await fakeScenario(t);
        cleanupFake(t, s);
        const run = await runWithFake(s, { fake: { faults: [`${c.step}:${c.fault}=${bytes}`] }, timeoutMs: 240_000 });
        const result = checkRun(run, s, c.expect, c.failed);
        assert.ok(run.peakRssKiB > 0 && run.peakRssKiB < RSS_LIMIT_KIB, `peak RSS ${Math.round(run.peakRssKiB / 1024)} MiB`);
        assert.ok(run.resultText!.length < 2 * MiB, 'the result stays small whatever terraform printed');
        peaks.push(run.peakRssKiB);
        if (c.step === 'show') creates.push(result.plan!.counts.create);
      }
      const grewKiB = peaks[1]! - peaks[0]!;
      assert.ok(grewKiB * 1024 < SMALL / 2, `peak RSS ${peaks.map((k) => Math.round(k / 1024)).join(' → ')} MiB: ${SMALL / MiB} MiB more output added ${Math.round(grewKiB / 1024)} MiB`);
      // The whole plan was classified: twice the document, about twice the creates.
      if (c.step === 'show') assert.ok(creates[0]! > 30_000 && creates[1]! > 1.9 * creates[0]!, `creates classified: ${creates.join(', ')}`);
    });
  }
});

describe('a log reader that goes away', () => {
  it('stdout and stderr closed during a huge apply output → the op still completes, its result and termination message written', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, { fake: { faults: [`apply:huge-stdout=${8 * 1024 * 1024}`] }, closeOutputEarly: true });
    checkRun(run, s, { outcome: 'succeeded', reason: 'ApplySucceeded', exit: 0 }, undefined);
    assert.ok(run.stdoutBytes < 8 * 1024 * 1024, `the reader really went away (${run.stdoutBytes} bytes read)`);
    const applyExit = run.events.find((e) => e.event === 'exit' && e.step === 'apply');
    assert.deepEqual(applyExit && applyExit.event === 'exit' ? applyExit.code : undefined, 0, 'terraform apply ran to its end');
    assert.equal(JSON.parse(run.termination!).outcome, 'succeeded');
  });
});
