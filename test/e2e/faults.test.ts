// The fault matrix (contract/sections/faults.md) with the fake terraform
// (test/support/fake-terraform.mjs): every step the runner runs terraform in × every way terraform
// can fail it (non-zero exit, death by a signal, a hang, enormous output, unreadable plan JSON, an
// unsupported version). Each run must leave a well-formed result (the zod Result schema) and a
// termination message that agree with the exit code; nothing may be applied after a failed or
// unparseable plan (the fake's own log says which commands ran); memory stays bounded; no process
// outlives the run. Then the signal choreography: exactly one SIGINT to terraform, a second only
// after --stop-grace, then a kill of its process group.
import { describe, it } from 'node:test';
import { writeFile } from 'node:fs/promises';
import { stepsRun } from '../support/tf-modules.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Result, type Result as ResultT } from '../../src/schemas/result.ts';
import {
  fakeTerraformEnv, installFakeTerraform, isProcessRunning, readFakeTerraformLog, tempDir, terraformEnv, writeTree,
  type FakeTerraformEvent, type FakeTerraformOptions,
} from '../support/tf-modules.ts';
import { RUNNER } from './runner.ts';
import { unpackArtifactDir } from '../support/artifacts.ts';

/** A module the fake "plans": the runner only needs a .tf file to accept it. */
const FAKE_MODULE = { 'main.tf': 'resource "terraform_data" "fake" {}\n' };

interface FakeScenario {
  dir: string;
  module: string;
  inputs: string;
  out: string;
  /** The runner's --state (the local backend override; the fake keeps its own state at fakeState). */
  state: string;
  fakeState: string;
  termination: string;
  log: string;
  orphanPidFile: string;
  terraformPath: string;
}

async function fakeScenario(t: TestContext): Promise<FakeScenario> {
  const dir = await tempDir(t, 'captf-fault-');
  const { terraformPath } = await installFakeTerraform(t);
  const s: FakeScenario = {
    dir,
    module: join(dir, 'module'),
    inputs: join(dir, 'inputs'),
    out: join(dir, 'out'),
    state: join(dir, 'state', 'terraform.tfstate'),
    fakeState: join(dir, 'fake.tfstate'),
    termination: join(dir, 'termination-log'),
    log: join(dir, 'fake-terraform.log'),
    orphanPidFile: join(dir, 'orphan.pid'),
    terraformPath,
  };
  await mkdir(s.inputs, { recursive: true });
  await mkdir(join(dir, 'state'), { recursive: true });
  await writeTree(s.module, FAKE_MODULE);
  return s;
}

interface FakeRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Bytes the runner wrote to stdout (counted, never kept whole). */
  stdoutBytes: number;
  stdoutTail: string;
  stderrBytes: number;
  stderrTail: string;
  result: ResultT | undefined;
  /** The raw result.json, when there is one (validated against the schema by checkWellFormed). */
  resultText: string | undefined;
  termination: string | undefined;
  /** The runner's peak resident memory (VmHWM), KiB. */
  peakRssKiB: number;
  /** The runner's peak resident memory (KiB) when the first `peakAfterBytes` of its stdout and stderr had come through. */
  peakRssAtMarkKiB: number | undefined;
  /** When the stalled stdout reader resumed (Date.now()): stallStdoutMs. */
  resumedAt: number | undefined;
  events: FakeTerraformEvent[];
  durationMs: number;
}

interface RunOptions {
  op?: string;
  args?: string[];
  fake?: Omit<FakeTerraformOptions, 'log' | 'state' | 'orphanPidFile'>;
  /** Called once the runner runs (its pid known): send signals from here. */
  during?: (child: ChildProcess, s: FakeScenario) => Promise<void> | void;
  /** Start the runner in its own process group (so a test can signal the whole group). */
  ownGroup?: boolean;
  timeoutMs?: number;
  /** Once the first MiB of the runner's stdout came, read nothing of it for this long (a slow log reader): its writes back up. */
  stallStdoutMs?: number;
  /** Record the peak RSS once this many bytes of stdout and stderr came through (peakRssAtMarkKiB). */
  peakAfterBytes?: number;
  /** Close the reading end of the runner's stdout and stderr after their first bytes (`| head`, a dead log collector). */
  closeOutputEarly?: boolean;
}

const TAIL = 64 * 1024;

async function runWithFake(s: FakeScenario, options: RunOptions = {}): Promise<FakeRun> {
  await rm(join(s.out, 'result.json'), { force: true });
  await rm(s.termination, { force: true });
  await rm(s.log, { force: true });
  const env = terraformEnv(fakeTerraformEnv({ ...options.fake, log: s.log, state: s.fakeState, orphanPidFile: s.orphanPidFile }));
  const args = [
    RUNNER, options.op ?? 'apply', '--terraform', s.terraformPath, '--module', s.module, '--inputs', s.inputs, '--state', s.state,
    '--out', s.out, '--termination-log', s.termination, '--log-format', 'json', ...(options.args ?? []),
  ];
  const started = Date.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: options.ownGroup ?? false });
  let stdoutBytes = 0;
  let stdoutTail = '';
  let stderrBytes = 0;
  let stderrTail = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdoutBytes += chunk.length;
    stdoutTail = (stdoutTail + chunk.toString()).slice(-TAIL);
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderrBytes += chunk.length;
    stderrTail = (stderrTail + chunk.toString()).slice(-TAIL);
  });
  if (options.closeOutputEarly) {
    for (const stream of [child.stdout!, child.stderr!]) stream.once('data', () => stream.destroy());
  }
  let resumedAt: number | undefined;
  if (options.stallStdoutMs) {
    const stallAfter = (chunk: Buffer) => {
      if (stdoutBytes - chunk.length >= 1024 * 1024 || stdoutBytes < 1024 * 1024) return;
      child.stdout!.off('data', stallAfter);
      child.stdout!.pause();
      setTimeout(() => {
        resumedAt = Date.now();
        child.stdout!.resume();
      }, options.stallStdoutMs).unref();
    };
    child.stdout!.on('data', stallAfter);
  }
  let peakRssKiB = 0;
  let peakRssAtMarkKiB: number | undefined;
  const sample = () => {
    try {
      const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (match) peakRssKiB = Math.max(peakRssKiB, Number(match[1]));
    } catch {
      // exited
    }
    if (peakRssAtMarkKiB === undefined && options.peakAfterBytes !== undefined && stdoutBytes + stderrBytes >= options.peakAfterBytes) peakRssAtMarkKiB = peakRssKiB;
  };
  const sampler = setInterval(sample, 50);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  const timeout = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  try {
    await options.during?.(child, s);
    const { code, signal } = await exited;
    const resultText = await readFile(join(s.out, 'result.json'), 'utf8').catch(() => undefined);
    let result: ResultT | undefined;
    try {
      result = resultText === undefined ? undefined : (JSON.parse(resultText) as ResultT);
    } catch {
      result = undefined;
    }
    return {
      exitCode: code, signal, stdoutBytes, stdoutTail, stderrBytes, stderrTail, result, resultText,
      termination: await readFile(s.termination, 'utf8').catch(() => undefined),
      peakRssKiB, peakRssAtMarkKiB, resumedAt, events: await readFakeTerraformLog(s.log), durationMs: Date.now() - started,
    };
  } finally {
    clearTimeout(timeout);
    clearInterval(sampler);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** Polls the fake's log until `predicate` holds; returns the events then. */
async function waitForEvents(s: FakeScenario, predicate: (events: FakeTerraformEvent[]) => boolean, timeoutMs = 30_000): Promise<FakeTerraformEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await readFakeTerraformLog(s.log).catch(() => []);
    if (predicate(events)) return events;
    if (Date.now() > deadline) throw new Error(`fake terraform log never matched: ${JSON.stringify(events.slice(-5))}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Resolves once the fake started `step` (the first time). */
const stepStarted = (s: FakeScenario, step: string) =>
  waitForEvents(s, (events) => events.some((e) => e.event === 'start' && e.step === step));

const explainFake = (run: FakeRun) =>
  `exit ${run.exitCode} signal ${run.signal}\nresult: ${JSON.stringify(run.result ? { outcome: run.result.outcome, reason: run.result.reason, error: run.result.error, steps: run.result.steps.map((x) => `${x.name}:${x.status}`) } : run.resultText)}\nfake: ${run.events.map((e) => `${e.event}:${'step' in e ? e.step : ''}${'signal' in e ? e.signal : ''}${'code' in e ? e.code : ''}`).join(' ')}\nstderr: ${run.stderrTail.slice(-2500)}`;

/** result.json parses with the contract's schema, and the termination message is the compact JSON that agrees with it. */
function checkWellFormed(run: FakeRun): ResultT {
  assert.ok(run.resultText !== undefined, `no result.json\n${explainFake(run)}`);
  const parsed = Result.safeParse(JSON.parse(run.resultText!));
  assert.ok(parsed.success, `result.json breaks the schema: ${parsed.success ? '' : parsed.error.message}`);
  const result = parsed.data;
  assert.equal(result.exitCode, run.exitCode, 'result.exitCode is the exit code');
  assert.equal(result.annotations['captf.io/outcome'], result.outcome);
  assert.equal(result.annotations['captf.io/reason'], result.reason);
  assert.ok(run.termination !== undefined, 'no termination message');
  assert.ok(Buffer.byteLength(run.termination!) <= 4096, 'termination message over 4096 bytes');
  const compact = JSON.parse(run.termination!);
  assert.equal(compact.outcome, result.outcome);
  assert.equal(compact.reason, result.reason);
  assert.equal(compact.exitCode, result.exitCode);
  return result;
}

/** Every terraform the fake started has exited or is gone, and the orphan it may have left is gone too. */
/** Whether `pid` still runs one of this scenario's processes: pids are reused, and a stranger's never counts. */
function isScenarioProcess(s: FakeScenario, pid: number): boolean {
  if (!isProcessRunning(pid)) return false;
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.includes(s.terraformPath) || (argv[0] === 'sleep' && argv[1] === '3600');
  } catch {
    return false;
  }
}

function assertNothingLeft(run: FakeRun, s: FakeScenario): void {
  const pids = run.events.filter((e) => e.event === 'start').map((e) => e.pid);
  assert.deepEqual(pids.filter((pid) => isScenarioProcess(s, pid)), [], 'a terraform process outlived the run');
  let orphan: number | undefined;
  try {
    orphan = Number(readFileSync(s.orphanPidFile, 'utf8').trim());
  } catch {
    orphan = undefined;
  }
  if (orphan) assert.equal(isScenarioProcess(s, orphan), false, `the orphan ${orphan} terraform left in its group still runs`);
}

/** Kills what a failed test may have left: fake terraforms and their orphans (by pid, from the fake's own records). */
function cleanupFake(t: TestContext, s: FakeScenario): void {
  t.after(async () => {
    const events = await readFakeTerraformLog(s.log).catch(() => []);
    const pids = new Set(events.filter((e) => e.event === 'start').map((e) => e.pid));
    try {
      pids.add(Number(readFileSync(s.orphanPidFile, 'utf8').trim()));
    } catch {
      // no orphan
    }
    for (const pid of pids) {
      if (!pid || !isScenarioProcess(s, pid)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
}

// ---- the matrix -----------------------------------------------------------------------------

/** The fake's step names (FAKE_TF_FAULT) → the runner's step names (result.error.step), in apply's order. */
const STEPS = {
  version: 'preflight',
  init: 'init',
  validate: 'validate',
  'state-pull': 'state before',
  plan: 'plan',
  show: 'show',
  apply: 'apply',
} as const;
type FakeStep = keyof typeof STEPS;
const FAKE_STEPS = Object.keys(STEPS) as FakeStep[];

/** The reason a failed command reports (version: the image is unusable). */
const FAILED_REASON: Record<FakeStep, string> = {
  version: 'ImageInvalid',
  init: 'InitFailed',
  validate: 'ValidateFailed',
  'state-pull': 'StatePullFailed',
  plan: 'PlanFailed',
  show: 'ShowFailed',
  apply: 'ApplyFailed',
};

interface Expect {
  outcome: ResultT['outcome'];
  reason: string;
  kind?: string;
  /** result.error.step (undefined: the run succeeded) */
  step?: string;
  exit: number;
}

/** Whether the apply step (terraform apply) may run in a run that failed at `step`. */
const reachesApply = (step: FakeStep) => step === 'apply';

/** A command that runs beside `step` by design, so it may have started when `step` failed: the state pull beside validate (reading, never writing). */
const besides = (step: FakeStep): FakeStep[] => (step === 'validate' ? ['state-pull'] : []);

function failedAt(step: FakeStep): Expect {
  return step === 'version'
    ? { outcome: 'invalid', reason: 'ImageInvalid', kind: 'image', step: 'preflight', exit: 4 }
    : { outcome: 'failed', reason: FAILED_REASON[step], kind: 'terraform', step: STEPS[step], exit: 1 };
}

/** The checks every matrix case makes. */
function checkRun(run: FakeRun, s: FakeScenario, expect: Expect, failedStep: FakeStep | undefined): ResultT {
  const result = checkWellFormed(run);
  const why = explainFake(run);
  assert.equal(run.exitCode, expect.exit, why);
  assert.equal(result.outcome, expect.outcome, why);
  assert.equal(result.reason, expect.reason, why);
  if (expect.step === undefined) {
    assert.equal(result.error, undefined, why);
  } else {
    assert.equal(result.error?.step, expect.step, why);
    if (expect.kind) assert.equal(result.error?.kind, expect.kind, why);
    assert.equal(result.error?.reason, expect.reason, why);
    // 'decide' is a decision, not a recorded step; every other failed step is in steps[] as not ok.
    const recorded = result.steps.find((x) => x.name === expect.step);
    if (expect.step !== 'decide') assert.ok(recorded && recorded.status !== 'ok', `the failed step is recorded as not ok: ${JSON.stringify(result.steps)}`);
  }
  const ran = stepsRun(run.events);
  if (failedStep !== undefined) {
    if (reachesApply(failedStep)) {
      assert.ok(ran.includes('apply'), why);
      assert.equal(result.mayHaveChanged, true, 'the apply ran: the result must say things may have changed');
      assert.equal(result.applied, true);
    } else {
      assert.ok(!ran.includes('apply'), `terraform apply ran after a failure in ${failedStep}: ${ran.join(' ')}`);
      assert.equal(result.applied, false);
      assert.equal(result.mayHaveChanged, false);
      // No later command started either: the run stops at the failed step.
      const order = FAKE_STEPS.indexOf(failedStep);
      const later = ran.filter((x) => FAKE_STEPS.indexOf(x as FakeStep) > order && !besides(failedStep).includes(x as FakeStep));
      assert.deepEqual(later, [], `commands after the failed ${failedStep} ran: ${ran.join(' ')}`);
    }
  }
  assertNothingLeft(run, s);
  return result;
}

/** Peak RSS limit of the runner (KiB) whatever terraform prints (idle it is ~70–100 MiB). */
const RSS_LIMIT_KIB = 250 * 1024;
const MiB = 1024 * 1024;

describe('fault matrix: every step × exit non-zero, killed by a signal, hang (deadline)', { concurrency: 3 }, () => {
  for (const step of FAKE_STEPS) {
    it(`${step}: exits 1 → ${failedAt(step).outcome}/${failedAt(step).reason}, exit ${failedAt(step).exit}`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      const run = await runWithFake(s, { fake: { faults: [`${step}:exit=1`] } });
      const result = checkRun(run, s, failedAt(step), step);
      if (step !== 'version') assert.match(result.message, /exited 1|fake failure/, 'the message says what terraform did');
    });

    it(`${step}: killed by SIGKILL → ${failedAt(step).outcome}/${failedAt(step).reason}, exit ${failedAt(step).exit}`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      const run = await runWithFake(s, { fake: { faults: [`${step}:signal=SIGKILL`] } });
      const result = checkRun(run, s, failedAt(step), step);
      if (step !== 'version' && step !== 'validate') assert.match(result.message, /SIGKILL/, 'the message names the signal');
    });

    it(`${step}: hangs → the deadline stops it: interrupted/JobDeadlineExceeded, exit 124, one SIGINT`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      // --deadline 20s with --stop-grace 1s: the runner stops itself at 20 - 1 - 5 = 14 s, late enough
      // that the steps before the hung one finish even on a loaded machine.
      const run = await runWithFake(s, { fake: { faults: [`${step}:hang`] }, args: ['--deadline', '20s', '--stop-grace', '1s'], timeoutMs: 60_000 });
      const result = checkRun(run, s, { outcome: 'interrupted', reason: 'JobDeadlineExceeded', kind: 'interrupted', step: STEPS[step], exit: 124 }, step);
      assert.ok(run.durationMs < 20_000, `the runner must be done before its deadline (${run.durationMs} ms)`);
      const hung = run.events.filter((e) => e.event === 'start' && e.step === step).map((e) => e.pid);
      for (const pid of hung) {
        const signals = run.events.filter((e) => e.event === 'signal' && e.pid === pid);
        assert.deepEqual(signals.map((e) => (e as { signal: string }).signal), ['SIGINT'], `terraform ${step} (pid ${pid}) gets exactly one SIGINT`);
      }
      assert.equal(result.steps.find((x) => x.name === STEPS[step])?.status, 'interrupted');
    });
  }
});

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

describe('fault matrix: unreadable plans are never applied', { concurrency: 3 }, () => {
  for (const fault of ['truncate', 'invalid-json']) {
    it(`show -json ${fault} → failed/PlanUnreadable, exit 1, apply never runs`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      const run = await runWithFake(s, { fake: { faults: [`show:${fault}`] } });
      checkRun(run, s, { outcome: 'failed', reason: 'PlanUnreadable', kind: 'plan', step: 'show', exit: 1 }, 'show');
    });
  }

  it('an errored plan (errored: true, plan exit 0/2) → failed/PlanErrored, exit 1, apply never runs', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const plan = join(s.dir, 'errored-plan.json');
    await writeFile(plan, JSON.stringify({
      format_version: '1.2', terraform_version: '1.11.4', planned_values: { root_module: {} },
      resource_changes: [{ address: 'terraform_data.fake', mode: 'managed', type: 'terraform_data', name: 'fake', change: { actions: ['create'], before: null, after: {} } }],
      configuration: { root_module: {} }, applyable: false, complete: false, errored: true, timestamp: new Date().toISOString(),
    }));
    const run = await runWithFake(s, { fake: { planJson: plan } });
    const result = checkRun(run, s, { outcome: 'failed', reason: 'PlanErrored', kind: 'plan', step: 'show', exit: 1 }, undefined);
    assert.ok(!stepsRun(run.events).includes('apply'), 'an errored plan is never applied');
    assert.equal(result.applied, false);
  });

  it('a plan of an unknown format_version major is counted destructive (fail closed) → blocked, exit 3, not applied', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const plan = join(s.dir, 'future-plan.json');
    await writeFile(plan, JSON.stringify({
      format_version: '2.0', terraform_version: '1.11.4', planned_values: { root_module: {} },
      resource_changes: [{ address: 'terraform_data.fake', mode: 'managed', type: 'terraform_data', name: 'fake', change: { actions: ['create'], before: null, after: {} } }],
      configuration: { root_module: {} }, applyable: true, complete: true, errored: false, timestamp: new Date().toISOString(),
    }));
    const run = await runWithFake(s, { fake: { planJson: plan } });
    const result = checkRun(run, s, { outcome: 'blocked', reason: 'DestructivePlanBlocked', kind: 'blocked', step: 'decide', exit: 3 }, undefined);
    assert.ok(!stepsRun(run.events).includes('apply'));
    assert.ok(result.plan!.failClosed.length > 0, JSON.stringify(result.plan));
  });

  for (const op of ['drift', 'destroy'] as const) {
    it(`${op}: show -json truncated → PlanUnreadable, nothing applied`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      // destroy needs a state to plan against.
      await writeFile(s.fakeState, JSON.stringify({ version: 4, terraform_version: '1.11.4', serial: 3, lineage: 'fault-lineage', outputs: {}, resources: [] }));
      const run = await runWithFake(s, { op, fake: { faults: ['show:truncate'], planActions: op === 'destroy' ? ['delete'] : ['create'] } });
      checkRun(run, s, { outcome: 'failed', reason: 'PlanUnreadable', kind: 'plan', step: 'show', exit: 1 }, 'show');
    });
  }
});

describe('errored.tfstate: terraform could not save the state', () => {
  const appliedOutputs = (state: { outputs?: Record<string, unknown> }) => Object.keys(state.outputs ?? {});

  it('the runner pushes it to the backend: erroredState.pushed, the applied state in the backend', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, { fake: { faults: ['apply:errored-state'] } });
    const result = checkRun(run, s, { outcome: 'failed', reason: 'ApplyFailed', step: 'apply', exit: 1 }, 'apply');
    assert.deepEqual(result.erroredState, { pushed: true });
    assert.ok(stepsRun(run.events).includes('state-push'), explainFake(run));
    assert.deepEqual(appliedOutputs(JSON.parse(await readFile(s.fakeState, 'utf8'))), ['cluster_name'], 'what the apply did is in the backend now');
    assert.ok(result.warnings.some((w) => /pushed it to the backend/.test(w)), JSON.stringify(result.warnings));
  });

  it('the backend refuses the push too: it is kept in the backup store, named in the result', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, { fake: { faults: ['apply:errored-state', 'state-push:exit=1'] } });
    const result = checkRun(run, s, { outcome: 'failed', reason: 'ApplyFailed', step: 'apply', exit: 1 }, 'apply');
    assert.equal(result.erroredState?.pushed, false);
    const keptAt = result.erroredState!.keptAt!;
    assert.ok(keptAt.startsWith(join(s.out, 'backups')), keptAt);
    const { files } = await unpackArtifactDir(keptAt);
    assert.deepEqual(appliedOutputs(JSON.parse(files['terraform.tfstate']!.toString('utf8'))), ['cluster_name'], 'the kept state holds what the apply did');
  });
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

describe('plans only a newer terraform makes', () => {
  // terraform 1.11 cannot plan lifecycle { destroy = false } on a resource; newer ones print
  // ["create","forget"] for a replace that keeps the old object. No delete: nothing to approve.
  it('a create-then-forget replace → applied without approval, counted as a create and a forget', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, { fake: { planActions: ['create', 'forget'] } });
    const result = checkRun(run, s, { outcome: 'succeeded', reason: 'ApplySucceeded', exit: 0 }, undefined);
    assert.ok(stepsRun(run.events).includes('apply'), explainFake(run));
    assert.equal(result.plan!.destructiveTotal, 0);
    assert.deepEqual([result.plan!.counts.create, result.plan!.counts.forget, result.plan!.counts.unknown], [1, 1, 0]);
  });
});

describe('fault matrix: unsupported terraform', { concurrency: 3 }, () => {
  const cases: Array<{ name: string; fake: NonNullable<RunOptions['fake']> }> = [
    { name: 'terraform 1.4.9 (too old)', fake: { version: '1.4.9' } },
    { name: 'terraform 2.0.0 (a new major)', fake: { version: '2.0.0' } },
    { name: 'OpenTofu 1.5.0 (too old)', fake: { version: '1.5.0', faults: ['version:opentofu'] } },
    { name: 'a version that is not semver', fake: { version: 'banana' } },
  ];
  for (const c of cases) {
    it(`${c.name} → invalid/ImageInvalid, exit 4, before anything touches state`, async (t) => {
      const s = await fakeScenario(t);
      cleanupFake(t, s);
      const run = await runWithFake(s, { fake: c.fake });
      const result = checkRun(run, s, failedAt('version'), 'version');
      assert.deepEqual([...new Set(stepsRun(run.events))], ['version'], 'only version ran');
      assert.match(result.message, /not supported|understands/);
    });
  }
});

// ---- signals --------------------------------------------------------------------------------

const signalsOf = (run: FakeRun | { events: FakeTerraformEvent[] }, step: string) => {
  const pids = new Set(run.events.filter((e) => e.event === 'start' && e.step === step).map((e) => e.pid));
  return run.events.filter((e): e is Extract<FakeTerraformEvent, { event: 'signal' }> => e.event === 'signal' && pids.has(e.pid)).map((e) => e.signal);
};

describe('signals: the stop choreography', { concurrency: 2 }, () => {
  for (const step of ['init', 'plan', 'show', 'apply'] as const) {
    it(`SIGTERM while terraform ${step} runs: exactly one SIGINT, no further step, interrupted in ${STEPS[step]}, exit 143`, async (t) => {
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
      const result = checkRun(run, s, { outcome: 'interrupted', reason: 'Interrupted', kind: 'interrupted', step: STEPS[step], exit: 143 }, step);
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
    checkRun(run, s, { outcome: 'interrupted', reason: 'Interrupted', kind: 'interrupted', step: 'plan', exit: 130 }, 'plan');
    assert.deepEqual(signalsOf(run, 'plan'), ['SIGINT']);
  });

  it('a SIGTERM to the runner\'s whole process group still reaches terraform once, as SIGINT (its own group)', async (t) => {
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
    assert.deepEqual(signalsOf(run, 'apply'), ['SIGINT'], 'terraform must not get the group\'s SIGTERM as well');
    const start = run.events.find((e) => e.event === 'start' && e.step === 'apply') as Extract<FakeTerraformEvent, { event: 'start' }>;
    assert.equal(start.pgid, start.pid, 'terraform leads its own process group');
  });

  it('terraform ignoring the first interrupt gets a second only after --stop-grace, and exits', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, {
      args: ['--stop-grace', '3s'],
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
    assert.ok(gap >= 2_900 && gap < 6_000, `the second interrupt came ${gap} ms after the first (grace 3 s)`);
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
        await waitForEvents(s, () => { try { return readFileSync(s.orphanPidFile, 'utf8').trim().length > 0; } catch { return false; } });
        // The leftover checks recognise this scenario's live processes (else they would prove nothing).
        const applyPid = events.find((e) => e.event === 'start' && e.step === 'apply')!.pid;
        assert.ok(isScenarioProcess(s, applyPid), 'the running fake apply is recognised');
        assert.ok(isScenarioProcess(s, Number(readFileSync(s.orphanPidFile, 'utf8').trim())), 'its orphan is recognised');
        signalledAt = Date.now();
        child.kill('SIGTERM');
      },
      timeoutMs: 40_000,
    });
    checkRun(run, s, { outcome: 'interrupted', reason: 'Interrupted', step: 'apply', exit: 143 }, 'apply');
    assert.deepEqual(signalsOf(run, 'apply'), ['SIGINT', 'SIGINT']);
    const applyPid = run.events.find((e) => e.event === 'start' && e.step === 'apply')!.pid;
    assert.ok(!run.events.some((e) => e.event === 'exit' && e.pid === applyPid), 'terraform apply had to be killed (no exit of its own)');
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

  it('what terraform leaves in its process group is ended after every command, also on success', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, { fake: { faults: ['init:orphan'] } });
    checkRun(run, s, { outcome: 'succeeded', reason: 'ApplySucceeded', exit: 0 }, undefined);
    const orphan = Number(readFileSync(s.orphanPidFile, 'utf8').trim());
    assert.ok(orphan > 0);
    assert.equal(isProcessRunning(orphan), false, 'the orphan of init still runs');
  });

  it('an orphan of an interrupted apply is ended too', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const run = await runWithFake(s, {
      fake: { faults: ['apply:orphan', 'apply:hang'] },
      during: async (child) => {
        await waitForEvents(s, () => { try { return readFileSync(s.orphanPidFile, 'utf8').trim().length > 0; } catch { return false; } });
        child.kill('SIGTERM');
      },
    });
    checkRun(run, s, { outcome: 'interrupted', reason: 'Interrupted', step: 'apply', exit: 143 }, 'apply');
  });

  it('terraform that leaks a secret while failing: the value never reaches any byte the runner writes', async (t) => {
    const s = await fakeScenario(t);
    cleanupFake(t, s);
    const canary = 'CANARY-fault-l3ak-Xy7';
    await writeFile(join(s.inputs, 'sensitive.tfvars.json'), JSON.stringify({ token: canary }));
    for (const step of ['init', 'plan', 'apply'] as const) {
      const run = await runWithFake(s, { fake: { faults: [`${step}:leak-secret`, `${step}:exit=1`], secret: canary } });
      checkRun(run, s, failedAt(step), step);
      const everything = `${run.stdoutTail}${run.stderrTail}${run.resultText}${run.termination}`;
      assert.ok(run.stderrTail.includes('The root module does not declare a variable named'), 'the fake printed its diagnostic');
      assert.ok(!everything.includes(canary), `the canary leaked in ${step}`);
    }
  });
});
