// DecideOp: the pure function by which the controller picks what runs next for an object with no
// active Job (contract/sections/decide-op.md states it for other languages). The first rule that returns a decision decides the pass;
// the op it picks then goes through the backoff. No I/O and no clock: the snapshot carries `now`.
import { RunnerError } from '../errors.ts';
import { backoffUntil, countsAsFailure } from './backoff.ts';
import type { Decision, OpDecision, OpReason, WaitDecision, WaitReason } from './decision.ts';
import { isMutable, opDecision } from './op-shape.ts';
import { scheduleDecision } from './schedule.ts';
import type { ApplyReason, FinishedJob, ModelOp, Snapshot } from './snapshot.ts';
import { handlingOf } from './actions.ts';
import { secondsUntil, toMs } from './time.ts';

const JOB_ACTIVE_REQUEUE_SECONDS = 60;
const DELETION_HELD_REQUEUE_SECONDS = 60;
/** An approval wait never requeues for longer than ten minutes. */
const APPROVAL_RECHECK_SECONDS = 600;

export function decideOp(snapshot: Snapshot): Decision {
  const decision =
    jobActive(snapshot) ?? //           rule 0
    restoreRequested(snapshot) ?? //    rule 1
    deletingObject(snapshot) ?? //      rules 2–4
    liveStateUnreadable(snapshot) ?? // not in the docs' order: see contract/sections/decide-op.md
    applyDue(snapshot) ?? //            rules 5–9, the Manual plan flow and the blocked-apply wait
    scheduleDecision(snapshot); //      rule 10
  return heldOrBackingOff(snapshot, decision);
}

/** What becomes of an op the rules chose: held (a held drift remediation may yield a due schedule op, which goes through this again), else backing off. */
function heldOrBackingOff(snapshot: Snapshot, decision: Decision): Decision {
  if (decision.kind !== 'op') return decision;
  const held = withHold(snapshot, decision);
  if (held === undefined) return withBackoff(snapshot, decision);
  return held.kind === 'op' ? heldOrBackingOff(snapshot, held) : held;
}

const wait = (reason: WaitReason, requeueAfterSeconds: number, heldOp?: WaitDecision['heldOp']): WaitDecision =>
  heldOp ? { kind: 'wait', reason, requeueAfterSeconds, heldOp } : { kind: 'wait', reason, requeueAfterSeconds };

function jobActive(snapshot: Snapshot): Decision | undefined {
  return snapshot.jobs.active ? wait('JobActive', JOB_ACTIVE_REQUEUE_SECONDS) : undefined;
}

/**
 * A complete, unconsumed backup is restored when the object is live, or when its deletion is held,
 * which rule 2 defines as deleting with state lost or unreadable: exactly what a restore releases.
 */
function restoreRequested(snapshot: Snapshot): Decision | undefined {
  const backup = snapshot.annotations.restoreState;
  if (!backup?.complete || backup.consumed) return undefined;
  const deletionHeld = snapshot.state.status === 'lostOrUnreadable';
  if (snapshot.object.deleting && !deletionHeld) return undefined;
  return opDecision(snapshot, 'restore', 'RestoreRequested');
}

/** A deleting object never applies, refreshes or checks drift, and its destroy is never gated. */
function deletingObject(snapshot: Snapshot): Decision | undefined {
  if (!snapshot.object.deleting) return undefined;
  switch (snapshot.state.status) {
    case 'lostOrUnreadable':
      return wait('DeletionHeld', DELETION_HELD_REQUEUE_SECONDS);
    case 'absent':
      return { kind: 'dropFinalizer', reason: 'DeletingWithoutState' };
    case 'present':
      return destroyFoundNoState(snapshot)
        ? wait('DestroyFoundNoState', DELETION_HELD_REQUEUE_SECONDS, { op: 'destroy', reason: 'Deleting' })
        : opDecision(snapshot, 'destroy', 'Deleting');
  }
}

/**
 * The newest destroy Job found no state (`NoStateFound`) while the controller reads one: the Job read
 * another place than the controller does (the backend settings it got), so another destroy would find
 * nothing again, or another object's state. The deletion is held for a person until what the Job was
 * built from changes (a spec edit, a controller upgrade) or the Job is deleted (a retry asked for).
 */
function destroyFoundNoState(snapshot: Snapshot): boolean {
  const newest = newestFinished(snapshot, 'destroy');
  return newest?.runnerReason === 'NoStateFound' && builtFromTheSame(snapshot, newest);
}

/** The newest finished Job of `op`, when one is retained. */
const newestFinished = (snapshot: Snapshot, op: ModelOp): FinishedJob | undefined =>
  snapshot.jobs.finished.filter((job) => job.op === op).sort((a, b) => toMs(b.finishedAt) - toMs(a.finishedAt))[0];

/** The Job was built by the same controller (its version) from the same spec (its generation), where both are known. */
function builtFromTheSame(snapshot: Snapshot, job: FinishedJob): boolean {
  const differs = <T>(now: T | undefined, then: T | undefined) =>
    now !== undefined && then !== undefined && now !== then;
  return (
    !differs(snapshot.object.generation, job.generation) && !differs(snapshot.controllerVersion, job.controllerVersion)
  );
}

/** A live object whose state is lost cannot be compared, and applying it as new would duplicate what exists. */
function liveStateUnreadable(snapshot: Snapshot): Decision | undefined {
  return snapshot.state.status === 'lostOrUnreadable'
    ? wait('StateUnreadable', DELETION_HELD_REQUEUE_SECONDS)
    : undefined;
}

/** Rules 5–9, then what may turn the apply into something else: the Manual plan flow or the blocked-apply wait. */
function applyDue(snapshot: Snapshot): Decision | undefined {
  const currentHash = liveInputsHash(snapshot);
  const reason = applyReason(snapshot, currentHash);
  if (reason === undefined) return undefined;
  if (snapshot.object.applyPolicy === 'Manual') {
    // The first apply is exempt from the plan flow; it runs guarded, with nothing in the state to destroy.
    return reason === 'NoState' ? opDecision(snapshot, 'apply', reason) : manualPlanFlow(snapshot, reason, currentHash);
  }
  return guardedApply(snapshot, reason, snapshot.inputs.approvalHash ?? currentHash);
}

function liveInputsHash(snapshot: Snapshot): string {
  const hash = snapshot.inputs.currentHash;
  if (hash === null) {
    const message = 'DecideOp got a live object without inputs.currentHash; validate snapshots with parseSnapshot';
    throw new RunnerError({ kind: 'internal', reason: 'InvalidSnapshot', message });
  }
  return hash;
}

function applyReason(snapshot: Snapshot, currentHash: string): ApplyReason | undefined {
  const { state, object, applies } = snapshot;
  if (state.status === 'absent') return 'NoState'; //                                   rule 5
  if (state.status !== 'present') return undefined; // lost state waits (liveStateUnreadable)
  if (state.inputsHash === null) return 'StateWithoutInputsHash'; //                      rule 6
  // Rules 7 and 8 are for mutable kinds; a machine retries a failed apply through rules 5 and 6,
  // since its state carries an inputs hash only after a successful apply.
  if (isMutable(object.kind) && currentHash !== state.inputsHash) return 'InputsChanged'; // rule 7
  // An interrupted apply (a Job deleted while it ran) may have applied part of its change: an
  // apply of the current inputs stays due, as after a failure.
  const newest = applies.newest?.outcome;
  if (isMutable(object.kind) && (newest === 'failed' || newest === 'interrupted')) return 'LastApplyFailed'; // rule 8
  if (driftRemediationDue(snapshot)) return 'DriftRemediation'; //                      rule 9
  return undefined;
}

/**
 * Drift found by the last check, action Remediate, not yet resolved by a successful apply, and fewer
 * than the failed-limit remediations failed since that check (blocked Jobs do not count).
 */
function driftRemediationDue(snapshot: Snapshot): boolean {
  const { lastCheck, action, remediationFailedLimit } = snapshot.drift;
  if (!lastCheck?.found || action !== 'Remediate') return false;
  const checkedMs = toMs(lastCheck.at);
  const { lastSucceededAt } = snapshot.applies;
  if (lastSucceededAt !== undefined && toMs(lastSucceededAt) > checkedMs) return false;
  const failedSinceCheck = snapshot.jobs.finished.filter(
    (job) =>
      job.op === 'apply' &&
      job.reason === 'DriftRemediation' &&
      countsAsFailure(job) &&
      toMs(job.finishedAt) > checkedMs,
  ).length;
  return failedSinceCheck < remediationFailedLimit;
}

/**
 * Manual (a TerraformCluster only): plan when no plan of the current inputs is recorded; apply the
 * recorded plan once its approval names it or when it changes nothing; else wait for the approval.
 * A plan recorded before the newest apply finished was planned against an older state and is stale.
 */
function manualPlanFlow(snapshot: Snapshot, reason: ApplyReason, currentHash: string): Decision {
  const plan = snapshot.annotations.recordedPlan;
  const newestApply = snapshot.applies.newest;
  const planIsCurrent =
    plan !== undefined &&
    plan.inputsHash === currentHash &&
    (newestApply === undefined || toMs(plan.recordedAt) > toMs(newestApply.finishedAt));
  if (!planIsCurrent) return opDecision(snapshot, 'plan', reason);
  if (!plan.hasChanges || snapshot.annotations.approvedPlanHash === plan.planHash) {
    return opDecision(snapshot, 'apply', reason, { approvedPlanHash: plan.planHash });
  }
  return approvalWait(snapshot, 'PlanApprovalPending', { op: 'apply', reason }, reason === 'DriftRemediation');
}

/**
 * Outside Manual, an apply whose newest attempt was blocked for the same hash waits for the approval
 * annotation or new inputs. The approval is passed to the runner only when it names the rendered hash,
 * and is not the one the blocked apply spent (ApprovalOfOtherState: the approval was given for another
 * state), which the controller withdraws: the same hash is passed again once it is written again.
 */
function guardedApply(snapshot: Snapshot, reason: ApplyReason, approvalKey: string): Decision {
  const blocked = snapshot.blockedApply;
  const spent = blocked?.hash === approvalKey && blocked.approvalSpent === true;
  const approved = snapshot.annotations.approveDestructivePlan === approvalKey && !spent;
  if (blocked?.hash === approvalKey && !approved) {
    return approvalWait(
      snapshot,
      'DestructivePlanApprovalPending',
      { op: 'apply', reason },
      blocked.reason === 'DriftRemediation',
    );
  }
  return opDecision(snapshot, 'apply', reason, approved ? { approvedInputsHash: approvalKey } : {});
}

/**
 * A waiting input change pauses the whole schedule (a refresh would render the unapplied inputs and
 * report the waiting change as drift). A waiting drift remediation leaves the schedule running, and
 * the approval wait re-checks at least every ten minutes.
 */
function approvalWait(
  snapshot: Snapshot,
  reason: WaitReason,
  heldOp: { op: ModelOp; reason: OpReason },
  forDriftRemediation: boolean,
): Decision {
  if (!forDriftRemediation) return wait(reason, APPROVAL_RECHECK_SECONDS, heldOp);
  const scheduled = scheduleDecision(snapshot);
  if (scheduled.kind === 'op') return scheduled;
  return wait(reason, Math.min(APPROVAL_RECHECK_SECONDS, scheduled.requeueAfterSeconds), heldOp);
}

/**
 * A held op waits for what it is built from to change (contract/controller-actions.json: the action
 * `hold`: plan, refresh and drift only; a failed apply retries with backoff). Like an approval wait,
 * a held plan (Manual) pauses the schedule as a waiting input change, but for a drift remediation's,
 * which leaves it running; a held refresh or drift waits alone.
 */
function withHold(snapshot: Snapshot, decision: OpDecision): Decision | undefined {
  if (!heldJob(snapshot, decision.op)) return undefined;
  const heldOp = { op: decision.op, reason: decision.reason };
  if (decision.op !== 'plan') return wait('HeldForChange', APPROVAL_RECHECK_SECONDS, heldOp);
  return approvalWait(snapshot, 'HeldForChange', heldOp, decision.reason === 'DriftRemediation');
}

/**
 * The newest finished Job of `op`, when its runner reason holds the op and the op would be built from
 * the same now: the same controller (its version, when both are known: an upgrade may render other
 * settings) and the same spec (its generation, when both are known); a plan renders the same inputs
 * hash (the controller's own, the image reference part of it); a refresh or drift acts on what the
 * last successful apply left, and none succeeded since. A machine's refresh and drift are never held:
 * nothing they are built from ever changes, so a hold would never end; they retry with backoff.
 */
function heldJob(snapshot: Snapshot, op: ModelOp): FinishedJob | undefined {
  const newest = newestFinished(snapshot, op);
  if (newest?.runnerReason === undefined || handlingOf(op, newest.runnerReason).action !== 'hold') return undefined;
  if (!builtFromTheSame(snapshot, newest)) return undefined;
  switch (op) {
    case 'plan':
      return newest.inputsHash !== undefined && newest.inputsHash === snapshot.inputs.currentHash ? newest : undefined;
    case 'refresh':
    case 'drift': {
      if (!isMutable(snapshot.object.kind)) return undefined;
      const applied = snapshot.applies.lastSucceededAt;
      return applied === undefined || toMs(applied) <= toMs(newest.finishedAt) ? newest : undefined;
    }
    default:
      return undefined;
  }
}

/** Backoff replaces the Job of an op that failed recently with a wait until the backoff ends. */
function withBackoff(snapshot: Snapshot, decision: OpDecision): Decision {
  const untilMs = backoffUntil(snapshot, decision.op);
  if (untilMs === undefined) return decision;
  return wait('BackingOff', secondsUntil(toMs(snapshot.now), untilMs), { op: decision.op, reason: decision.reason });
}
