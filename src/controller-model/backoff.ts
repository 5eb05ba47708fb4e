// Retries and backoff (contract/sections/decide-op.md, "Backoff"): one minute after the first failure,
// doubling to a ten-minute cap, and the cap from the point the object's retained failed Jobs reach
// failedJobsHistoryLimit (default 3, counted as at least 1). Beyond that limit the older failures
// are gone, so the streak can no longer be counted and the cap is the safe answer.
import type { FinishedJob, ModelOp, Snapshot } from './snapshot.ts';
import { addSeconds, toMs } from './time.ts';
import { countsTowardBackoff } from './actions.ts';

const BACKOFF_FIRST_SECONDS = 60;
const BACKOFF_CAP_SECONDS = 600;
const DEFAULT_FAILED_JOBS_HISTORY_LIMIT = 3;

/**
 * A blocked Job is not a failure (it counts toward neither the backoff nor the remediation cap), and a
 * Job stopped from outside retries at once. A Job the deadline killed is a failure even though the
 * runner reports it interrupted: a step that always hangs must reach the cap.
 */
export const countsAsFailure = (job: FinishedJob): boolean => countsTowardBackoff(job.outcome);

/** Neither success nor failure: skipped when counting a streak. */
const isNeutral = (job: FinishedJob): boolean => job.outcome === 'blocked' || job.outcome === 'interrupted';

/** The op's failures since its last success, newest first. */
export function failureStreak(jobs: readonly FinishedJob[], op: ModelOp): FinishedJob[] {
  const newestFirst = jobs
    .filter((job) => job.op === op && !isNeutral(job))
    .sort((a, b) => toMs(b.finishedAt) - toMs(a.finishedAt));
  const firstSuccess = newestFirst.findIndex((job) => !countsAsFailure(job));
  return firstSuccess === -1 ? newestFirst : newestFirst.slice(0, firstSuccess);
}

/** The wait after `consecutiveFailures` failures in a row, in seconds (0 when there is none). */
export function backoffSeconds(
  consecutiveFailures: number,
  retainedFailedJobs: number,
  failedJobsHistoryLimit: number,
): number {
  if (consecutiveFailures === 0) return 0;
  if (retainedFailedJobs >= Math.max(1, failedJobsHistoryLimit)) return BACKOFF_CAP_SECONDS;
  return Math.min(BACKOFF_CAP_SECONDS, BACKOFF_FIRST_SECONDS * 2 ** (consecutiveFailures - 1));
}

/** When the op may run again, in epoch ms, or undefined when it is not backing off. */
export function backoffUntil(snapshot: Snapshot, op: ModelOp): number | undefined {
  const { finished, failedJobsHistoryLimit = DEFAULT_FAILED_JOBS_HISTORY_LIMIT } = snapshot.jobs;
  const streak = failureStreak(finished, op);
  if (streak.length === 0) return undefined;
  const retainedFailedJobs = finished.filter(countsAsFailure).length;
  const until = addSeconds(
    toMs(streak[0]!.finishedAt),
    backoffSeconds(streak.length, retainedFailedJobs, failedJobsHistoryLimit),
  );
  return until > toMs(snapshot.now) ? until : undefined;
}
