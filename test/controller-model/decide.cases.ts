// The table of DecideOp cases, written from the controller's documentation. Each case quotes the sentence it
// checks (contract/sections/decide-op.md restates the rules). decide-op.test.ts runs them, and scripts/generators/gen-decide-vectors.ts exports them as
// contract/vectors/decide-op.json, so the vectors a controller replays are exactly these tests.
//
// Every case starts from a live object that applied at 11:00 and is up to date at 12:00, and edits
// what its rule is about. Jitter of the UIDs below (checked independently with sha256sum):
//   cluster 3f0b8a52-…: 600 s -> 47, 1800 s -> 142, 3600 s -> 285
//   machine a1d4c9e7-…: 3600 s -> 287
//   pool    7c2e5b19-…: 600 s -> 4, 1800 s -> 13, 3600 s -> 26
import type { Decision, OpDecision, OpReason, WaitDecision } from '../../src/controller-model/decision.ts';
import type { ObjectKind } from '../../src/object-kind.ts';
import type { Snapshot } from '../../src/controller-model/snapshot.ts';

export interface DecideCase {
  name: string;
  /** The doc sentence the case checks (or, where the docs are silent, the choice in decide-op.md). */
  doc: string;
  snapshot: Snapshot;
  decision: Decision;
}

const NOW = '2025-06-01T12:00:00Z';
const at = (hhmmss: string) => `2025-06-01T${hhmmss}Z`;

const UIDS: Record<ObjectKind, string> = {
  cluster: '3f0b8a52-6c1e-4d7a-9b2f-0e5c7d9a1b34',
  machine: 'a1d4c9e7-2b3f-4e8a-8c6d-5f7e9a0b1c23',
  pool: '7c2e5b19-8d4a-4f6e-a3b1-9e0d2c4f6a87',
};

/** Requeue of the untouched live objects: cluster drift due 12:34:45, machine 12:34:47, pool membership 12:20:13. */
const UP_TO_DATE_SECONDS: Record<ObjectKind, number> = { cluster: 2085, machine: 2087, pool: 1213 };

function liveObject(kind: ObjectKind): Snapshot {
  return {
    now: NOW,
    object: {
      uid: UIDS[kind],
      kind,
      creationTimestamp: at('00:00:00'),
      deleting: false,
      ...(kind === 'cluster' ? { applyPolicy: 'Automatic' as const } : {}),
    },
    image: { pinnedDigest: 'sha256:0f0f' },
    inputs: { currentHash: 'h1' },
    state: { status: 'present', inputsHash: 'h1' },
    jobs: { active: false, finished: [] },
    applies: {
      newest: { outcome: 'succeeded', finishedAt: at('11:00:00'), outputReading: 'definite' },
      lastSucceededAt: at('11:00:00'),
    },
    annotations: {},
    drift: {
      intervalSeconds: 3600,
      action: 'Report',
      remediationFailedLimit: 3,
      lastCheck: { at: at('11:30:00'), found: false },
    },
    refresh:
      kind === 'pool'
        ? {
            lastRunAt: at('11:50:00'),
            healthPendingReadings: 0,
            membership: { converging: false, intervalSeconds: 1800 },
          }
        : { healthPendingReadings: 0 },
  };
}

const make =
  (kind: ObjectKind) =>
  (edit: (s: Snapshot) => void = () => {}): Snapshot => {
    const snapshot = liveObject(kind);
    edit(snapshot);
    return snapshot;
  };
const cluster = make('cluster');
const machine = make('machine');
const pool = make('pool');

// Expected decisions, spelled out in full by these helpers.
const apply = (
  reason: OpReason,
  approval: Pick<OpDecision, 'approvedInputsHash' | 'approvedPlanHash'> = {},
): OpDecision => ({
  kind: 'op',
  op: 'apply',
  reason,
  inputs: 'current',
  image: 'spec',
  ...approval,
});
const plan = (reason: OpReason): OpDecision => ({ kind: 'op', op: 'plan', reason, inputs: 'current', image: 'spec' });
const pinnedOp = (op: OpDecision['op'], reason: OpReason, inputs: OpDecision['inputs']): OpDecision => ({
  kind: 'op',
  op,
  reason,
  inputs,
  image: 'pinned',
});
const waitFor = (
  reason: WaitDecision['reason'],
  requeueAfterSeconds: number,
  heldOp?: WaitDecision['heldOp'],
): WaitDecision =>
  heldOp ? { kind: 'wait', reason, requeueAfterSeconds, heldOp } : { kind: 'wait', reason, requeueAfterSeconds };
const upToDate = (kind: ObjectKind) => waitFor('UpToDate', UP_TO_DATE_SECONDS[kind]);

const failedApply = (hhmmss: string, reason = 'LastApplyFailed') =>
  ({ op: 'apply', outcome: 'failed', finishedAt: at(hhmmss), reason }) as const;
const newestApplyFailed = (s: Snapshot, hhmmss: string) => {
  s.applies.newest = { outcome: 'failed', finishedAt: at(hhmmss), outputReading: 'unknown' };
};
const restoreBackup = { backup: 'backup-20250601', complete: true, consumed: false };

export const BASELINE_CASES: DecideCase[] = [
  {
    name: 'baseline: an applied cluster is up to date',
    doc: 'Otherwise: requeue at the soonest deadline',
    snapshot: cluster(),
    decision: upToDate('cluster'),
  },
  {
    name: 'baseline: an applied machine is up to date',
    doc: 'Otherwise: requeue at the soonest deadline',
    snapshot: machine(),
    decision: upToDate('machine'),
  },
  {
    name: 'baseline: an applied pool is up to date',
    doc: 'Otherwise: requeue at the soonest deadline',
    snapshot: pool(),
    decision: upToDate('pool'),
  },
];

export const ORDER_CASES: DecideCase[] = [
  // Rule 0
  {
    name: 'rule 0: an active Job means nothing runs',
    doc: 'A Job is active | Nothing; requeue in a minute | JobActive',
    snapshot: cluster((s) => {
      s.jobs.active = true;
      s.inputs.currentHash = 'h2';
    }),
    decision: waitFor('JobActive', 60),
  },
  {
    name: 'rule 0: an active Job comes before a deletion',
    doc: 'The first rule that applies decides the pass',
    snapshot: cluster((s) => {
      s.jobs.active = true;
      s.object.deleting = true;
    }),
    decision: waitFor('JobActive', 60),
  },
  // Rule 1
  {
    name: 'rule 1: a complete, unconsumed backup is restored on a live object',
    doc: 'captf.io/restore-state names a complete, unconsumed backup, and the object is not deleting',
    snapshot: cluster((s) => {
      s.annotations.restoreState = restoreBackup;
      s.inputs.currentHash = 'h2';
    }),
    decision: pinnedOp('restore', 'RestoreRequested', 'none'),
  },
  {
    name: 'rule 1: a restore on a held deletion (state lost)',
    doc: 'or its deletion is held',
    snapshot: cluster((s) => {
      s.object.deleting = true;
      s.state = { status: 'lostOrUnreadable' };
      s.annotations.restoreState = restoreBackup;
    }),
    decision: pinnedOp('restore', 'RestoreRequested', 'none'),
  },
  {
    name: 'rule 1: no restore for a deletion that is not held; it destroys',
    doc: 'and the object is not deleting, or its deletion is held',
    snapshot: cluster((s) => {
      s.object.deleting = true;
      s.annotations.restoreState = restoreBackup;
    }),
    decision: pinnedOp('destroy', 'Deleting', 'durable'),
  },
  {
    name: 'rule 1: an incomplete backup is not restored',
    doc: 'names a complete, unconsumed backup',
    snapshot: cluster((s) => {
      s.annotations.restoreState = { ...restoreBackup, complete: false };
    }),
    decision: upToDate('cluster'),
  },
  {
    name: 'rule 1: a consumed backup is not restored again',
    doc: 'names a complete, unconsumed backup',
    snapshot: cluster((s) => {
      s.annotations.restoreState = { ...restoreBackup, consumed: true };
    }),
    decision: upToDate('cluster'),
  },
  // Rules 2–4
  {
    name: 'rule 2: deleting with state lost or unreadable waits a minute',
    doc: 'Deleting, state lost or unreadable | Wait one minute | DeletionHeld',
    snapshot: cluster((s) => {
      s.object.deleting = true;
      s.inputs.currentHash = null;
      s.state = { status: 'lostOrUnreadable' };
    }),
    decision: waitFor('DeletionHeld', 60),
  },
  {
    name: 'rule 3: deleting with no state drops the finalizer',
    doc: 'Deleting, no state | Drop the finalizer | DeletingWithoutState',
    snapshot: machine((s) => {
      s.object.deleting = true;
      s.inputs.currentHash = null;
      s.state = { status: 'absent' };
    }),
    decision: { kind: 'dropFinalizer', reason: 'DeletingWithoutState' },
  },
  {
    name: 'rule 4: deleting destroys against the durable inputs with the pinned image',
    doc: 'destroy | The durable inputs',
    snapshot: machine((s) => {
      s.object.deleting = true;
      s.inputs.currentHash = null;
    }),
    decision: pinnedOp('destroy', 'Deleting', 'durable'),
  },
  {
    name: 'rule 4: a destroy is never gated, not by Manual, a blocked apply or changed inputs',
    doc: 'No approval. applyPolicy: Manual and the destructive-plan guard belong to applies. A destroy is never gated',
    snapshot: cluster((s) => {
      s.object.deleting = true;
      s.object.applyPolicy = 'Manual';
      s.inputs.currentHash = 'h2';
      s.blockedApply = { hash: 'h2', reason: 'InputsChanged' };
      s.drift = { ...s.drift, action: 'Remediate', lastCheck: { at: at('11:30:00'), found: true } };
    }),
    decision: pinnedOp('destroy', 'Deleting', 'durable'),
  },
  {
    name: 'rule 4: a destroy without a pinned digest runs the spec image and emits DigestUnknown',
    doc: 'without one it falls back to the spec reference and emits DigestUnknown',
    snapshot: pool((s) => {
      s.object.deleting = true;
      s.inputs.currentHash = null;
      s.image = {};
    }),
    decision: {
      kind: 'op',
      op: 'destroy',
      reason: 'Deleting',
      inputs: 'durable',
      image: 'spec',
      events: ['DigestUnknown'],
    },
  },
  {
    name: 'live object with lost state waits instead of applying as new (docs silent)',
    doc: 'decide-op.md: StateUnreadable',
    snapshot: cluster((s) => {
      s.state = { status: 'lostOrUnreadable' };
    }),
    decision: waitFor('StateUnreadable', 60),
  },
  // Rules 5–9
  {
    name: 'rule 5: no state applies',
    doc: 'No state | apply | NoState',
    snapshot: cluster((s) => {
      s.state = { status: 'absent' };
      s.applies = {};
    }),
    decision: apply('NoState'),
  },
  {
    name: 'rule 6: state without an inputs hash applies',
    doc: 'State without an inputs hash | apply | StateWithoutInputsHash',
    snapshot: pool((s) => {
      s.state = { status: 'present', inputsHash: null };
    }),
    decision: apply('StateWithoutInputsHash'),
  },
  {
    name: 'rule 7: a cluster whose inputs hash differs from the state’s applies',
    doc: 'Mutable kind, and the current inputs hash differs from state’s | apply | InputsChanged',
    snapshot: cluster((s) => {
      s.inputs.currentHash = 'h2';
    }),
    decision: apply('InputsChanged'),
  },
  {
    name: 'rule 7: a pool is mutable too',
    doc: 'Rules 7 and 8 apply to mutable kinds (a TerraformCluster and a TerraformMachinePool)',
    snapshot: pool((s) => {
      s.inputs.currentHash = 'h2';
    }),
    decision: apply('InputsChanged'),
  },
  {
    name: 'rule 7: a machine has no InputsChanged',
    doc: 'A TerraformMachine is immutable: … so it has no InputsChanged and no LastApplyFailed',
    snapshot: machine((s) => {
      s.inputs.currentHash = 'h2';
    }),
    decision: upToDate('machine'),
  },
  {
    name: 'rule 8: a cluster whose newest apply failed applies again',
    doc: 'Mutable kind, and the newest apply failed | apply | LastApplyFailed',
    snapshot: cluster((s) => newestApplyFailed(s, '11:40:00')),
    decision: apply('LastApplyFailed'),
  },
  {
    name: 'rule 8: a machine has no LastApplyFailed',
    doc: 'A TerraformMachine is immutable: … so it has no InputsChanged and no LastApplyFailed',
    snapshot: machine((s) => {
      s.refresh.lastRunAt = at('11:00:00'); // the definite reading of the 11:00 apply advanced status.lastRefresh
      newestApplyFailed(s, '11:40:00');
    }),
    decision: upToDate('machine'),
  },
  {
    name: 'rule 8: an apply Job deleted while it ran keeps an apply of the current inputs due, at once',
    doc: 'An apply of the current inputs stays due, even if the inputs equal the state’s',
    snapshot: cluster((s) => {
      s.applies.newest = { outcome: 'interrupted', finishedAt: at('11:59:50'), outputReading: 'unknown' };
      s.jobs.finished = [{ op: 'apply', outcome: 'interrupted', finishedAt: at('11:59:50'), reason: 'InputsChanged' }];
    }),
    decision: apply('LastApplyFailed'),
  },
  {
    name: 'rule 9: drift found with action Remediate applies',
    doc: 'Drift found, action Remediate, and fewer than the failed-limit remediations failed since the last drift check',
    snapshot: cluster((s) => {
      s.drift = { ...s.drift, action: 'Remediate', lastCheck: { at: at('11:30:00'), found: true } };
    }),
    decision: apply('DriftRemediation'),
  },
  {
    name: 'rule 9: drift found with action Report does not apply',
    doc: 'Drift found, action Remediate',
    snapshot: cluster((s) => {
      s.drift = { ...s.drift, lastCheck: { at: at('11:30:00'), found: true } };
    }),
    decision: upToDate('cluster'),
  },
  {
    name: 'rule 9: a machine stops remediating once the failed-limit remediations failed since the check',
    doc: 'fewer than the failed-limit remediations failed since the last drift check',
    snapshot: machine((s) => {
      s.drift = { ...s.drift, action: 'Remediate', lastCheck: { at: at('11:30:00'), found: true } };
      s.jobs.finished = [
        failedApply('11:35:00', 'DriftRemediation'),
        failedApply('11:40:00', 'DriftRemediation'),
        failedApply('11:50:00', 'DriftRemediation'),
      ];
      s.refresh.lastRunAt = at('11:00:00'); // the definite reading of the 11:00 apply advanced status.lastRefresh
      newestApplyFailed(s, '11:50:00');
    }),
    decision: upToDate('machine'),
  },
  {
    name: 'rule 9: a machine below the failed-limit remediates again once its backoff is over',
    doc: 'fewer than the failed-limit remediations failed since the last drift check',
    snapshot: machine((s) => {
      s.drift = { ...s.drift, action: 'Remediate', lastCheck: { at: at('11:30:00'), found: true } };
      s.jobs.finished = [failedApply('11:40:00', 'DriftRemediation'), failedApply('11:50:00', 'DriftRemediation')];
      newestApplyFailed(s, '11:50:00');
    }),
    decision: apply('DriftRemediation'),
  },
  {
    name: 'rule 9: blocked remediations do not count toward the failed-limit',
    doc: 'A blocked Job counts toward neither the retry backoff nor the remediation failure cap',
    snapshot: cluster((s) => {
      s.drift = { ...s.drift, action: 'Remediate', lastCheck: { at: at('11:30:00'), found: true } };
      const blocked = (hhmmss: string) =>
        ({ op: 'apply', outcome: 'blocked', finishedAt: at(hhmmss), reason: 'DriftRemediation' }) as const;
      s.jobs.finished = [blocked('11:35:00'), blocked('11:40:00'), blocked('11:50:00')];
      s.blockedApply = { hash: 'h1', reason: 'DriftRemediation' };
      s.annotations.approveDestructivePlan = 'h1';
    }),
    decision: apply('DriftRemediation', { approvedInputsHash: 'h1' }),
  },
  {
    name: 'rule 9: drift found before the last successful apply is no longer outstanding',
    doc: 'Drift found (by the last drift check; a later successful apply re-applied the inputs)',
    snapshot: cluster((s) => {
      s.drift = { ...s.drift, action: 'Remediate', lastCheck: { at: at('10:30:00'), found: true } };
    }),
    // Drift check base 10:30 + 3600 + 285 s = 11:34:45: due.
    decision: pinnedOp('drift', 'DriftDue', 'current'),
  },
];

export const IMMUTABLE_CASES: DecideCase[] = [
  {
    name: 'immutable: a machine retries a failed first apply through rule 5',
    doc: 'It retries a failed apply through rules 5 and 6 instead',
    snapshot: machine((s) => {
      s.state = { status: 'absent' };
      s.applies = { newest: { outcome: 'failed', finishedAt: at('11:50:00'), outputReading: 'unknown' } };
      s.jobs.finished = [failedApply('11:50:00', 'NoState')];
    }),
    decision: apply('NoState'),
  },
  {
    name: 'immutable: a partly written state reads as StateWithoutInputsHash and applies after its backoff',
    doc: 'a partly written state still reads as StateWithoutInputsHash, and the apply runs again after its backoff',
    snapshot: machine((s) => {
      s.state = { status: 'present', inputsHash: null };
      s.applies = { newest: { outcome: 'failed', finishedAt: at('11:59:30'), outputReading: 'unknown' } };
      s.jobs.finished = [failedApply('11:59:30', 'NoState')];
    }),
    decision: waitFor('BackingOff', 30, { op: 'apply', reason: 'StateWithoutInputsHash' }),
  },
];

/** Manual (a TerraformCluster only): inputs changed to h2. */
const manual = (edit: (s: Snapshot) => void = () => {}) =>
  cluster((s) => {
    s.object.applyPolicy = 'Manual';
    s.inputs.currentHash = 'h2';
    edit(s);
  });
const planOfH2 = { inputsHash: 'h2', planHash: 'p2', hasChanges: true, recordedAt: at('11:45:00') };

export const MANUAL_CASES: DecideCase[] = [
  {
    name: 'Manual: no plan of the current inputs recorded runs a plan Job',
    doc: 'a plan Job when no plan of the current inputs is recorded',
    snapshot: manual(),
    decision: plan('InputsChanged'),
  },
  {
    name: 'Manual: a plan of other inputs does not count',
    doc: 'no plan of the current inputs is recorded',
    snapshot: manual((s) => {
      s.annotations.recordedPlan = { ...planOfH2, inputsHash: 'h1' };
      s.annotations.approvedPlanHash = 'p2';
    }),
    decision: plan('InputsChanged'),
  },
  {
    name: 'Manual: a plan recorded before the newest apply is stale (docs silent)',
    doc: 'decide-op.md: a plan recorded before the newest apply finished is not a plan of the current inputs',
    snapshot: manual((s) => {
      s.inputs.currentHash = 'h1';
      newestApplyFailed(s, '11:50:00');
      s.annotations.recordedPlan = { ...planOfH2, inputsHash: 'h1' };
      s.annotations.approvedPlanHash = 'p2';
    }),
    decision: plan('LastApplyFailed'),
  },
  {
    name: 'Manual: a recorded plan with changes waits for its approval',
    doc: 'else a wait … The wait for an approval never requeues for longer than ten minutes',
    snapshot: manual((s) => {
      s.annotations.recordedPlan = planOfH2;
    }),
    decision: waitFor('PlanApprovalPending', 600, { op: 'apply', reason: 'InputsChanged' }),
  },
  {
    name: 'Manual: an approval naming another plan approves nothing',
    doc: 'the apply with the approved plan hash once the approval annotation names it',
    snapshot: manual((s) => {
      s.annotations.recordedPlan = planOfH2;
      s.annotations.approvedPlanHash = 'p1';
    }),
    decision: waitFor('PlanApprovalPending', 600, { op: 'apply', reason: 'InputsChanged' }),
  },
  {
    name: 'Manual: the approved plan is applied',
    doc: 'the apply with the approved plan hash once the approval annotation names it',
    snapshot: manual((s) => {
      s.annotations.recordedPlan = planOfH2;
      s.annotations.approvedPlanHash = 'p2';
    }),
    decision: apply('InputsChanged', { approvedPlanHash: 'p2' }),
  },
  {
    name: 'Manual: a plan that changes nothing is applied without approval',
    doc: '(or the plan changes nothing)',
    snapshot: manual((s) => {
      s.annotations.recordedPlan = { ...planOfH2, hasChanges: false };
    }),
    decision: apply('InputsChanged', { approvedPlanHash: 'p2' }),
  },
  {
    name: 'Manual: NoState is exempt from the plan flow',
    doc: 'every apply reason but NoState becomes the plan flow',
    snapshot: manual((s) => {
      s.state = { status: 'absent' };
      s.applies = {};
    }),
    decision: apply('NoState'),
  },
  {
    name: 'Manual: StateWithoutInputsHash goes through the plan flow',
    doc: 'every apply reason but NoState becomes the plan flow',
    snapshot: manual((s) => {
      s.state = { status: 'present', inputsHash: null };
    }),
    decision: plan('StateWithoutInputsHash'),
  },
  {
    name: 'Manual: the plan approval replaces the guard, so a destructive approval is not passed',
    doc: 'Under Manual it is replaced by the plan approval: a plan you approved is run as it is',
    snapshot: manual((s) => {
      s.annotations.approveDestructivePlan = 'h2';
      s.annotations.recordedPlan = planOfH2;
      s.annotations.approvedPlanHash = 'p2';
    }),
    decision: apply('InputsChanged', { approvedPlanHash: 'p2' }),
  },
  {
    name: 'Manual: a waiting input change pauses the schedule',
    doc: 'A waiting input change pauses the whole schedule',
    snapshot: manual((s) => {
      s.annotations.recordedPlan = planOfH2;
      s.refresh.healthCheckIntervalSeconds = 600; // due at 11:10:47
    }),
    decision: waitFor('PlanApprovalPending', 600, { op: 'apply', reason: 'InputsChanged' }),
  },
  {
    name: 'Manual: a drift remediation waiting for plan approval leaves the schedule running (docs silent)',
    doc: 'decide-op.md: a waiting drift remediation leaves the schedule running under either gate',
    snapshot: manual((s) => {
      s.inputs.currentHash = 'h1';
      s.drift = { ...s.drift, action: 'Remediate', lastCheck: { at: at('11:30:00'), found: true } };
      s.annotations.recordedPlan = { ...planOfH2, inputsHash: 'h1' };
      s.refresh.healthCheckIntervalSeconds = 600; // due at 11:10:47
    }),
    decision: pinnedOp('refresh', 'HealthCheckDue', 'current'),
  },
];

/** A cluster whose newest apply attempt, of inputs h2, was blocked before a destructive plan. */
const blockedCluster = (edit: (s: Snapshot) => void = () => {}) =>
  cluster((s) => {
    s.inputs.currentHash = 'h2';
    s.blockedApply = { hash: 'h2', reason: 'InputsChanged' };
    s.jobs.finished = [{ op: 'apply', outcome: 'blocked', finishedAt: at('11:40:00'), reason: 'InputsChanged' }];
    edit(s);
  });
/** A cluster whose drift remediation of h1 was blocked. */
const blockedRemediation = (edit: (s: Snapshot) => void = () => {}) =>
  cluster((s) => {
    s.drift = { ...s.drift, action: 'Remediate', lastCheck: { at: at('11:30:00'), found: true } };
    s.blockedApply = { hash: 'h1', reason: 'DriftRemediation' };
    s.jobs.finished = [{ op: 'apply', outcome: 'blocked', finishedAt: at('11:35:00'), reason: 'DriftRemediation' }];
    edit(s);
  });

export const BLOCKED_CASES: DecideCase[] = [
  {
    name: 'blocked: an apply blocked for the same inputs hash waits for approval',
    doc: 'an apply whose newest attempt was blocked before a destructive plan, for the same inputs hash, waits',
    snapshot: blockedCluster(),
    decision: waitFor('DestructivePlanApprovalPending', 600, { op: 'apply', reason: 'InputsChanged' }),
  },
  {
    name: 'blocked: the approval naming the inputs hash applies it, passing the approval',
    doc: 'The controller passes the approval to the runner only when the annotation equals the hash it rendered',
    snapshot: blockedCluster((s) => {
      s.annotations.approveDestructivePlan = 'h2';
    }),
    decision: apply('InputsChanged', { approvedInputsHash: 'h2' }),
  },
  {
    name: 'blocked: an approval the runner found given for another state (ApprovalOfOtherState) is not passed again while the annotation still names it',
    doc: 'contract.md: The controller withdraws the approval on that notice … A controller that keeps the annotation would have the next Job apply this plan with nobody having seen the notice',
    snapshot: blockedCluster((s) => {
      s.blockedApply = { hash: 'h2', reason: 'InputsChanged', approvalSpent: true };
      s.annotations.approveDestructivePlan = 'h2';
    }),
    decision: waitFor('DestructivePlanApprovalPending', 600, { op: 'apply', reason: 'InputsChanged' }),
  },
  {
    name: 'blocked: once the controller read it withdrawn, the same hash written again approves the new block',
    doc: 'contract.md: the same hash approved again approves the new block, whose record names the state it was shown against',
    snapshot: blockedCluster((s) => {
      s.blockedApply = { hash: 'h2', reason: 'InputsChanged', approvalSpent: false };
      s.annotations.approveDestructivePlan = 'h2';
    }),
    decision: apply('InputsChanged', { approvedInputsHash: 'h2' }),
  },
  {
    name: 'blocked: a spent approval of a pool is its approval hash',
    doc: 'A pool’s approval names its approval hash: the inputs hash without bootstrap_data',
    snapshot: pool((s) => {
      s.inputs = { currentHash: 'h3', approvalHash: 'a2' };
      s.blockedApply = { hash: 'a2', reason: 'InputsChanged', approvalSpent: true };
      s.annotations.approveDestructivePlan = 'a2';
    }),
    decision: waitFor('DestructivePlanApprovalPending', 600, { op: 'apply', reason: 'InputsChanged' }),
  },
  {
    name: 'blocked: an approval of any other value approves nothing and is not an error',
    doc: 'Any other value approves nothing and is not an error',
    snapshot: blockedCluster((s) => {
      s.annotations.approveDestructivePlan = 'h1';
    }),
    decision: waitFor('DestructivePlanApprovalPending', 600, { op: 'apply', reason: 'InputsChanged' }),
  },
  {
    name: 'blocked: new inputs start a new guarded apply at once',
    doc: 'A new inputs hash starts a new guarded apply at once',
    snapshot: blockedCluster((s) => {
      s.inputs.currentHash = 'h3';
    }),
    decision: apply('InputsChanged'),
  },
  {
    name: 'blocked: an approval equal to the rendered hash is passed on any guarded apply',
    doc: 'The controller passes the approval to the runner only when the annotation equals the hash it rendered',
    snapshot: cluster((s) => {
      s.inputs.currentHash = 'h2';
      s.annotations.approveDestructivePlan = 'h2';
    }),
    decision: apply('InputsChanged', { approvedInputsHash: 'h2' }),
  },
  {
    name: 'blocked: a blocked input change pauses drift checks',
    doc: 'A blocked input change pauses drift and health checks too',
    snapshot: blockedCluster((s) => {
      s.drift.lastCheck = { at: at('10:00:00'), found: false }; // due at 11:04:45
    }),
    decision: waitFor('DestructivePlanApprovalPending', 600, { op: 'apply', reason: 'InputsChanged' }),
  },
  {
    name: 'blocked: a blocked input change pauses health checks',
    doc: 'A blocked input change pauses drift and health checks too',
    snapshot: blockedCluster((s) => {
      s.refresh.healthCheckIntervalSeconds = 600; // due at 11:10:47
    }),
    decision: waitFor('DestructivePlanApprovalPending', 600, { op: 'apply', reason: 'InputsChanged' }),
  },
  {
    name: 'blocked: a blocked drift remediation leaves health checks running',
    doc: 'A blocked drift remediation leaves drift and health checks running',
    snapshot: blockedRemediation((s) => {
      s.refresh.healthCheckIntervalSeconds = 600; // due at 11:10:47
    }),
    decision: pinnedOp('refresh', 'HealthCheckDue', 'current'),
  },
  {
    name: 'blocked: a blocked drift remediation leaves drift checks running',
    doc: 'A blocked drift remediation leaves drift and health checks running',
    snapshot: blockedRemediation((s) => {
      s.drift.lastCheck = { at: at('10:00:00'), found: true }; // due at 11:04:45
      s.applies = {
        newest: { outcome: 'succeeded', finishedAt: at('09:00:00'), outputReading: 'definite' },
        lastSucceededAt: at('09:00:00'),
      };
    }),
    decision: pinnedOp('drift', 'DriftDue', 'current'),
  },
  {
    name: 'blocked: a blocked drift remediation with nothing due re-checks at the sooner of ten minutes and the schedule',
    doc: 'the controller re-checks at least every ten minutes',
    snapshot: blockedRemediation((s) => {
      s.refresh.healthCheckIntervalSeconds = 600;
      s.refresh.lastRunAt = at('11:55:00'); // health check due at 12:05:47
    }),
    decision: waitFor('DestructivePlanApprovalPending', 347, { op: 'apply', reason: 'DriftRemediation' }),
  },
  {
    name: 'blocked: an apply blocked after a failed apply waits for its approval',
    doc: 'an apply that was blocked after an earlier apply failed now waits for its approval',
    snapshot: cluster((s) => {
      newestApplyFailed(s, '11:30:00');
      s.blockedApply = { hash: 'h1', reason: 'LastApplyFailed' };
      s.jobs.finished = [
        failedApply('11:30:00'),
        { op: 'apply', outcome: 'blocked', finishedAt: at('11:40:00'), reason: 'LastApplyFailed' },
      ];
    }),
    decision: waitFor('DestructivePlanApprovalPending', 600, { op: 'apply', reason: 'LastApplyFailed' }),
  },
  {
    name: 'blocked: … and the approval applies it',
    doc: 'and the approval applies it',
    snapshot: cluster((s) => {
      newestApplyFailed(s, '11:30:00');
      s.blockedApply = { hash: 'h1', reason: 'LastApplyFailed' };
      s.jobs.finished = [
        failedApply('11:30:00'),
        { op: 'apply', outcome: 'blocked', finishedAt: at('11:40:00'), reason: 'LastApplyFailed' },
      ];
      s.annotations.approveDestructivePlan = 'h1';
    }),
    decision: apply('LastApplyFailed', { approvedInputsHash: 'h1' }),
  },
  {
    name: 'blocked: a pool compares its approval hash, which survives bootstrap rotations',
    doc: 'A pool’s approval names its approval hash: the inputs hash without bootstrap_data',
    snapshot: pool((s) => {
      s.inputs = { currentHash: 'h3-rotated', approvalHash: 'a2' };
      s.blockedApply = { hash: 'a2', reason: 'InputsChanged' };
    }),
    decision: waitFor('DestructivePlanApprovalPending', 600, { op: 'apply', reason: 'InputsChanged' }),
  },
  {
    name: 'blocked: a pool’s approval of its approval hash applies',
    doc: 'kubectl annotate terraformmachinepool … captf.io/approve-destructive-plan=<approval hash>',
    snapshot: pool((s) => {
      s.inputs = { currentHash: 'h3-rotated', approvalHash: 'a2' };
      s.blockedApply = { hash: 'a2', reason: 'InputsChanged' };
      s.annotations.approveDestructivePlan = 'a2';
    }),
    decision: apply('InputsChanged', { approvedInputsHash: 'a2' }),
  },
];

export const BACKOFF_CASES: DecideCase[] = [
  {
    name: 'backoff: one minute after the first failure',
    doc: 'one minute after the first failure',
    snapshot: cluster((s) => {
      newestApplyFailed(s, '11:59:30');
      s.jobs.finished = [failedApply('11:59:30')];
    }),
    decision: waitFor('BackingOff', 30, { op: 'apply', reason: 'LastApplyFailed' }),
  },
  {
    name: 'backoff: doubling after the second failure',
    doc: 'doubling to a ten-minute cap',
    snapshot: cluster((s) => {
      newestApplyFailed(s, '11:59:00');
      s.jobs.finished = [failedApply('11:58:00'), failedApply('11:59:00')];
    }),
    decision: waitFor('BackingOff', 60, { op: 'apply', reason: 'LastApplyFailed' }),
  },
  {
    name: 'backoff: doubling stops at the ten-minute cap',
    doc: 'doubling to a ten-minute cap',
    snapshot: cluster((s) => {
      newestApplyFailed(s, '11:55:00');
      s.jobs.failedJobsHistoryLimit = 10;
      s.jobs.finished = ['11:00:00', '11:10:00', '11:20:00', '11:30:00', '11:55:00'].map((t) => failedApply(t));
    }),
    decision: waitFor('BackingOff', 300, { op: 'apply', reason: 'LastApplyFailed' }),
  },
  {
    name: 'backoff: the cap once retained failed Jobs reach failedJobsHistoryLimit (default 3)',
    doc: 'the cap from the point the object’s retained failed Jobs reach failedJobsHistoryLimit (default 3',
    snapshot: cluster((s) => {
      newestApplyFailed(s, '11:58:00');
      s.jobs.finished = [failedApply('11:50:00'), failedApply('11:52:00'), failedApply('11:58:00')];
    }),
    decision: waitFor('BackingOff', 480, { op: 'apply', reason: 'LastApplyFailed' }),
  },
  {
    name: 'backoff: failedJobsHistoryLimit counts as at least 1',
    doc: 'counted as at least 1',
    snapshot: cluster((s) => {
      newestApplyFailed(s, '11:59:00');
      s.jobs.failedJobsHistoryLimit = 0;
      s.jobs.finished = [failedApply('11:59:00')];
    }),
    decision: waitFor('BackingOff', 540, { op: 'apply', reason: 'LastApplyFailed' }),
  },
  {
    name: 'backoff: blocked Jobs count toward no backoff',
    doc: 'A blocked Job counts toward neither the retry backoff nor the remediation failure cap',
    snapshot: cluster((s) => {
      newestApplyFailed(s, '11:50:00');
      s.blockedApply = { hash: 'h1', reason: 'LastApplyFailed' };
      s.annotations.approveDestructivePlan = 'h1';
      const blocked = (hhmmss: string) =>
        ({ op: 'apply', outcome: 'blocked', finishedAt: at(hhmmss), reason: 'LastApplyFailed' }) as const;
      s.jobs.finished = [failedApply('11:50:00'), blocked('11:55:00'), blocked('11:58:00')];
    }),
    decision: apply('LastApplyFailed', { approvedInputsHash: 'h1' }),
  },
  {
    name: 'backoff: a blocked Job does not end the streak of the failure before it',
    doc: 'A blocked Job counts toward neither the retry backoff nor the remediation failure cap',
    snapshot: cluster((s) => {
      newestApplyFailed(s, '11:59:20');
      s.blockedApply = { hash: 'h1', reason: 'LastApplyFailed' };
      s.annotations.approveDestructivePlan = 'h1';
      s.jobs.finished = [
        failedApply('11:59:20'),
        { op: 'apply', outcome: 'blocked', finishedAt: at('11:59:40'), reason: 'LastApplyFailed' },
      ];
    }),
    decision: waitFor('BackingOff', 20, { op: 'apply', reason: 'LastApplyFailed' }),
  },
  {
    name: 'backoff: a destroy fails and retries with backoff',
    doc: 'Destroy failed | False/DestroyFailed | Retry with backoff, forever',
    snapshot: cluster((s) => {
      s.object.deleting = true;
      s.jobs.finished = [{ op: 'destroy', outcome: 'failed', finishedAt: at('11:59:30'), reason: 'Deleting' }];
    }),
    decision: waitFor('BackingOff', 30, { op: 'destroy', reason: 'Deleting' }),
  },
  {
    name: 'backoff: a destroy the deadline killed counts as a failure',
    doc: 'A destroy that the deadline killed counts as a failure even though the runner reports it interrupted',
    snapshot: cluster((s) => {
      s.object.deleting = true;
      s.jobs.finished = [
        { op: 'destroy', outcome: 'deadlineExceeded', finishedAt: at('11:40:00'), reason: 'Deleting' },
        { op: 'destroy', outcome: 'deadlineExceeded', finishedAt: at('11:50:00'), reason: 'Deleting' },
        { op: 'destroy', outcome: 'deadlineExceeded', finishedAt: at('11:59:00'), reason: 'Deleting' },
      ];
    }),
    decision: waitFor('BackingOff', 540, { op: 'destroy', reason: 'Deleting' }),
  },
  {
    name: 'backoff: a destroy stopped from outside retries at once',
    doc: 'Stopped from outside (drain, eviction, Job delete) | JobInterrupted event | Retry at once, no backoff',
    snapshot: cluster((s) => {
      s.object.deleting = true;
      s.jobs.finished = [
        { op: 'destroy', outcome: 'failed', finishedAt: at('11:30:00'), reason: 'Deleting' },
        { op: 'destroy', outcome: 'interrupted', finishedAt: at('11:59:50'), reason: 'Deleting' },
      ];
    }),
    decision: pinnedOp('destroy', 'Deleting', 'durable'),
  },
  {
    name: 'backoff: a success ends the streak; a scheduled refresh backs off too',
    doc: 'Backoff replaces any ActionJob of an op that failed recently with a wait',
    snapshot: cluster((s) => {
      s.refresh = { lastRunAt: at('11:20:00'), healthPendingReadings: 0, healthCheckIntervalSeconds: 600 }; // due at 11:30:47
      s.jobs.finished = [
        { op: 'refresh', outcome: 'failed', finishedAt: at('11:10:00'), reason: 'HealthCheckDue' },
        { op: 'refresh', outcome: 'succeeded', finishedAt: at('11:20:00'), reason: 'HealthCheckDue' },
        { op: 'refresh', outcome: 'failed', finishedAt: at('11:59:30'), reason: 'HealthCheckDue' },
      ];
    }),
    decision: waitFor('BackingOff', 30, { op: 'refresh', reason: 'HealthCheckDue' }),
  },
  {
    name: 'backoff: failures of another op do not hold this one back',
    doc: 'Backoff replaces any ActionJob of an op that failed recently',
    snapshot: cluster((s) => {
      s.inputs.currentHash = 'h2';
      s.jobs.finished = [{ op: 'drift', outcome: 'failed', finishedAt: at('11:59:30'), reason: 'DriftDue' }];
    }),
    decision: apply('InputsChanged'),
  },
];

export const SCHEDULE_CASES: DecideCase[] = [
  {
    name: 'schedule 1: a pool refreshes after an apply whose reading is pending',
    doc: 'A successful apply not yet followed by a refresh, for kinds that ask for one (machine, pool)',
    snapshot: pool((s) => {
      s.applies.newest = { outcome: 'succeeded', finishedAt: at('11:55:00'), outputReading: 'pending' };
      s.applies.lastSucceededAt = at('11:55:00');
    }),
    decision: pinnedOp('refresh', 'RefreshAfterApply', 'current'),
  },
  {
    name: 'schedule 1: a machine refreshes after an apply, against its durable inputs',
    doc: 'A drift or refresh Job runs against … the durable ones for an immutable kind',
    snapshot: machine((s) => {
      s.applies.newest = { outcome: 'succeeded', finishedAt: at('11:55:00'), outputReading: 'unknown' };
      s.applies.lastSucceededAt = at('11:55:00');
    }),
    decision: pinnedOp('refresh', 'RefreshAfterApply', 'durable'),
  },
  {
    name: 'schedule 1: skipped when the apply’s own output reading is definite',
    doc: 'Rule 1 is skipped when the apply’s own output reading is definite (neither pending nor unknown)',
    snapshot: machine((s) => {
      s.applies.newest = { outcome: 'succeeded', finishedAt: at('11:55:00'), outputReading: 'definite' };
      s.applies.lastSucceededAt = at('11:55:00');
    }),
    decision: upToDate('machine'),
  },
  {
    name: 'schedule 1: skipped once a refresh followed the apply',
    doc: 'A successful apply not yet followed by a refresh',
    snapshot: machine((s) => {
      s.applies.newest = { outcome: 'succeeded', finishedAt: at('11:55:00'), outputReading: 'pending' };
      s.applies.lastSucceededAt = at('11:55:00');
      s.refresh.lastRunAt = at('11:56:00');
    }),
    decision: upToDate('machine'),
  },
  {
    name: 'schedule 1: a successful apply a failed drift remediation followed is still refreshed',
    doc: 'A successful apply not yet followed by a refresh, for kinds that ask for one (machine, pool)',
    snapshot: machine((s) => {
      s.drift = {
        ...s.drift,
        action: 'Remediate',
        remediationFailedLimit: 1,
        lastCheck: { at: at('11:20:00'), found: true },
      };
      s.applies = {
        newest: { outcome: 'failed', finishedAt: at('11:30:00'), outputReading: 'unknown' },
        lastSucceededAt: at('11:00:00'), // its reading was pending: no refresh stood in for it
      };
      s.jobs.finished = [failedApply('11:30:00', 'DriftRemediation')];
    }),
    decision: pinnedOp('refresh', 'RefreshAfterApply', 'durable'),
  },
  {
    name: 'schedule 1: a refresh between the successful apply and the failed one is enough',
    doc: 'A successful apply not yet followed by a refresh',
    snapshot: machine((s) => {
      s.drift = {
        ...s.drift,
        action: 'Remediate',
        remediationFailedLimit: 1,
        lastCheck: { at: at('11:20:00'), found: true },
      };
      s.applies = {
        newest: { outcome: 'failed', finishedAt: at('11:30:00'), outputReading: 'unknown' },
        lastSucceededAt: at('11:00:00'),
      };
      s.refresh.lastRunAt = at('11:10:00');
      s.jobs.finished = [failedApply('11:30:00', 'DriftRemediation')];
    }),
    decision: waitFor('UpToDate', 1487), // drift due 11:20 + 3600 s + 287 s jitter
  },
  {
    name: 'schedule 1: a cluster does not ask for a refresh after apply',
    doc: 'for kinds that ask for one (machine, pool)',
    snapshot: cluster((s) => {
      s.applies.newest = { outcome: 'succeeded', finishedAt: at('11:00:00'), outputReading: 'unknown' };
    }),
    decision: upToDate('cluster'),
  },
  {
    name: 'schedule 2: a converging pool refreshes every 30 s',
    doc: 'A pool’s membership is converging | refresh every 30 s, fixed | MembershipConverging',
    snapshot: pool((s) => {
      s.refresh.lastRunAt = at('11:59:20');
      s.refresh.membership = { converging: true, intervalSeconds: 1800 };
    }),
    decision: pinnedOp('refresh', 'MembershipConverging', 'current'),
  },
  {
    name: 'schedule 2: a converging pool refreshed 15 s ago requeues in 15 s',
    doc: 'refresh every 30 s, fixed',
    snapshot: pool((s) => {
      s.refresh.lastRunAt = at('11:59:45');
      s.refresh.membership = { converging: true, intervalSeconds: 1800 };
    }),
    decision: waitFor('UpToDate', 15),
  },
  {
    name: 'schedule 2 and 3 are exclusive: converging replaces the pending delay',
    doc: 'Rules 3 and 2 are exclusive: while converging, the fixed 30 seconds replaces the doubling pending delay',
    snapshot: pool((s) => {
      s.refresh.lastRunAt = at('11:59:20');
      s.refresh.healthPendingReadings = 4; // would wait 240 s
      s.refresh.membership = { converging: true, intervalSeconds: 1800 };
    }),
    decision: pinnedOp('refresh', 'MembershipConverging', 'current'),
  },
  {
    name: 'schedule 3: health pending refreshes 30 s after the first pending reading',
    doc: 'Health reads pending | refresh after 30 s',
    snapshot: cluster((s) => {
      s.applies.newest = { outcome: 'succeeded', finishedAt: at('11:59:00'), outputReading: 'pending' };
      s.applies.lastSucceededAt = at('11:59:00');
      s.refresh.healthPendingReadings = 1;
    }),
    decision: pinnedOp('refresh', 'HealthPending', 'current'),
  },
  {
    name: 'schedule 3: the pending delay doubles (third reading: 120 s)',
    doc: 'refresh after 30 s, doubling to 5 min',
    snapshot: cluster((s) => {
      s.refresh = { lastRunAt: at('11:59:00'), healthPendingReadings: 3 };
    }),
    decision: waitFor('UpToDate', 60),
  },
  {
    name: 'schedule 3: the pending delay stops at 5 min',
    doc: 'doubling to 5 min',
    snapshot: cluster((s) => {
      s.refresh = { lastRunAt: at('11:56:00'), healthPendingReadings: 10 };
    }),
    decision: waitFor('UpToDate', 60),
  },
  {
    name: 'schedule 4: the membership interval refreshes a pool',
    doc: 'The membership interval (pools) | refresh | MembershipRefreshDue',
    snapshot: pool((s) => {
      s.refresh.lastRunAt = at('11:29:00'); // 1800 + 13 s later: 11:59:13
    }),
    decision: pinnedOp('refresh', 'MembershipRefreshDue', 'current'),
  },
  {
    name: 'schedule 4: the interval is stretched by the UID’s jitter',
    doc: 'Each interval has a deterministic jitter of up to a tenth of the interval, derived from the object’s UID',
    snapshot: pool((s) => {
      s.refresh.lastRunAt = at('11:29:50'); // due at 12:00:03
    }),
    decision: waitFor('UpToDate', 3),
  },
  {
    name: 'schedule 5: the health-check interval refreshes when remediation is on',
    doc: 'The health-check interval (when remediation is on) | refresh | HealthCheckDue',
    snapshot: cluster((s) => {
      s.refresh.healthCheckIntervalSeconds = 600; // due at 11:10:47
    }),
    decision: pinnedOp('refresh', 'HealthCheckDue', 'current'),
  },
  {
    name: 'schedule 5: a refresh without a pinned digest runs the spec image and emits DigestUnknown',
    doc: 'without one it falls back to the spec reference and emits DigestUnknown',
    snapshot: cluster((s) => {
      s.image = {};
      s.refresh.healthCheckIntervalSeconds = 600;
    }),
    decision: {
      kind: 'op',
      op: 'refresh',
      reason: 'HealthCheckDue',
      inputs: 'current',
      image: 'spec',
      events: ['DigestUnknown'],
    },
  },
  {
    name: 'schedule 6: the drift interval checks drift',
    doc: 'The drift interval | drift | DriftDue',
    snapshot: cluster((s) => {
      s.drift.lastCheck = { at: at('10:30:00'), found: false }; // due at 11:34:45
    }),
    decision: pinnedOp('drift', 'DriftDue', 'current'),
  },
  {
    name: 'schedule 6: a machine checks drift against its durable inputs',
    doc: 'A drift or refresh Job runs against the current inputs for a mutable kind, and the durable ones for an immutable kind',
    snapshot: machine((s) => {
      s.drift.lastCheck = { at: at('10:30:00'), found: false };
    }),
    decision: pinnedOp('drift', 'DriftDue', 'durable'),
  },
  {
    name: 'schedule bases: with no run of its own, a check counts from the last successful apply',
    doc: 'The base of a periodic check is its own last run, else the last successful apply',
    snapshot: cluster((s) => {
      s.drift.lastCheck = undefined; // 11:00 + 3600 + 285 s = 12:04:45
    }),
    decision: waitFor('UpToDate', 285),
  },
  {
    name: 'schedule bases: after a clusterctl move there is no history, so the creation time is the base',
    doc: 'After a clusterctl move there is no history, so the creation time is the base',
    snapshot: cluster((s) => {
      s.object.creationTimestamp = at('11:30:00'); // 11:30 + 3600 + 285 s = 12:34:45
      s.applies = {};
      s.drift.lastCheck = undefined;
    }),
    decision: waitFor('UpToDate', 2085),
  },
  {
    name: 'schedule 7: requeue at the soonest deadline',
    doc: 'Otherwise | Requeue at the soonest deadline | UpToDate',
    snapshot: cluster((s) => {
      s.refresh = { lastRunAt: at('11:55:00'), healthPendingReadings: 0, healthCheckIntervalSeconds: 600 }; // 12:05:47
    }),
    decision: waitFor('UpToDate', 347),
  },
  {
    name: 'schedule 7: a definite apply reading is the base of the refresh checks',
    doc: 'status.lastRefresh advances to the apply’s finish',
    snapshot: cluster((s) => {
      s.applies.newest = { outcome: 'succeeded', finishedAt: at('11:55:00'), outputReading: 'definite' };
      s.applies.lastSucceededAt = at('11:55:00');
      s.refresh = { lastRunAt: at('11:00:00'), healthPendingReadings: 0, healthCheckIntervalSeconds: 600 }; // 12:05:47
    }),
    decision: waitFor('UpToDate', 347),
  },
];

/** A finished Job with the runner's reason and what the controller built it from (contract/controller-actions.json). */
const ranWith = (
  op: OpDecision['op'],
  outcome: 'failed' | 'interrupted' | 'deadlineExceeded' | 'succeeded',
  hhmmss: string,
  reason: string,
  runnerReason: string,
  built: { inputsHash?: string; generation?: number; controllerVersion?: string } = {},
) => ({ op, outcome, finishedAt: at(hhmmss), reason, runnerReason, ...built }) as const;

/** Manual, with no plan of the current inputs recorded: the apply reason becomes a plan. */
const manualWithoutPlan = (s: Snapshot) => {
  s.object.applyPolicy = 'Manual';
  s.inputs.currentHash = 'h2';
};

export const HOLD_CASES: DecideCase[] = [
  {
    name: 'retry: an apply whose image breaks the contract is retried after its backoff, never held',
    doc: 'Mutable kind, and the newest apply failed → apply; Backoff replaces any ActionJob of an op that failed recently with a wait',
    snapshot: cluster((s) => {
      s.inputs.currentHash = 'h2';
      newestApplyFailed(s, '11:30:00');
      s.jobs.finished = [ranWith('apply', 'failed', '11:30:00', 'InputsChanged', 'ImageInvalid', { inputsHash: 'h2' })];
    }),
    decision: apply('InputsChanged'),
  },
  {
    name: 'retry: a failed apply of a machine (ImageInvalid, state without an inputs hash) backs off like any failure',
    doc: 'It retries a failed apply through rules 5 and 6 instead … and the apply runs again after its backoff',
    snapshot: machine((s) => {
      s.state = { status: 'present', inputsHash: null };
      s.jobs.finished = [
        ranWith('apply', 'failed', '11:59:30', 'StateWithoutInputsHash', 'ImageInvalid', { inputsHash: 'h1' }),
      ];
    }),
    decision: waitFor('BackingOff', 30, { op: 'apply', reason: 'StateWithoutInputsHash' }),
  },
  {
    name: 'retry: a denied apply is retried as LastApplyFailed after its backoff',
    doc: 'Mutable kind, and the newest apply failed | apply | LastApplyFailed',
    snapshot: cluster((s) => {
      newestApplyFailed(s, '11:30:00');
      s.jobs.finished = [
        ranWith('apply', 'failed', '11:30:00', 'LastApplyFailed', 'PolicyDenied', { inputsHash: 'h1' }),
      ];
    }),
    decision: apply('LastApplyFailed'),
  },
  {
    name: 'retry: a denied drift remediation is retried (rule 8 comes first) with the backoff of every op',
    doc: 'one minute after the first failure, doubling to a ten-minute cap',
    snapshot: cluster((s) => {
      s.drift = {
        intervalSeconds: 3600,
        action: 'Remediate',
        remediationFailedLimit: 3,
        lastCheck: { at: at('10:00:00'), found: true },
      };
      s.jobs.finished = [
        ranWith('apply', 'failed', '11:59:00', 'DriftRemediation', 'PolicyDenied', { inputsHash: 'h1' }),
        ranWith('apply', 'failed', '11:55:00', 'DriftRemediation', 'PolicyDenied', { inputsHash: 'h1' }),
      ];
      s.applies.newest = { outcome: 'failed', finishedAt: at('11:59:00'), outputReading: 'unknown' };
    }),
    decision: waitFor('BackingOff', 60, { op: 'apply', reason: 'LastApplyFailed' }),
  },
  {
    name: 'hold: a plan whose inputs terraform refuses is not re-run while the rendered inputs hash is the same',
    doc: 'InputsInvalid, exit 2: hold the op until what it is built from changes (a retry would fail the same way)',
    snapshot: cluster((s) => {
      manualWithoutPlan(s);
      newestApplyFailed(s, '11:00:00');
      s.jobs.finished = [ranWith('plan', 'failed', '11:30:00', 'InputsChanged', 'InputsInvalid', { inputsHash: 'h2' })];
    }),
    decision: waitFor('HeldForChange', 600, { op: 'plan', reason: 'InputsChanged' }),
  },
  {
    name: 'hold: a plan refused for its settings is held on the hash the controller rendered, whatever the result carries',
    doc: 'SettingsInvalid, exit 2: the hold is keyed on what the controller rendered (the runner read no inputs)',
    snapshot: cluster((s) => {
      manualWithoutPlan(s);
      s.jobs.finished = [
        ranWith('plan', 'failed', '11:30:00', 'InputsChanged', 'SettingsInvalid', { inputsHash: 'h2' }),
      ];
    }),
    decision: waitFor('HeldForChange', 600, { op: 'plan', reason: 'InputsChanged' }),
  },
  {
    name: 'hold: new inputs (or a new image reference, which the hash covers) end the hold',
    doc: 'hold the op until the spec, the image reference, the inputs or the controller change',
    snapshot: cluster((s) => {
      manualWithoutPlan(s);
      s.inputs.currentHash = 'h3';
      s.jobs.finished = [ranWith('plan', 'failed', '11:30:00', 'InputsChanged', 'InputsInvalid', { inputsHash: 'h2' })];
    }),
    decision: plan('InputsChanged'),
  },
  {
    name: 'hold: a spec edit (a new generation) ends the hold',
    doc: 'hold the op until the spec, the image reference, the inputs or the controller change',
    snapshot: cluster((s) => {
      manualWithoutPlan(s);
      s.object.generation = 4;
      s.jobs.finished = [
        ranWith('plan', 'failed', '11:30:00', 'InputsChanged', 'SettingsInvalid', { inputsHash: 'h2', generation: 3 }),
      ];
    }),
    decision: plan('InputsChanged'),
  },
  {
    name: 'hold: a controller upgrade ends the hold',
    doc: 'hold the op until the spec, the image reference, the inputs or the controller change',
    snapshot: cluster((s) => {
      manualWithoutPlan(s);
      s.controllerVersion = 'v1.5.0';
      s.jobs.finished = [
        ranWith('plan', 'failed', '11:30:00', 'InputsChanged', 'SettingsInvalid', {
          inputsHash: 'h2',
          controllerVersion: 'v1.4.2',
        }),
      ];
    }),
    decision: plan('InputsChanged'),
  },
  {
    name: 'retry: a plan whose image breaks the contract retries with backoff: a tag re-pushed under the same reference is no change the controller sees',
    doc: 'ImageInvalid, exit 4, of a plan: retry with backoff',
    snapshot: cluster((s) => {
      manualWithoutPlan(s);
      s.jobs.finished = [ranWith('plan', 'failed', '11:59:30', 'InputsChanged', 'ImageInvalid', { inputsHash: 'h2' })];
    }),
    decision: waitFor('BackingOff', 30, { op: 'plan', reason: 'InputsChanged' }),
  },
  {
    name: "hold: a cluster's denied drift check is not re-run by the schedule until an apply succeeds after it",
    doc: 'PolicyDenied, exit 8, of a drift: the module, the inputs or the policy must change, which only an apply brings',
    snapshot: cluster((s) => {
      s.drift.lastCheck = { at: at('10:00:00'), found: false }; // drift due at 11:04:45
      s.jobs.finished = [ranWith('drift', 'failed', '11:10:00', 'DriftDue', 'PolicyDenied')];
    }),
    decision: waitFor('HeldForChange', 600, { op: 'drift', reason: 'DriftDue' }),
  },
  {
    name: 'hold: a successful apply after the denied drift check ends the hold',
    doc: 'hold the op until what it is built from changes (refresh and drift: what the last successful apply left)',
    snapshot: cluster((s) => {
      s.drift.lastCheck = { at: at('10:00:00'), found: false };
      s.applies.newest = { outcome: 'succeeded', finishedAt: at('11:20:00'), outputReading: 'definite' };
      s.applies.lastSucceededAt = at('11:20:00');
      s.jobs.finished = [ranWith('drift', 'failed', '11:10:00', 'DriftDue', 'PolicyDenied')];
    }),
    decision: pinnedOp('drift', 'DriftDue', 'current'),
  },
  {
    name: "retry: a machine's refused refresh is never held (nothing it is built from changes): it retries with backoff",
    doc: "never hold a machine's state checks without a way out",
    snapshot: machine((s) => {
      s.applies.newest = { outcome: 'succeeded', finishedAt: at('11:00:00'), outputReading: 'pending' };
      s.jobs.finished = [ranWith('refresh', 'failed', '11:59:30', 'RefreshAfterApply', 'RefreshRefused')];
    }),
    decision: waitFor('BackingOff', 30, { op: 'refresh', reason: 'RefreshAfterApply' }),
  },
  {
    name: 'hold: a failure a retry may pass is not held, it backs off',
    doc: 'InitFailed, exit 1: retry with backoff',
    snapshot: cluster((s) => {
      newestApplyFailed(s, '11:59:30');
      s.jobs.finished = [ranWith('apply', 'failed', '11:59:30', 'LastApplyFailed', 'InitFailed', { inputsHash: 'h1' })];
    }),
    decision: waitFor('BackingOff', 30, { op: 'apply', reason: 'LastApplyFailed' }),
  },
  {
    name: 'hold: a destroy is never held, it retries with backoff forever',
    doc: 'Image breaks the contract | False/ImageInvalid | Retry with backoff',
    snapshot: cluster((s) => {
      s.object.deleting = true;
      s.jobs.finished = [ranWith('destroy', 'failed', '11:50:00', 'Deleting', 'ImageInvalid')];
    }),
    decision: pinnedOp('destroy', 'Deleting', 'durable'),
  },
  {
    name: 'held deletion: destroys that found no state while the controller reads one start no new destroy',
    doc: 'contract.md: while its reading says present, the Job read another place than the controller does (the backend settings the Job got), and the deletion is held for a person',
    snapshot: machine((s) => {
      s.object.deleting = true;
      s.inputs.currentHash = null;
      s.jobs.finished = [
        ranWith('destroy', 'succeeded', '11:59:50', 'Deleting', 'NoStateFound'),
        ranWith('destroy', 'succeeded', '11:59:00', 'Deleting', 'NoStateFound'),
      ];
    }),
    decision: waitFor('DestroyFoundNoState', 60, { op: 'destroy', reason: 'Deleting' }),
  },
  {
    name: 'held deletion: an hour later it is held still: NoStateFound is no failure, so no backoff ends it',
    doc: 'contract.md: the controller never takes NoStateFound for a teardown',
    snapshot: cluster((s) => {
      s.object.deleting = true;
      s.object.generation = 4;
      s.inputs.currentHash = null;
      s.jobs.finished = [ranWith('destroy', 'succeeded', '11:00:00', 'Deleting', 'NoStateFound', { generation: 4 })];
    }),
    decision: waitFor('DestroyFoundNoState', 60, { op: 'destroy', reason: 'Deleting' }),
  },
  {
    name: 'held deletion: the controller reading no state drops the finalizer, whatever the Job found',
    doc: 'contract.md: it drops the finalizer only on its own reading of the state (DecideOp rule 3, absent)',
    snapshot: machine((s) => {
      s.object.deleting = true;
      s.inputs.currentHash = null;
      s.state = { status: 'absent' };
      s.jobs.finished = [ranWith('destroy', 'succeeded', '11:59:50', 'Deleting', 'NoStateFound')];
    }),
    decision: { kind: 'dropFinalizer', reason: 'DeletingWithoutState' },
  },
  {
    name: 'held deletion: a spec edit after the Job (the backend settings fixed) starts the destroy again',
    doc: 'decide-op.md: a deletion held on NoStateFound is lifted by a spec edit, a controller upgrade or the Job deleted',
    snapshot: cluster((s) => {
      s.object.deleting = true;
      s.object.generation = 5;
      s.inputs.currentHash = null;
      s.jobs.finished = [ranWith('destroy', 'succeeded', '11:59:50', 'Deleting', 'NoStateFound', { generation: 4 })];
    }),
    decision: pinnedOp('destroy', 'Deleting', 'durable'),
  },
  {
    name: 'held deletion: only the newest destroy counts: a failed destroy after it retries with backoff',
    doc: 'Destroy failed | False/DestroyFailed | Retry with backoff, forever',
    snapshot: cluster((s) => {
      s.object.deleting = true;
      s.inputs.currentHash = null;
      s.jobs.finished = [
        ranWith('destroy', 'succeeded', '11:50:00', 'Deleting', 'NoStateFound'),
        ranWith('destroy', 'failed', '11:59:30', 'Deleting', 'DestroyFailed'),
      ];
    }),
    decision: waitFor('BackingOff', 30, { op: 'destroy', reason: 'Deleting' }),
  },
  {
    name: 'hold: a stale approved plan is no hold: DecideOp plans again',
    doc: 'PlanStale, exit 5: a new plan and approval are needed',
    snapshot: cluster((s) => {
      s.object.applyPolicy = 'Manual';
      s.inputs.currentHash = 'h2';
      s.annotations.recordedPlan = { inputsHash: 'h2', planHash: 'p1', hasChanges: true, recordedAt: at('11:20:00') };
      s.annotations.approvedPlanHash = 'p1';
      newestApplyFailed(s, '11:30:00');
      s.jobs.finished = [ranWith('apply', 'failed', '11:30:00', 'InputsChanged', 'PlanStale', { inputsHash: 'h2' })];
    }),
    decision: plan('InputsChanged'),
  },
  {
    name: 'hold: a Job stopped from outside (exit 143, with or without DisruptionTarget) retries at once',
    doc: 'Stopped from outside (drain, eviction, Job delete) | Retry at once, no backoff',
    snapshot: cluster((s) => {
      s.applies.newest = { outcome: 'interrupted', finishedAt: at('11:59:50'), outputReading: 'unknown' };
      s.jobs.finished = [
        ranWith('apply', 'interrupted', '11:59:50', 'LastApplyFailed', 'Interrupted', { inputsHash: 'h1' }),
      ];
    }),
    decision: apply('LastApplyFailed'),
  },
];

export const DECIDE_CASES: DecideCase[] = [
  ...BASELINE_CASES,
  ...ORDER_CASES,
  ...IMMUTABLE_CASES,
  ...MANUAL_CASES,
  ...BLOCKED_CASES,
  ...BACKOFF_CASES,
  ...HOLD_CASES,
  ...SCHEDULE_CASES,
];
