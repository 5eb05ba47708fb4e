// The fault matrix's output faults (contract/sections/faults.md): enormous output from any step
// streams through with bounded memory and backpressure, and a log reader that goes away does not
// stop the op.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkRun,
  cleanupFake,
  type Expect,
  explainFake,
  type FakeRun,
  failedAt,
  fakeScenario,
  type FakeStep,
  MiB,
  RSS_LIMIT_KIB,
  runWithFake,
  streamedIn,
} from './faults.support.ts';

// Memory that does not grow with terraform's output, shown with tens of MB instead of hundreds
// (bench/ measures hundreds): retaining what streams through after a mark adds at least as much
// memory as it, TOTAL - MARK = 36 MiB. V8 grows its heap by steps of up to ~16 MiB at a moment of
// its choosing (seen anywhere from 3 to 21 MiB into a stream), hence the bound and the volume.
const MARK = 12 * MiB;
const TOTAL = 48 * MiB;
const GROWTH_LIMIT = 20 * MiB;

/**
 * The runner's peak RSS while terraform wrote its output (the fake reads it from /proc as it
 * writes) grew by less than GROWTH_LIMIT after terraform's first `mark` bytes. Keeping the output
 * beside the stream, buffering it to print it later, or holding it in memory instead of a file
 * all grow it.
 */
function assertFlatAfter(t: TestContext, run: FakeRun, step: FakeStep, mark: number) {
  const streamed = streamedIn(run, step);
  const atMark = streamed.readerPeakRssKiB[mark / MiB];
  const atEnd = streamed.readerPeakRssKiBAtEnd;
  assert.ok(
    typeof atMark === 'number' && atMark > 0 && typeof atEnd === 'number',
    `the fake read the runner's peak RSS as it wrote: ${JSON.stringify(streamed)}`,
  );
  const mib = (kib: number) => Math.round(kib / 1024);
  t.diagnostic(
    `the runner's peak RSS: ${mib(atMark)} MiB after terraform's first ${mark / MiB} MiB, ${mib(atEnd)} MiB after all ${mib(streamed.bytes / 1024)}, ${mib(run.peakRssKiB)} MiB over the run`,
  );
  assert.ok(
    (atEnd - atMark) * 1024 < GROWTH_LIMIT,
    `the runner's peak RSS grew ${mib(atEnd - atMark)} MiB (${mib(atMark)} → ${mib(atEnd)} MiB) while terraform wrote the ${mib((streamed.bytes - mark) / 1024)} MiB after its first ${mark / MiB}: memory grows with the output`,
  );
  assert.ok(run.peakRssKiB < RSS_LIMIT_KIB, `peak RSS ${mib(run.peakRssKiB)} MiB`);
  assert.ok(run.resultText!.length < 2 * MiB, 'the result stays small whatever terraform printed');
  return streamed;
}

describe('fault matrix: enormous output streams through with bounded memory', { concurrency: 2 }, () => {
  // A stdout reader that stalls (kubelet under pressure) does so after the mark, for
  // `stallStdoutMs`: what the runner would queue for it meanwhile shows as growth.
  const streamedCases: Array<{ step: FakeStep; fault: 'huge-stdout' | 'huge-stderr'; stallStdoutMs?: number }> = [
    { step: 'init', fault: 'huge-stdout' },
    // the human plan is held in a private file and printed after classification: all of it, to a
    // reader that stalls while it is printed.
    { step: 'plan', fault: 'huge-stdout', stallStdoutMs: 2_000 },
    { step: 'plan', fault: 'huge-stderr' },
    // a reader that stalls while terraform still writes: terraform waits on its pipe until the
    // reader resumes (backpressure).
    { step: 'apply', fault: 'huge-stdout', stallStdoutMs: 1_000 },
  ];
  for (const c of streamedCases) {
    const to = c.fault === 'huge-stderr' ? 'stderr' : 'stdout';
    const backpressure = c.stallStdoutMs !== undefined && c.step === 'apply';
    it(`${c.step}: ${c.fault}${c.stallStdoutMs ? ` to a stdout reader that stalls ${c.stallStdoutMs / 1000} s` : ''} → all of it reaches the runner's ${to}${backpressure ? ', terraform waits on its pipe until the reader resumes (backpressure)' : ''}, and its peak RSS grows by < ${GROWTH_LIMIT / MiB} MiB after the first ${MARK / MiB} of ${TOTAL / MiB} MiB, as terraform writes them and as they reach the runner's ${to}`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      const run = await runWithFake(s, {
        fake: { faults: [`${c.step}:${c.fault}=${TOTAL}`] },
        timeoutMs: 240_000,
        stallStdoutMs: c.stallStdoutMs,
        stallAfterBytes: MARK + MiB,
        peakAfterBytes: MARK,
      });
      checkRun(run, s, { outcome: 'succeeded', reason: 'ApplySucceeded', exit: 0 }, undefined);
      const bytes = to === 'stderr' ? run.stderrBytes : run.stdoutBytes;
      assert.ok(bytes >= TOTAL, `terraform's output reached the runner's ${to} (${bytes} bytes)`);
      assertFlatAfter(t, run, c.step, MARK);
      // As it reaches the runner's output (the held plan: as it is printed from its file).
      assert.ok(
        run.peakRssAtMarkKiB !== undefined && run.peakRssAtMarkKiB > 0,
        "the runner's memory was sampled at the mark",
      );
      const grewKiB = run.peakRssKiB - run.peakRssAtMarkKiB!;
      t.diagnostic(
        `the runner's peak RSS: ${Math.round(run.peakRssAtMarkKiB! / 1024)} MiB when the first ${MARK / MiB} MiB had reached its ${to}, ${Math.round(run.peakRssKiB / 1024)} MiB over the run`,
      );
      assert.ok(
        grewKiB * 1024 < GROWTH_LIMIT,
        `peak RSS grew ${Math.round(grewKiB / 1024)} MiB (${Math.round(run.peakRssAtMarkKiB! / 1024)} → ${Math.round(run.peakRssKiB / 1024)} MiB) while ${(TOTAL - MARK) / MiB} MiB more reached the runner's ${to}: memory grows with the output`,
      );
      if (c.stallStdoutMs)
        assert.ok(
          run.stalledAt !== undefined && run.resumedAt !== undefined,
          `the reader stalled and resumed\n${explainFake(run)}`,
        );
      if (backpressure) {
        // Buffering instead of waiting would take terraform's writes as they come: none would
        // wait for the reader, and terraform would write on while it stalled.
        const { longestWrite } = streamedIn(run, c.step);
        assert.ok(
          longestWrite.to >= run.resumedAt! && longestWrite.from <= run.resumedAt! - c.stallStdoutMs! / 2,
          `terraform's longest write waited from ${longestWrite.from - run.stalledAt!} to ${longestWrite.to - run.stalledAt!} ms after the reader stalled for ${c.stallStdoutMs} ms: it did not wait on the reader, the runner buffered its output`,
        );
        const exit = run.events.find((e) => e.event === 'exit' && e.step === c.step);
        assert.ok(
          exit && exit.event === 'exit' && exit.at >= run.resumedAt!,
          `terraform ${c.step} exited before the reader resumed\n${explainFake(run)}`,
        );
      }
    });
  }

  // Read whole (validate: capped at 32 MiB, then drained; version: its first 64 KiB) or to a file (state pull): two
  // runs beyond the cap, the second with three times the output. What the runner does with the output
  // once terraform is done (read what it kept, read the pulled state from its file) counts too,
  // and V8's growth as it takes the first 32 MiB cancels out between the two runs.
  const wholeCases: Array<{ step: FakeStep; fault: string; expect: Expect; failed: FakeStep }> = [
    // version and validate print JSON documents: the filler before them makes them unreadable.
    { step: 'version', fault: 'huge-stdout', expect: failedAt('version'), failed: 'version' },
    { step: 'validate', fault: 'huge-stdout', expect: failedAt('validate'), failed: 'validate' },
    {
      step: 'state-pull',
      fault: 'huge-stdout',
      expect: { outcome: 'failed', reason: 'StateUnreadable', step: 'state before', exit: 1 },
      failed: 'state-pull',
    },
  ];
  const SMALL = 40 * MiB; // beyond the 32 MiB cap
  // Keeping the second run's 80 MiB more would add at least 80 MiB. The driver reads terraform's output into one
  // buffer (src/util/socket-chunks.ts), so what is drained leaves nothing for V8 to collect later; what is left is a
  // step of V8's heap growth (up to ~16 MiB), as in the streamed cases above: seen 0–7 MiB between the two runs,
  // where a Buffer a read of the pipe left 20–26 MiB (validate) and up to 30 MiB more in a CI run.
  const LARGE = 3 * SMALL;
  const WHOLE_GROWTH_LIMIT = GROWTH_LIMIT;
  for (const c of wholeCases) {
    it(`${c.step}: ${c.fault} → ${c.expect.outcome}/${c.expect.reason}; with ${LARGE / MiB} MiB the peak RSS is within ${WHOLE_GROWTH_LIMIT / MiB} MiB of that with ${SMALL / MiB} MiB`, async (t) => {
      const peaks: number[] = [];
      for (const bytes of [SMALL, LARGE]) {
        const s = await fakeScenario(t);
        cleanupFake(t, s);
        const run = await runWithFake(s, { fake: { faults: [`${c.step}:${c.fault}=${bytes}`] }, timeoutMs: 240_000 });
        checkRun(run, s, c.expect, c.failed);
        assert.ok(
          run.peakRssKiB > 0 && run.peakRssKiB < RSS_LIMIT_KIB,
          `peak RSS ${Math.round(run.peakRssKiB / 1024)} MiB`,
        );
        assert.ok(run.resultText!.length < 2 * MiB, 'the result stays small whatever terraform printed');
        peaks.push(run.peakRssKiB);
      }
      const grewKiB = peaks[1]! - peaks[0]!;
      assert.ok(
        grewKiB * 1024 < WHOLE_GROWTH_LIMIT,
        `peak RSS ${peaks.map((k) => Math.round(k / 1024)).join(' → ')} MiB: ${(LARGE - SMALL) / MiB} MiB more output added ${Math.round(grewKiB / 1024)} MiB`,
      );
    });
  }

  // show -json is classified as it streams, while terraform writes it: one run, measured as
  // terraform writes, every change it printed counted.
  it(`show: huge-plan of ${TOTAL / MiB} MiB → succeeded/ApplySucceeded, every change classified, and the runner's peak RSS grows by < ${GROWTH_LIMIT / MiB} MiB after terraform's first ${MARK / MiB} MiB`, async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, { fake: { faults: [`show:huge-plan=${TOTAL}`] }, timeoutMs: 240_000 });
    const result = checkRun(run, s, { outcome: 'succeeded', reason: 'ApplySucceeded', exit: 0 }, undefined);
    const streamed = assertFlatAfter(t, run, 'show', MARK);
    assert.ok(streamed.bytes >= TOTAL, `terraform printed all of it (${streamed.bytes} bytes)`);
    assert.equal(
      result.plan!.counts.create,
      streamed.resourceChanges,
      'the creates classified are those terraform printed',
    );
    assert.ok(streamed.resourceChanges! > 30_000, `a plan of ${streamed.resourceChanges} changes`);
  });
});

describe('a log reader that goes away', () => {
  it('stdout and stderr closed during a huge apply output → the op still completes, its result and termination message written', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const bytes = 4 * MiB;
    const run = await runWithFake(s, { fake: { faults: [`apply:huge-stdout=${bytes}`] }, closeOutputEarly: true });
    checkRun(run, s, { outcome: 'succeeded', reason: 'ApplySucceeded', exit: 0 }, undefined);
    assert.ok(run.stdoutBytes < bytes, `the reader really went away (${run.stdoutBytes} bytes read)`);
    const applyExit = run.events.find((e) => e.event === 'exit' && e.step === 'apply');
    assert.deepEqual(
      applyExit && applyExit.event === 'exit' ? applyExit.code : undefined,
      0,
      'terraform apply ran to its end',
    );
    assert.equal(JSON.parse(run.termination!).outcome, 'succeeded');
  });
});
