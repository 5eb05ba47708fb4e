// The history of runs, one dir each under <dir>/runs, and the status derived from it. A run dir is
// created with run.json before the runner starts; the runner writes result.json into it; run.json
// is rewritten with the exit code when the runner ends. What ran is therefore on disk even when the
// reconcile that started it was killed, and the status is read from it rather than kept beside it.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from '../schemas/zod.ts';
import { Result } from '../schemas/result.ts';
import { OpDecision } from '../controller-model/decision.ts';
import { countsAsFailure } from '../controller-model/backoff.ts';
import { jobOutcomeOf } from '../controller-model/actions.ts';
import { ApplyReason, type FinishedJob, type NewestApply } from '../controller-model/snapshot.ts';
import type { LocalPaths } from './object.ts';

const Time = z.iso.datetime();

export const RunRecord = z.strictObject({
  id: z.string().describe('0001-apply: the sequence number orders the history'),
  decision: OpDecision,
  image: z.string().describe('The image reference the run was given'),
  inputsHash: z
    .string()
    .optional()
    .describe('The inputs hash the controller rendered for the run (current inputs only): what a hold is keyed on'),
  guard: z
    .enum(['on', 'off'])
    .optional()
    .describe("apply: the --guard it was given (absent in records before it was kept: read as 'on')"),
  startedAt: Time,
  finishedAt: Time.optional(),
  exitCode: z.number().int().optional().describe("The runner's exit code; absent while it runs or when it vanished"),
});
export type RunRecord = z.infer<typeof RunRecord>;

export interface Run {
  record: RunRecord;
  dir: string;
  /** result.json, when the runner got as far as writing it. */
  result: Result | undefined;
}

type NewestApplyReading = z.infer<typeof NewestApply>;

const RUN_RECORD_FILE = 'run.json';
const RESULT_FILE = 'result.json';

/** Every run, oldest first. */
export async function readHistory(paths: LocalPaths): Promise<Run[]> {
  const ids = (await readdir(paths.runs).catch(() => [] as string[])).filter((name) => /^\d{4,}-/.test(name)).sort();
  const runs = await Promise.all(ids.map((id) => readRun(join(paths.runs, id))));
  return runs.filter((run): run is Run => run !== undefined);
}

/** undefined for a run dir without run.json: a run being created that has not started yet. */
async function readRun(dir: string): Promise<Run | undefined> {
  let recordText: string;
  try {
    recordText = await readFile(join(dir, RUN_RECORD_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const record = RunRecord.parse(JSON.parse(recordText));
  return { record, dir, result: await readResult(dir) };
}

/** result.json, or undefined when the runner died before writing it (runOutcome says what that means). */
export async function readResult(dir: string): Promise<Result | undefined> {
  try {
    return Result.parse(JSON.parse(await readFile(join(dir, RESULT_FILE), 'utf8')));
  } catch {
    return undefined;
  }
}

/** A new run dir, numbered after the newest run. */
export async function createRunDir(
  paths: LocalPaths,
  history: readonly Run[],
  op: string,
): Promise<{ id: string; dir: string }> {
  const newest = history.at(-1);
  const sequence = newest ? Number.parseInt(newest.record.id, 10) + 1 : 1;
  const id = `${String(sequence).padStart(4, '0')}-${op}`;
  const dir = join(paths.runs, id);
  await mkdir(dir, { recursive: true });
  return { id, dir };
}

export async function writeRunRecord(dir: string, record: RunRecord): Promise<void> {
  await writeFile(join(dir, RUN_RECORD_FILE), JSON.stringify(RunRecord.parse(record), null, 2) + '\n');
}

export type RunOutcome = FinishedJob['outcome'];

/** How the controller counts the Job (controller-model/actions.ts): by the result's reason, or what a missing result means. */
export function runOutcome(run: Run): RunOutcome {
  // No exit code at all is a runner whose reconcile was killed under it: a Job that vanished.
  if (!run.result && run.record.exitCode === undefined) return 'interrupted';
  return jobOutcomeOf({ reason: run.result?.reason, exitCode: run.record.exitCode });
}

const runFinishedAt = (run: Run): string => run.result?.finishedAt ?? run.record.finishedAt ?? run.record.startedAt;

/** What a controller keeps in status, derived from the history. */
export interface LocalStatus {
  newestApply?: { run: string } & NewestApplyReading;
  lastSucceededApply?: { run: string; finishedAt: string; image: string };
  /** Present while the newest apply attempt was blocked: the hash an approval must name. */
  blockedApply?: { run: string; hash: string; reason: ApplyReason };
  lastDriftCheck?: { run: string; at: string; found: boolean };
  lastRefreshAt?: string;
}

export function deriveStatus(history: readonly Run[]): LocalStatus {
  const status: LocalStatus = {};
  const applies = history.filter((run) => run.record.decision.op === 'apply');
  const newestAttempt = applies.at(-1);
  if (newestAttempt && runOutcome(newestAttempt) === 'blocked' && newestAttempt.result?.approvalHash) {
    const reason = ApplyReason.parse(newestAttempt.record.decision.reason);
    status.blockedApply = { run: newestAttempt.record.id, hash: newestAttempt.result.approvalHash, reason };
  }
  const newestNotBlocked = applies.findLast((run) => runOutcome(run) !== 'blocked');
  if (newestNotBlocked) {
    const outcome = runOutcome(newestNotBlocked);
    status.newestApply = {
      run: newestNotBlocked.record.id,
      outcome: outcome === 'succeeded' ? 'succeeded' : outcome === 'interrupted' ? 'interrupted' : 'failed',
      finishedAt: runFinishedAt(newestNotBlocked),
      outputReading: outputReading(newestNotBlocked.result),
    };
  }
  const lastSucceeded = applies.findLast((run) => runOutcome(run) === 'succeeded');
  if (lastSucceeded)
    status.lastSucceededApply = {
      run: lastSucceeded.record.id,
      finishedAt: runFinishedAt(lastSucceeded),
      image: lastSucceeded.record.image,
    };
  const drift = history.findLast((run) => run.record.decision.op === 'drift' && runOutcome(run) === 'succeeded');
  if (drift)
    status.lastDriftCheck = {
      run: drift.record.id,
      at: runFinishedAt(drift),
      found: drift.result?.drift?.found ?? false,
    };
  const refresh = history.findLast((run) => run.record.decision.op === 'refresh' && runOutcome(run) === 'succeeded');
  if (refresh) status.lastRefreshAt = runFinishedAt(refresh);
  return status;
}

/**
 * Locally there is no health or membership reading to interpret: an apply whose outputs are all
 * known reads as definite, anything else as unknown (so a machine or pool refreshes after it).
 */
function outputReading(result: Result | undefined): NewestApplyReading['outputReading'] {
  if (result?.outcome !== 'succeeded' && result?.outcome !== 'noChanges') return 'unknown';
  return Object.values(result.outputs ?? {}).every((output) => output.known) ? 'definite' : 'unknown';
}

/**
 * The lineage of the object's state as the controller knows it: `result.state.lineage` of the newest
 * result that names one (a refused run names none). Undefined until a run has read or left a state.
 */
export function objectLineage(history: readonly Run[]): string | undefined {
  return history.findLast((run) => run.result?.state?.lineage)?.result!.state!.lineage ?? undefined;
}

/** Kubernetes keeps only the newest failed Jobs (failedJobsHistoryLimit) and the newest others. */
export const FAILED_JOBS_HISTORY_LIMIT = 3;
const SUCCESSFUL_JOBS_HISTORY_LIMIT = 3;

/**
 * The Jobs a controller would still see, as the model reads them, each with the inputs hash the
 * controller rendered for it (never the result's: a run refused before it read its inputs carries
 * none, and the hold is keyed on what was rendered). A failure of other inputs than
 * `currentInputsHash` is left out: once the inputs are fixed, a new attempt starts at once, not after
 * the backoff their failures earned.
 */
export function retainedJobs(history: readonly Run[], currentInputsHash?: string | null): FinishedJob[] {
  const ofOtherInputs = (run: Run) =>
    !!currentInputsHash && !!run.record.inputsHash && run.record.inputsHash !== currentInputsHash;
  const jobs = history
    .map((run): [Run, FinishedJob] => [
      run,
      {
        op: run.record.decision.op,
        outcome: runOutcome(run),
        finishedAt: runFinishedAt(run),
        reason: run.record.decision.reason,
        ...(run.result ? { runnerReason: run.result.reason } : {}),
        ...(run.record.inputsHash ? { inputsHash: run.record.inputsHash } : {}),
      },
    ])
    .filter(([run, job]) => !(countsAsFailure(job) && ofOtherInputs(run)))
    .map(([, job]) => job);
  return [
    ...jobs.filter(countsAsFailure).slice(-FAILED_JOBS_HISTORY_LIMIT),
    ...jobs.filter((job) => !countsAsFailure(job)).slice(-SUCCESSFUL_JOBS_HISTORY_LIMIT),
  ];
}
