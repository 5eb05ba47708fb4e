// Rule 10 of DecideOp: with no apply to run, the schedule (contract/sections/decide-op.md, "The schedule").
// Each check yields the time it is due; the first check in order that is due runs, otherwise the
// object requeues at the soonest deadline (UpToDate).
import type { OpDecision, ScheduleReason, WaitDecision } from './decision.ts';
import { jitterSeconds } from './jitter.ts';
import { opDecision } from './op-shape.ts';
import type { Snapshot } from './snapshot.ts';
import { addSeconds, latest, secondsUntil, toMs } from './time.ts';

const MEMBERSHIP_CONVERGING_SECONDS = 30;
const HEALTH_PENDING_FIRST_SECONDS = 30;
const HEALTH_PENDING_CAP_SECONDS = 300;

interface ScheduledCheck {
  reason: ScheduleReason;
  op: 'refresh' | 'drift';
  dueAtMs: number;
}

/** 30 s after the first pending reading, doubling with each further one, capped at 5 min. */
export const healthPendingDelaySeconds = (pendingReadings: number): number =>
  Math.min(HEALTH_PENDING_CAP_SECONDS, HEALTH_PENDING_FIRST_SECONDS * 2 ** (Math.max(1, pendingReadings) - 1));

/**
 * status.lastRefresh as the schedule sees it: a successful apply whose own output reading is definite
 * stands in for a refresh, so the last refresh advances to that apply's finish.
 */
function lastRefreshMs(snapshot: Snapshot): number | undefined {
  const newest = snapshot.applies.newest;
  const definiteApply =
    newest?.outcome === 'succeeded' && newest.outputReading === 'definite' ? toMs(newest.finishedAt) : undefined;
  return latest(snapshot.refresh.lastRunAt === undefined ? undefined : toMs(snapshot.refresh.lastRunAt), definiteApply);
}

const lastSucceededApplyMs = (snapshot: Snapshot): number | undefined =>
  snapshot.applies.lastSucceededAt === undefined ? undefined : toMs(snapshot.applies.lastSucceededAt);

/**
 * The base of a periodic check: its own last run, else the last successful apply (the first check
 * comes one interval after provisioning), else the creation time (after a clusterctl move).
 */
function periodicBaseMs(snapshot: Snapshot, ownLastRunMs: number | undefined): number {
  return ownLastRunMs ?? lastSucceededApplyMs(snapshot) ?? toMs(snapshot.object.creationTimestamp);
}

function periodicDueAtMs(snapshot: Snapshot, ownLastRunMs: number | undefined, intervalSeconds: number): number {
  const base = periodicBaseMs(snapshot, ownLastRunMs);
  return addSeconds(base, intervalSeconds + jitterSeconds(snapshot.object.uid, intervalSeconds));
}

/** Convergence and pending delays count from the newest reading of the object: a refresh or an apply. */
const newestReadingMs = (snapshot: Snapshot): number =>
  latest(lastRefreshMs(snapshot), lastSucceededApplyMs(snapshot)) ?? toMs(snapshot.object.creationTimestamp);

/**
 * Rule 1: machines and pools refresh after the last successful apply when no refresh followed it, even
 * when a later apply failed (a failed drift remediation must not leave the success unread). A definite
 * reading of that apply stands in for the refresh: status.lastRefresh advanced to its finish, or, for
 * the newest apply, lastRefreshMs reads it.
 */
function refreshAfterApplyDueAtMs(snapshot: Snapshot): number | undefined {
  const succeededMs = lastSucceededApplyMs(snapshot);
  if (snapshot.object.kind === 'cluster' || succeededMs === undefined) return undefined;
  const refreshedMs = lastRefreshMs(snapshot);
  return refreshedMs !== undefined && refreshedMs >= succeededMs ? undefined : succeededMs;
}

/** The checks that apply to this object, in the schedule's order, each with the time it is due. */
function scheduledChecks(snapshot: Snapshot): ScheduledCheck[] {
  const { refresh, drift } = snapshot;
  const checks: ScheduledCheck[] = [];
  const refreshAfterApply = refreshAfterApplyDueAtMs(snapshot);
  if (refreshAfterApply !== undefined)
    checks.push({ reason: 'RefreshAfterApply', op: 'refresh', dueAtMs: refreshAfterApply });
  // Rules 2 and 3 are exclusive: while converging, the fixed 30 s replaces the doubling pending delay.
  if (refresh.membership?.converging) {
    checks.push({
      reason: 'MembershipConverging',
      op: 'refresh',
      dueAtMs: addSeconds(newestReadingMs(snapshot), MEMBERSHIP_CONVERGING_SECONDS),
    });
  } else if (refresh.healthPendingReadings > 0) {
    const delay = healthPendingDelaySeconds(refresh.healthPendingReadings);
    checks.push({ reason: 'HealthPending', op: 'refresh', dueAtMs: addSeconds(newestReadingMs(snapshot), delay) });
  }
  if (refresh.membership) {
    const dueAtMs = periodicDueAtMs(snapshot, lastRefreshMs(snapshot), refresh.membership.intervalSeconds);
    checks.push({ reason: 'MembershipRefreshDue', op: 'refresh', dueAtMs });
  }
  if (refresh.healthCheckIntervalSeconds !== undefined) {
    const dueAtMs = periodicDueAtMs(snapshot, lastRefreshMs(snapshot), refresh.healthCheckIntervalSeconds);
    checks.push({ reason: 'HealthCheckDue', op: 'refresh', dueAtMs });
  }
  const lastDriftCheckMs = drift.lastCheck === undefined ? undefined : toMs(drift.lastCheck.at);
  checks.push({
    reason: 'DriftDue',
    op: 'drift',
    dueAtMs: periodicDueAtMs(snapshot, lastDriftCheckMs, drift.intervalSeconds),
  });
  return checks;
}

export function scheduleDecision(snapshot: Snapshot): OpDecision | WaitDecision {
  const nowMs = toMs(snapshot.now);
  const checks = scheduledChecks(snapshot);
  const due = checks.find((check) => check.dueAtMs <= nowMs);
  if (due) return opDecision(snapshot, due.op, due.reason);
  const soonestMs = Math.min(...checks.map((check) => check.dueAtMs));
  return { kind: 'wait', reason: 'UpToDate', requeueAfterSeconds: secondsUntil(nowMs, soonestMs) };
}
