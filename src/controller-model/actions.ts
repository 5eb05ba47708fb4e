// What the controller does with a finished Job: one action per result, read from the runner's reason
// table (src/vocabulary/reasons.ts). A reason's exit code says whether a retry can help, and with
// the op it ran for, that is the whole of what the controller needs: the Job outcome DecideOp reads,
// whether it counts toward the backoff, the action, and the condition reason it sets. Pure: the
// reference a controller in another language checks itself against (contract/controller-actions.json).
import { EXIT, REASONS, isReason, type Op } from '../vocabulary/reasons.ts';
import type { FinishedJob } from './snapshot.ts';

export type JobOutcome = FinishedJob['outcome'];

export const CONTROLLER_ACTIONS = {
  record: 'the op did its job: record what the result says; DecideOp decides what follows',
  retry: 'retry with backoff: a later attempt may pass',
  retryAtOnce: 'retry at once, without backoff: the Job was stopped from outside',
  hold: "plan, refresh, drift: hold the op until what it is built from changes (DecideOp: HeldForChange): a retry would fail the same way; a machine's refresh and drift retry with backoff instead",
  newPlan: 'the approved plan is void: DecideOp plans again (Manual), and the new plan needs its own approval',
  awaitApproval:
    'wait for the approval annotation to name the approval hash, or for new inputs (DecideOp: DestructivePlanApprovalPending)',
  awaitRestore: 'the restore annotation is spent (consumed): wait until it names another backup',
  byHand: 'unlock is run by a person, never decided: the message says what to do',
} as const;
type ControllerAction = keyof typeof CONTROLLER_ACTIONS;

export interface Handling {
  jobOutcome: JobOutcome;
  countsTowardBackoff: boolean;
  action: ControllerAction;
  /** The reason the controller sets on the op's condition (ApplyJobSucceeded for apply and destroy Jobs). */
  conditionReason: string;
}

/** The Job outcome an exit code means: 0 succeeded, 3 blocked, 124 deadlineExceeded, 130 and 143 interrupted, anything else failed. */
function jobOutcomeOfExit(exitCode: number): JobOutcome {
  switch (exitCode) {
    case EXIT.succeeded:
    case EXIT.driftFound:
      return 'succeeded';
    case EXIT.blocked:
      return 'blocked';
    case EXIT.deadline:
      return 'deadlineExceeded';
    case EXIT.sigint:
    case EXIT.sigterm:
      return 'interrupted';
    default:
      return 'failed';
  }
}

/** Failures and deadline kills count; a block and a stop from outside are neither success nor failure. */
export const countsTowardBackoff = (outcome: JobOutcome): boolean =>
  outcome === 'failed' || outcome === 'deadlineExceeded';

/**
 * The action for a Job of `op` that ended with `exitCode`. A failed apply retries with backoff
 * whatever failed (choosing-the-operation.md: rule 8, and a machine through rules 5 and 6); a destroy
 * likewise, forever (a teardown never wedges: the-destroy-job.md); a restore that no retry can pass
 * spends its annotation; unlock is run by hand. Only plan, refresh and drift, where the docs are
 * silent, hold: on the usage's exit 2, and (refresh, drift: they run the pinned digest) the image's
 * and the policy's exits 4 and 8. A plan runs the spec's reference, which a tag re-pushed under the
 * same reference can fix unseen: its exits 4 and 8 retry.
 */
function actionOf(op: Op, exitCode: number): ControllerAction {
  const outcome = jobOutcomeOfExit(exitCode);
  if (outcome === 'succeeded') return 'record';
  if (op === 'unlock') return 'byHand';
  switch (outcome) {
    case 'blocked':
      return 'awaitApproval';
    case 'interrupted':
      return 'retryAtOnce';
    case 'deadlineExceeded':
      return 'retry';
    case 'failed':
      // Exit 7 (the state is not the object's) retries too: a person's fix (the backend settings, a
      // restore) changes nothing a hold waits for, and each attempt is refused before it plans.
      if (exitCode === EXIT.failed || exitCode === EXIT.otherState || op === 'destroy') return 'retry';
      if (op === 'restore') return 'awaitRestore';
      if (exitCode === EXIT.planStale) return 'newPlan';
      return holds(op, exitCode) ? 'hold' : 'retry';
  }
}

/** The failures that hold their op: plan's exit 2; refresh's and drift's exits 2, 4 and 8. Any other (an exit code this controller does not know too) retries. */
function holds(op: Op, exitCode: number): boolean {
  if (op === 'plan') return exitCode === EXIT.usage;
  if (op !== 'refresh' && op !== 'drift') return false;
  return exitCode === EXIT.usage || exitCode === EXIT.imageInvalid || exitCode === EXIT.policyDenied;
}

/**
 * How the controller handles a Job of `op` that ended with `reason` (the result's, or the termination
 * message's). A reason this controller does not know (a newer runner's) is handled by its exit code.
 */
export function handlingOf(op: Op, reason: string, exitCode?: number): Handling {
  const code = isReason(reason) ? REASONS[reason].exitCode : (exitCode ?? EXIT.failed);
  const jobOutcome = jobOutcomeOfExit(code);
  return {
    jobOutcome,
    countsTowardBackoff: countsTowardBackoff(jobOutcome),
    action: actionOf(op, code),
    conditionReason: conditionReasonOf(op, reason, code),
  };
}

/**
 * The condition reason is the runner's reason, but for a failed destroy: `DestroyFailed` whatever
 * step failed (the-destroy-job.md), unless the image must change (exit 4: ImageInvalid,
 * BackendMismatch, StateInWorkdir) or the state is not the object's (exit 7: StateLineageMismatch).
 */
function conditionReasonOf(op: Op, reason: string, exitCode: number): string {
  if (
    op === 'destroy' &&
    jobOutcomeOfExit(exitCode) === 'failed' &&
    exitCode !== EXIT.imageInvalid &&
    exitCode !== EXIT.otherState
  )
    return 'DestroyFailed';
  return reason;
}

/** What of a result the condition's message is made from. */
export interface MessageOfResult {
  outcome: string;
  message: string;
  approveCommand?: string;
}

/**
 * The message the controller sets on the op's condition: the result's message, and after a block,
 * `To approve: ` and the command (result.approveCommand), which the runner says once, apart from its
 * message (the-destructive-plan-guard.md: the message "gives the inputs hash and the command to approve it").
 */
export function conditionMessageOf(result: MessageOfResult): string {
  return result.outcome === 'blocked' && result.approveCommand !== undefined
    ? `${result.message} To approve: ${result.approveCommand}`
    : result.message;
}

/** What the controller knows of a finished Job: the runner's word when it gave one, and what Kubernetes says. */
export interface FinishedPod {
  /** `reason` of the termination message (or the result Secret); absent when the runner wrote none. */
  reason?: string;
  /** The container's exit code; absent when it never ran (the image could not be pulled). */
  exitCode?: number;
  /** The Job's `Failed` condition has reason `DeadlineExceeded`: activeDeadlineSeconds ended it. */
  jobDeadlineExceeded?: boolean;
}

/**
 * The Job outcome DecideOp reads, of a finished Job: Kubernetes' deadline first (the runner may have
 * exited 143 to the kubelet's SIGTERM), then the runner's reason, then its exit code alone (130 and
 * 143 without a result are a stop from outside; any other end without a result is a failure).
 */
export function jobOutcomeOf(pod: FinishedPod): JobOutcome {
  if (pod.jobDeadlineExceeded) return 'deadlineExceeded';
  if (pod.reason !== undefined) return handlingOf('apply', pod.reason, pod.exitCode).jobOutcome;
  return pod.exitCode === undefined ? 'failed' : jobOutcomeOfExit(pod.exitCode);
}

/**
 * Whether a finished apply consumes `captf.io/approve-destructive-plan`: after any successful apply
 * (succeeded or noChanges) whose rendered approval hash the annotation names, whether or not the plan
 * needed it; and after a block with the notice ApprovalOfOtherState (the approval was given for
 * another state: kept, the next Job would apply a plan nobody saw against this one; until the
 * controller reads it withdrawn, DecideOp never passes it: blockedApply.approvalSpent). An annotation
 * naming another hash approved nothing and stays. Once per Job: the same hash written again after
 * the controller read it withdrawn is a new approval.
 */
export function consumesApproval(
  job: { op: Op; reason: string; approvalHash: string; notices?: readonly string[] },
  annotation: string | undefined,
): boolean {
  if (job.op !== 'apply' || annotation === undefined || annotation !== job.approvalHash) return false;
  return (
    handlingOf('apply', job.reason).jobOutcome === 'succeeded' || (job.notices ?? []).includes('ApprovalOfOtherState')
  );
}

/** Whether a finished restore spends `captf.io/restore-state` (DecideOp reads it as consumed): it succeeded, or no retry can pass it. */
export function consumesRestoreRequest(reason: string, exitCode?: number): boolean {
  const { action } = handlingOf('restore', reason, exitCode);
  return action === 'record' || action === 'awaitRestore';
}
