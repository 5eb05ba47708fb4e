// The support of the fault matrix (contract/sections/faults.md): the built runner against the fake
// terraform (test/support/fake-terraform.mjs) in a temp dir, the run observed from outside (bytes
// counted, peak RSS sampled, the fake's own log of what ran and which signals it got), and the
// checks every case makes: a well-formed result and termination message that agree with the exit
// code, nothing applied after a failed step, no process left behind. The faults-*.test.ts files
// use it, one concern each, so that they run concurrently (the timing-sensitive ones serially,
// scripts/test.sh).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Result, type Result as ResultT } from '../../src/schemas/result.ts';
import {
  fakeTerraformEnv,
  installFakeTerraform,
  isProcessRunning,
  readFakeTerraformLog,
  stepsRun,
  tempDir,
  testTerraformEnv,
  writeTree,
  type FakeTerraformEvent,
  type FakeTerraformOptions,
} from '../support/tf-modules.ts';
import { RUNNER, argsFor, checkVocabulary } from '../support/runner.ts';

/** A module the fake "plans": the runner only needs a .tf file to accept it. */
const FAKE_MODULE = { 'main.tf': 'resource "terraform_data" "fake" {}\n' };

export interface FakeScenario {
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

export async function fakeScenario(t: TestContext): Promise<FakeScenario> {
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

export interface FakeRun {
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
  /** When the stdout reader stalled and when it resumed (Date.now()): stallStdoutMs. */
  stalledAt: number | undefined;
  resumedAt: number | undefined;
  events: FakeTerraformEvent[];
  durationMs: number;
}

export interface FakeRunOptions {
  op?: string;
  args?: string[];
  fake?: Omit<FakeTerraformOptions, 'log' | 'state' | 'orphanPidFile'>;
  /** Called once the runner runs (its pid known): send signals from here. */
  during?: (child: ChildProcess, s: FakeScenario) => Promise<void> | void;
  /** Start the runner in its own process group (so a test can signal the whole group). */
  ownGroup?: boolean;
  timeoutMs?: number;
  /** Once `stallAfterBytes` of the runner's stdout came, read nothing of it for this long (a slow log reader): its writes back up. */
  stallStdoutMs?: number;
  /** Default 1 MiB. */
  stallAfterBytes?: number;
  /** Record the peak RSS once this many bytes of stdout and stderr came through (peakRssAtMarkKiB). */
  peakAfterBytes?: number;
  /** Close the reading end of the runner's stdout and stderr after their first bytes (`| head`, a dead log collector). */
  closeOutputEarly?: boolean;
}

const TAIL = 64 * 1024;

export async function runWithFake(s: FakeScenario, options: FakeRunOptions = {}): Promise<FakeRun> {
  await rm(join(s.out, 'result.json'), { force: true });
  await rm(s.termination, { force: true });
  await rm(s.log, { force: true });
  const env = testTerraformEnv(
    fakeTerraformEnv({ ...options.fake, log: s.log, state: s.fakeState, orphanPidFile: s.orphanPidFile }),
  );
  const args = [
    RUNNER,
    ...argsFor(
      s,
      options.op ?? 'apply',
      ['--state', s.state, '--new-state'],
      ['--terraform', s.terraformPath, ...(options.args ?? [])],
    ),
  ];
  const started = Date.now();
  const child = spawn(process.execPath, args, {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownGroup ?? false,
  });
  const stdout = tailKeeper();
  const stderr = tailKeeper();
  child.stdout!.on('data', stdout.add);
  child.stderr!.on('data', stderr.add);
  if (options.closeOutputEarly) {
    for (const stream of [child.stdout!, child.stderr!]) stream.once('data', () => stream.destroy());
  }
  let stalledAt: number | undefined;
  let resumedAt: number | undefined;
  if (options.stallStdoutMs) {
    const after = options.stallAfterBytes ?? 1024 * 1024;
    const stallAfter = () => {
      if (stdout.bytes < after) return;
      child.stdout!.off('data', stallAfter);
      child.stdout!.pause();
      stalledAt = Date.now();
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
    if (
      peakRssAtMarkKiB === undefined &&
      options.peakAfterBytes !== undefined &&
      stdout.bytes + stderr.bytes >= options.peakAfterBytes
    )
      peakRssAtMarkKiB = peakRssKiB;
  };
  const sampler = setInterval(sample, 50);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
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
      exitCode: code,
      signal,
      stdoutBytes: stdout.bytes,
      stdoutTail: stdout.tail(),
      stderrBytes: stderr.bytes,
      stderrTail: stderr.tail(),
      result,
      resultText,
      termination: await readFile(s.termination, 'utf8').catch(() => undefined),
      peakRssKiB,
      peakRssAtMarkKiB,
      stalledAt,
      resumedAt,
      events: await readFakeTerraformLog(s.log),
      durationMs: Date.now() - started,
    };
  } finally {
    clearTimeout(timeout);
    clearInterval(sampler);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** Counts a stream's bytes and keeps its last TAIL of them, decoded only when asked: tens of MiB pass through. */
function tailKeeper() {
  const chunks: Buffer[] = [];
  let kept = 0;
  const keeper = {
    bytes: 0,
    add: (chunk: Buffer) => {
      keeper.bytes += chunk.length;
      chunks.push(chunk);
      kept += chunk.length;
      while (kept - chunks[0]!.length >= TAIL) kept -= chunks.shift()!.length;
    },
    tail: () => Buffer.concat(chunks).toString().slice(-TAIL),
  };
  return keeper;
}

/** The fake's record of the stream a huge-* fault made in `step`. */
export function streamedIn(run: FakeRun, step: string): Extract<FakeTerraformEvent, { event: 'streamed' }> {
  const streamed = run.events.find(
    (e): e is Extract<FakeTerraformEvent, { event: 'streamed' }> => e.event === 'streamed' && e.step === step,
  );
  assert.ok(streamed, `the fake logged no stream in ${step}\n${explainFake(run)}`);
  return streamed;
}

/** Polls the fake's log until `predicate` holds; returns the events then. */
export async function waitForEvents(
  s: FakeScenario,
  predicate: (events: FakeTerraformEvent[]) => boolean,
  timeoutMs = 30_000,
): Promise<FakeTerraformEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await readFakeTerraformLog(s.log).catch(() => []);
    if (predicate(events)) return events;
    if (Date.now() > deadline) throw new Error(`fake terraform log never matched: ${JSON.stringify(events.slice(-5))}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Resolves once the fake started `step` (the first time). */
export const stepStarted = (s: FakeScenario, step: string) =>
  waitForEvents(s, (events) => events.some((e) => e.event === 'start' && e.step === step));

export const explainFake = (run: FakeRun) =>
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
  checkVocabulary(result, run.exitCode);
  return result;
}

/** Every terraform the fake started has exited or is gone, and the orphan it may have left is gone too. */
/** Whether `pid` still runs one of this scenario's processes: pids are reused, and a stranger's never counts. */
export function isScenarioProcess(s: FakeScenario, pid: number): boolean {
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
  assert.deepEqual(
    pids.filter((pid) => isScenarioProcess(s, pid)),
    [],
    'a terraform process outlived the run',
  );
  let orphan: number | undefined;
  try {
    orphan = Number(readFileSync(s.orphanPidFile, 'utf8').trim());
  } catch {
    orphan = undefined;
  }
  if (orphan)
    assert.equal(isScenarioProcess(s, orphan), false, `the orphan ${orphan} terraform left in its group still runs`);
}

/** Kills what a failed test may have left: fake terraforms and their orphans (by pid, from the fake's own records). */
export function cleanupFake(t: TestContext, s: FakeScenario): void {
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

/**
 * The fake's step names (FAKE_TF_FAULT) → the runner's step names (result.error.step), in apply's order: the
 * fake's plan file is no zip, so a guarded apply pulls the state before once its plan is made (src/steps/state-planned.ts).
 */
export const RUNNER_STEP_OF = {
  version: 'preflight',
  init: 'init',
  validate: 'validate',
  plan: 'plan',
  'state-pull': 'state before',
  show: 'show',
  apply: 'apply',
} as const;
export type FakeStep = keyof typeof RUNNER_STEP_OF;
export const FAKE_STEPS = Object.keys(RUNNER_STEP_OF) as FakeStep[];

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

export interface Expect {
  outcome: ResultT['outcome'];
  reason: string;
  kind?: string;
  /** result.error.step (undefined: the run succeeded) */
  step?: string;
  exit: number;
}

/** Whether the apply step (terraform apply) may run in a run that failed at `step`. */
const reachesApply = (step: FakeStep) => step === 'apply';

/** What runs after `step` failed by design: a failed plan has the state pulled (reading, never writing) to learn its secrets (src/steps/state-planned.ts). */
const afterFailure = (step: FakeStep): FakeStep[] => (step === 'plan' ? ['state-pull'] : []);

export function failedAt(step: FakeStep): Expect {
  return step === 'version'
    ? { outcome: 'invalid', reason: 'ImageInvalid', kind: 'image', step: 'preflight', exit: 4 }
    : { outcome: 'failed', reason: FAILED_REASON[step], kind: 'terraform', step: RUNNER_STEP_OF[step], exit: 1 };
}

/** The checks every matrix case makes. */
export function checkRun(run: FakeRun, s: FakeScenario, expect: Expect, failedStep: FakeStep | undefined): ResultT {
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
    // Every step an error names is in steps[] as not ok ('decide' too: a block fails it).
    const recorded = result.steps.find((x) => x.name === expect.step);
    assert.ok(
      recorded && recorded.status !== 'ok',
      `the failed step is recorded as not ok: ${JSON.stringify(result.steps)}`,
    );
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
      const later = ran.filter(
        (x) => FAKE_STEPS.indexOf(x as FakeStep) > order && !afterFailure(failedStep).includes(x as FakeStep),
      );
      assert.deepEqual(later, [], `commands after the failed ${failedStep} ran: ${ran.join(' ')}`);
    }
  }
  assertNothingLeft(run, s);
  return result;
}

/** Peak RSS limit of the runner (KiB) whatever terraform prints (idle it is ~70–100 MiB). */
export const RSS_LIMIT_KIB = 250 * 1024;
export const MiB = 1024 * 1024;

export const signalsOf = (run: FakeRun | { events: FakeTerraformEvent[] }, step: string) => {
  const pids = new Set(run.events.filter((e) => e.event === 'start' && e.step === step).map((e) => e.pid));
  return run.events
    .filter((e): e is Extract<FakeTerraformEvent, { event: 'signal' }> => e.event === 'signal' && pids.has(e.pid))
    .map((e) => e.signal);
};
