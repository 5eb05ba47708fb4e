// Runs the built runner (dist/captf-runner.mjs, what the image ships) the way a Job would, and
// reads back what it wrote. A scenario is one temp dir: module, inputs, state, out.
import { readFile, mkdir, writeFile, rm, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Result } from '../../src/schemas/result.ts';
import { EXIT, REASONS, isReason, type ReasonRow } from '../../src/vocabulary/reasons.ts';
import { builtRunner, builtSnapshotBlob } from './bundle.ts';
import { runProcess } from './exec.ts';
import { TERRAFORM_LINE_PREFIX } from '../../src/output/log.ts';
import {
  readLocalState,
  tempDir,
  testTerraformEnv,
  writeTree,
  type FileTree,
  type TerraformState,
} from './tf-modules.ts';

/** Refuses (throws at load) a bundle built from other sources than this tree's: run `npm run build`. */
export const RUNNER = builtRunner();

/**
 * node's arguments that start RUNNER through its startup snapshot, as the image's command does
 * (runner/captf-runner.sh, with its V8 flags, which the blob is built under): runRunner's runs, and so
 * scenario's, go through it; the tests that start RUNNER themselves run the plain bundle
 * (test/support/README.md). Refuses a blob another node made.
 */
const SNAPSHOT_ARGS = ['--single-threaded', '--max-semi-space-size=8', '--snapshot-blob', builtSnapshotBlob()];

/** As the image's command: a run given NODE_OPTIONS starts the plain bundle (the tests' Node 20 refuses a snapshot under other V8 flags; Node 24 would take it, but the image does not run it so). */
const nodeArgs = (env: Record<string, string>) => (env.NODE_OPTIONS ? [] : SNAPSHOT_ARGS);

export interface RunnerRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  result: Result | undefined;
  /** Everything the run wrote: stdout, stderr, the out dir's files and the termination message. */
  allBytes: string;
}

/**
 * `--new-state` for a scenario's own state file: any of its runs may be the one that starts it (a
 * test about what --new-state guards passes its own --state, and then gets no --new-state unless it
 * says so). It changes nothing once the state exists.
 */
const startsState = (args: readonly string[]) =>
  args.includes('--state') || args.includes('--new-state') ? [] : ['--new-state'];

export interface Scenario {
  dir: string;
  module: string;
  inputs: string;
  out: string;
  state: string;
  termination: string;
  /** Replaces the module's configuration with another variant. */
  useModule(tree: FileTree): Promise<void>;
  /** Writes terraform.tfvars.json (and other input files). */
  setInputs(files: Record<string, unknown>): Promise<void>;
  /** The runner with this scenario's module, inputs, out dir and --state (with --new-state: see startsState). */
  run(op: string, args?: string[], env?: Record<string, string>): Promise<RunnerRun>;
  /** s.run's arguments, for a run started another way (in the background, to be signalled). */
  runArgs(op: string, args?: string[]): string[];
  /** The runner with this scenario's module, inputs and out dir, without --state: the module's own backend, as a Job runs it. */
  runOwnBackend(op: string, args?: string[], env?: Record<string, string>): Promise<RunnerRun>;
  /** runOwnBackend's arguments, for a run started another way (in the background, to be signalled). */
  ownBackendArgs(op: string, args?: string[]): string[];
  readState(): Promise<TerraformState>;
}

export async function scenario(
  t: TestContext,
  tree: FileTree,
  inputs: Record<string, unknown> = {},
): Promise<Scenario> {
  const dir = await tempDir(t, 'captf-e2e-');
  const s: Scenario = {
    dir,
    module: join(dir, 'module'),
    inputs: join(dir, 'inputs'),
    out: join(dir, 'out'),
    state: join(dir, 'state', 'terraform.tfstate'),
    termination: join(dir, 'termination-log'),
    async useModule(next) {
      await rm(s.module, { recursive: true, force: true });
      await mkdir(s.module, { recursive: true });
      await writeTree(s.module, next);
    },
    async setInputs(files) {
      await rm(s.inputs, { recursive: true, force: true });
      await mkdir(s.inputs, { recursive: true });
      for (const [name, content] of Object.entries(files))
        await writeFile(join(s.inputs, name), typeof content === 'string' ? content : JSON.stringify(content));
    },
    ownBackendArgs: (op, args = []) => argsFor(s, op, [], args),
    runOwnBackend: (op, args = [], env = {}) => runRunner(s.ownBackendArgs(op, args), env, s),
    runArgs: (op, args = []) => argsFor(s, op, ['--state', s.state, ...startsState(args)], args),
    run: (op, args = [], env = {}) => runRunner(s.runArgs(op, args), env, s),
    readState: () => readLocalState(s.state),
  };
  await mkdir(join(dir, 'state'), { recursive: true });
  await s.useModule(tree);
  await s.setInputs(inputs);
  return s;
}

/** Where a test's runner reads its module and inputs and writes its out dir and termination message. */
export interface RunnerPaths {
  module: string;
  inputs: string;
  out: string;
  termination: string;
}

/**
 * A test's runner arguments (after the bundle's path), in the order a person writes them (a test
 * compares the rerun command the runner prints): `state` is the --state flags, `args` the rest.
 */
export const argsFor = (paths: RunnerPaths, op: string, state: readonly string[], args: readonly string[]) => [
  op,
  '--module',
  paths.module,
  '--inputs',
  paths.inputs,
  ...state,
  '--out',
  paths.out,
  '--termination-log',
  paths.termination,
  '--log-format',
  'json',
  ...args,
];

/** `where.dir` is the runner's working directory: whatever it writes by default stays out of the repository. */
export async function runRunner(
  args: string[],
  env: Record<string, string> = {},
  where?: { out: string; termination: string; dir?: string },
): Promise<RunnerRun> {
  if (where) await rm(join(where.out, 'result.json'), { force: true });
  const runEnv = testTerraformEnv(env);
  const run = await runProcess(process.execPath, [...nodeArgs(runEnv), RUNNER, ...args], {
    cwd: where?.dir,
    env: runEnv,
    timeoutMs: 240_000,
  });
  let result: Result | undefined;
  let outBytes = '';
  if (where) {
    try {
      result = JSON.parse(await readFile(join(where.out, 'result.json'), 'utf8')) as Result;
    } catch {
      result = undefined;
    }
    if (result) checkVocabulary(result, run.exitCode);
    for (const name of await readdir(where.out).catch(() => [] as string[]))
      outBytes += await readFile(join(where.out, name), 'utf8').catch(() => '');
    outBytes += await readFile(where.termination, 'utf8').catch(() => '');
  }
  return {
    exitCode: run.exitCode ?? -1,
    stdout: run.stdout,
    stderr: run.stderr,
    result,
    allBytes: `${run.stdout}\n${run.stderr}\n${outBytes}`,
  };
}

/**
 * Every result an e2e run leaves speaks the closed vocabulary (contract/sections/reasons.md): its
 * reason has a row that names this op, its outcome and exit code are the row's, and `error.step`
 * names the step of steps[] the run stopped in (absent exactly when no step ran).
 */
export function checkVocabulary(result: Result, processExitCode?: number | null): void {
  const where = `${result.op} ended ${result.outcome}/${result.reason} (exit ${result.exitCode})`;
  assert.ok(isReason(result.reason), `${where}: the reason has no row in src/vocabulary/reasons.ts`);
  const row = REASONS[result.reason];
  assert.ok(
    (row.ops as readonly string[]).includes(result.op),
    `${where}: the row of ${result.reason} does not name ${result.op}`,
  );
  assert.ok(
    (row.outcomes as readonly string[]).includes(result.outcome),
    `${where}: the row says ${row.outcomes.join(' or ')}`,
  );
  // The row's other exit codes: Interrupted's 130 (SIGINT).
  const signalled = ((row as ReasonRow).alsoExitCodes as readonly number[] | undefined)?.includes(result.exitCode);
  const resultNotWritten = processExitCode === EXIT.failed && result.exitCode === EXIT.succeeded;
  if (!signalled && !resultNotWritten && !(result.reason === 'DriftFound' && result.exitCode === EXIT.driftFound))
    assert.equal(result.exitCode, row.exitCode, `${where}: the row says exit ${row.exitCode}`);
  const error = result.error;
  if (!error) return;
  assert.equal(error.reason, result.reason, where);
  assert.equal(error.kind, row.kind, `${where}: the row's kind is ${row.kind}`);
  if (error.step === undefined) {
    assert.deepEqual(result.steps, [], `${where}: error.step is absent, so no step may have run`);
    return;
  }
  const stoppedIn = result.steps.filter((step) => step.name === error.step).at(-1);
  assert.ok(
    stoppedIn,
    `${where}: error.step ${error.step} is not in steps[] ${JSON.stringify(result.steps.map((s) => s.name))}`,
  );
  const allowed = error.kind === 'interrupted' ? ['interrupted', 'ok', 'failed'] : ['failed'];
  assert.ok(allowed.includes(stoppedIn.status), `${where}: error.step ${error.step} has status ${stoppedIn.status}`);
}

/** The inputs hash the state records (the contract's location), or undefined. */
export function recordedInputsHash(state: TerraformState): string | undefined {
  const resource = state.resources.find(
    (r) => !r.module && r.mode === 'managed' && r.type === 'terraform_data' && r.name === 'captf_inputs_hash',
  );
  const input = resource?.instances[0]?.attributes.input as { value?: string } | undefined;
  return input?.value;
}

/** The records of a run's log (stderr, `--log-format json`); a line that is no JSON object fails the test. */
export function logRecords(run: { stderr: string }): Record<string, unknown>[] {
  return run.stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const record: unknown = JSON.parse(line);
      if (record === null || typeof record !== 'object' || Array.isArray(record))
        throw new Error(`a stderr line is no JSON object: ${line}`);
      return record as Record<string, unknown>;
    });
}

/** What terraform printed on its stderr, as the run logged it (a record per line), its lines joined. */
export const terraformStderr = (run: { stderr: string }) =>
  logRecords(run)
    .filter((record) => record.source === 'terraform')
    .map((record) => record.msg)
    .join('\n');

/** What terraform printed on its stdout (each of its lines starts with TERRAFORM_LINE_PREFIX there), without the prefix. */
export const terraformStdout = (run: { stdout: string }) =>
  run.stdout
    .split('\n')
    .filter((line) => line.startsWith(TERRAFORM_LINE_PREFIX))
    .map((line) => line.slice(TERRAFORM_LINE_PREFIX.length))
    .join('\n');

/** The runner's own lines of stdout: its summary. */
export const summaryLines = (run: { stdout: string }) =>
  run.stdout.split('\n').filter((line) => line !== '' && !line.startsWith(TERRAFORM_LINE_PREFIX));

/** A diagnostic for assertion messages: the runner's output when something was unexpected. */
export const explain = (run: RunnerRun) =>
  `exit ${run.exitCode}\nresult: ${JSON.stringify(run.result?.error ?? run.result?.reason)}\nstderr: ${run.stderr.slice(-3000)}\nstdout: ${run.stdout.slice(-2000)}`;
