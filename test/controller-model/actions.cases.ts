// What a finished Job means to the controller, as table tests of controller-model/actions.ts. Each
// case quotes the rule it checks; actions.test.ts runs them and scripts/generators/gen-vocabulary.ts exports them
// into contract/controller-actions.json, so the vectors a controller replays are exactly these tests.
import type { FinishedPod, JobOutcome, MessageOfResult } from '../../src/controller-model/actions.ts';
import type { Op } from '../../src/vocabulary/reasons.ts';

export interface JobOutcomeCase {
  name: string;
  doc: string;
  pod: FinishedPod;
  jobOutcome: JobOutcome;
}

export const JOB_OUTCOME_CASES: JobOutcomeCase[] = [
  {
    name: 'succeeded',
    doc: 'exit 0: succeeded',
    pod: { reason: 'ApplySucceeded', exitCode: 0 },
    jobOutcome: 'succeeded',
  },
  {
    name: 'noChanges is a success',
    doc: 'noChanges: succeeded',
    pod: { reason: 'NoChanges', exitCode: 0 },
    jobOutcome: 'succeeded',
  },
  {
    name: 'invalid is a failure',
    doc: 'invalid (exit 2 or 4): failed',
    pod: { reason: 'ImageInvalid', exitCode: 4 },
    jobOutcome: 'failed',
  },
  {
    name: 'a stale approved plan is a failure',
    doc: 'exit 5: failed',
    pod: { reason: 'PlanStale', exitCode: 5 },
    jobOutcome: 'failed',
  },
  {
    name: 'blocked',
    doc: 'exit 3: blocked',
    pod: { reason: 'DestructivePlanBlocked', exitCode: 3 },
    jobOutcome: 'blocked',
  },
  {
    name: "the runner's own deadline",
    doc: 'exit 124: deadlineExceeded',
    pod: { reason: 'JobDeadlineExceeded', exitCode: 124 },
    jobOutcome: 'deadlineExceeded',
  },
  {
    name: "Kubernetes' deadline (activeDeadlineSeconds) whatever the runner said",
    doc: "the Job's Failed condition with reason DeadlineExceeded: deadlineExceeded",
    pod: { reason: 'Interrupted', exitCode: 143, jobDeadlineExceeded: true },
    jobOutcome: 'deadlineExceeded',
  },
  {
    name: 'SIGTERM without DisruptionTarget (the Job deleted, a node shutdown): stopped from outside',
    doc: 'exit 143 or 130: interrupted, with or without the DisruptionTarget condition',
    pod: { reason: 'Interrupted', exitCode: 143 },
    jobOutcome: 'interrupted',
  },
  {
    name: 'SIGINT',
    doc: 'exit 130: interrupted',
    pod: { reason: 'Interrupted', exitCode: 130 },
    jobOutcome: 'interrupted',
  },
  {
    name: 'killed by SIGTERM before it wrote a result',
    doc: 'no reason, exit 143: interrupted',
    pod: { exitCode: 143 },
    jobOutcome: 'interrupted',
  },
  {
    name: 'killed outright (OOM, SIGKILL: exit 137) without a result',
    doc: 'no reason, any other exit: failed',
    pod: { exitCode: 137 },
    jobOutcome: 'failed',
  },
  {
    name: 'the image never ran (could not be pulled)',
    doc: 'no reason, no exit code: failed',
    pod: {},
    jobOutcome: 'failed',
  },
  {
    name: "a newer runner's reason: its exit code decides",
    doc: 'a reason this controller does not know: by its exit code',
    pod: { reason: 'SomeNewReason', exitCode: 3 },
    jobOutcome: 'blocked',
  },
];

export interface ApprovalCase {
  name: string;
  doc: string;
  job: { op: Op; reason: string; approvalHash: string; notices?: string[] };
  annotation?: string;
  consumed: boolean;
}

export const APPROVAL_CASES: ApprovalCase[] = [
  {
    name: 'an approved destructive apply consumes it',
    doc: 'After any successful apply of the approved inputs hash, the controller removes the annotation',
    job: { op: 'apply', reason: 'ApplySucceeded', approvalHash: 'a1' },
    annotation: 'a1',
    consumed: true,
  },
  {
    name: 'an approval the plan did not need is consumed too',
    doc: 'An approval is consumed even when the plan was not destructive',
    job: { op: 'apply', reason: 'ApplySucceeded', approvalHash: 'a1' },
    annotation: 'a1',
    consumed: true,
  },
  {
    name: 'an apply that only recorded the inputs consumes it',
    doc: 'any successful apply (noChanges included)',
    job: { op: 'apply', reason: 'NoChanges', approvalHash: 'a1' },
    annotation: 'a1',
    consumed: true,
  },
  {
    name: 'an annotation naming other inputs approved nothing and stays',
    doc: 'Any other value approves nothing and is not an error',
    job: { op: 'apply', reason: 'ApplySucceeded', approvalHash: 'a1' },
    annotation: 'a0',
    consumed: false,
  },
  {
    name: 'a blocked apply leaves it',
    doc: 'consumed after a successful apply only',
    job: { op: 'apply', reason: 'DestructivePlanBlocked', approvalHash: 'a1' },
    annotation: 'a1',
    consumed: false,
  },
  {
    name: 'a failed apply leaves it: the retry is covered',
    doc: 'consumed after a successful apply only',
    job: { op: 'apply', reason: 'ApplyFailed', approvalHash: 'a1' },
    annotation: 'a1',
    consumed: false,
  },
  {
    name: 'a denied apply leaves it',
    doc: 'consumed after a successful apply only',
    job: { op: 'apply', reason: 'PolicyDenied', approvalHash: 'a1' },
    annotation: 'a1',
    consumed: false,
  },
  {
    name: 'a block because the approval was given for another state withdraws it',
    doc: 'ApprovalOfOtherState: the controller withdraws the approval (contract.md §3)',
    job: { op: 'apply', reason: 'DestructivePlanBlocked', approvalHash: 'a1', notices: ['ApprovalOfOtherState'] },
    annotation: 'a1',
    consumed: true,
  },
  {
    name: 'no annotation, nothing to consume',
    doc: 'After any successful apply of the approved inputs hash',
    job: { op: 'apply', reason: 'ApplySucceeded', approvalHash: 'a1' },
    consumed: false,
  },
];

export interface ConditionMessageCase {
  name: string;
  doc: string;
  result: MessageOfResult;
  message: string;
}

const HASH = 'a'.repeat(64);
const BLOCKED_MESSAGE = `The plan needs an approval: it deletes or replaces: terraform_data.network (delete). Nothing was applied: an approval of approval hash ${HASH} applies it.`;
const APPROVE = `kubectl annotate terraformcluster demo -n team-a captf.io/approve-destructive-plan=${HASH} --overwrite`;

export const CONDITION_MESSAGE_CASES: ConditionMessageCase[] = [
  {
    name: 'a block: the message, then the command to approve it',
    doc: 'The message names the affected addresses and actions, says nothing was applied, and gives the inputs hash and the command to approve it',
    result: { outcome: 'blocked', message: BLOCKED_MESSAGE, approveCommand: APPROVE },
    message: `${BLOCKED_MESSAGE} To approve: ${APPROVE}`,
  },
  {
    name: 'a block of an approval given for another state: the same, after the notice that starts the message',
    doc: 'ApprovalOfOtherState: its text also starts the message (contract.md §3)',
    result: {
      outcome: 'blocked',
      message: `The approval was given for another state. ${BLOCKED_MESSAGE}`,
      approveCommand: APPROVE,
    },
    message: `The approval was given for another state. ${BLOCKED_MESSAGE} To approve: ${APPROVE}`,
  },
  {
    name: 'any other result: its message as it is',
    doc: 'the controller sets the condition with the message',
    result: { outcome: 'failed', message: 'terraform apply failed: main.tf:3: …' },
    message: 'terraform apply failed: main.tf:3: …',
  },
];

export interface RestoreCase {
  name: string;
  doc: string;
  reason: string;
  exitCode?: number;
  consumed: boolean;
}

export const RESTORE_CASES: RestoreCase[] = [
  {
    name: 'a restore that succeeded',
    doc: 'the restore annotation is consumed once the backup is restored',
    reason: 'RestoreSucceeded',
    consumed: true,
  },
  {
    name: 'a backup of another state',
    doc: 'LineageMismatch, exit 2: the annotation is spent',
    reason: 'LineageMismatch',
    consumed: true,
  },
  {
    name: 'no state backup at all',
    doc: 'BackupMismatch, exit 2: the annotation is spent',
    reason: 'BackupMismatch',
    consumed: true,
  },
  {
    name: 'an image that cannot restore',
    doc: 'exit 4: the annotation is spent',
    reason: 'ImageInvalid',
    consumed: true,
  },
  {
    name: 'a damaged chunk may read whole next time',
    doc: 'exit 1: retry with backoff',
    reason: 'ArtifactCorrupt',
    consumed: false,
  },
  { name: 'a held lock', doc: 'exit 1: retry with backoff', reason: 'StateLocked', consumed: false },
  { name: 'stopped from outside', doc: 'exit 143: retry at once', reason: 'Interrupted', consumed: false },
  {
    name: "a newer runner's reason whose exit code says no retry helps",
    doc: 'a reason this controller does not know: by its exit code',
    reason: 'SomeNewReason',
    exitCode: 2,
    consumed: true,
  },
];
