// The status a local object derives from its runs, and the snapshot DecideOp gets: pure, no processes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Result } from '../../src/schemas/result.ts';
import { decideOp } from '../../src/controller-model/decide-op.ts';
import type { OpDecision } from '../../src/controller-model/decision.ts';
import { deriveStatus, retainedJobs, runOutcome, type Run } from '../../src/local/history.ts';
import { LOCAL_OBJECT_API_VERSION, type LocalObject } from '../../src/local/object.ts';
import { buildSnapshot } from '../../src/local/snapshot.ts';

const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);

let sequence = 0;
function run(
  decision: Pick<OpDecision, 'op' | 'reason'>,
  result: Partial<Result> | undefined,
  exitCode?: number,
  rendered?: string,
): Run {
  sequence++;
  const at = `2025-06-01T12:${String(sequence).padStart(2, '0')}:00.000Z`;
  return {
    dir: `/runs/${sequence}`,
    record: {
      id: `${String(sequence).padStart(4, '0')}-${decision.op}`,
      decision: { kind: 'op', inputs: 'current', image: 'spec', ...decision },
      image: 'demo:1',
      ...(rendered === undefined ? {} : { inputsHash: rendered }),
      startedAt: at,
      ...(exitCode === undefined ? {} : { exitCode }),
    },
    result: result && ({ outputs: {}, finishedAt: at, ...result } as Result),
  };
}

const object: LocalObject = {
  apiVersion: LOCAL_OBJECT_API_VERSION,
  metadata: { name: 'demo', uid: 'uid-1', creationTimestamp: '2025-06-01T12:00:00.000Z', annotations: {} },
  spec: {
    kind: 'cluster',
    image: 'demo:1',
    module: '/module',
    drift: { intervalSeconds: 3600, action: 'Remediate', remediationFailedLimit: 3 },
  },
};

describe('local: history and status', () => {
  it('a run without a result is interrupted when the runner vanished, failed when it exited', () => {
    assert.equal(runOutcome(run({ op: 'apply', reason: 'NoState' }, undefined)), 'interrupted');
    assert.equal(runOutcome(run({ op: 'apply', reason: 'NoState' }, undefined, 1)), 'failed');
    assert.equal(
      runOutcome(run({ op: 'apply', reason: 'NoState' }, { outcome: 'interrupted', reason: 'JobDeadlineExceeded' })),
      'deadlineExceeded',
    );
    assert.equal(
      runOutcome(run({ op: 'apply', reason: 'NoState' }, { outcome: 'noChanges', reason: 'NoChanges' })),
      'succeeded',
    );
  });

  it('blockedApply names the hash of the newest apply attempt only while it is blocked', () => {
    const applied = run(
      { op: 'apply', reason: 'NoState' },
      { outcome: 'succeeded', reason: 'ApplySucceeded', approvalHash: HASH_A },
    );
    const blocked = run(
      { op: 'apply', reason: 'InputsChanged' },
      { outcome: 'blocked', reason: 'DestructivePlanBlocked', approvalHash: HASH_B },
    );
    const status = deriveStatus([applied, blocked]);
    assert.deepEqual(status.blockedApply, { run: blocked.record.id, hash: HASH_B, reason: 'InputsChanged' });
    assert.equal(status.newestApply?.run, applied.record.id, 'a block does not mark the last apply as failed');
    const approved = run(
      { op: 'apply', reason: 'InputsChanged' },
      { outcome: 'succeeded', reason: 'ApplySucceeded', approvalHash: HASH_B },
    );
    assert.equal(deriveStatus([applied, blocked, approved]).blockedApply, undefined);
  });

  it('keeps only the Jobs a controller retains: the newest three failures and three others', () => {
    const history = [
      ...Array.from({ length: 5 }, () =>
        run({ op: 'drift', reason: 'DriftDue' }, { outcome: 'failed', reason: 'PlanFailed' }),
      ),
      ...Array.from({ length: 5 }, () =>
        run({ op: 'drift', reason: 'DriftDue' }, { outcome: 'succeeded', reason: 'NoDrift' }),
      ),
    ];
    const jobs = retainedJobs(history);
    assert.equal(jobs.filter((job) => job.outcome === 'failed').length, 3);
    assert.equal(jobs.filter((job) => job.outcome === 'succeeded').length, 3);
  });

  it('a failure of other inputs earns no backoff: fixed inputs start a new attempt at once', () => {
    // A failure a retry may pass (exit 1) backs off; one of the inputs (InputsInvalid) is held until they change.
    const failed = run(
      { op: 'apply', reason: 'NoState' },
      { outcome: 'failed', reason: 'ApplyFailed', inputsHash: HASH_A },
      1,
      HASH_A,
    );
    const now = new Date(Date.parse(failed.result!.finishedAt) + 10_000);
    const world = (inputsHash: string) => ({
      now,
      jobActive: false,
      state: { status: 'absent' as const },
      hashes: { inputsHash, approvalHash: inputsHash },
    });
    assert.deepEqual(decideOp(buildSnapshot(object, [failed], world(HASH_A))).kind, 'wait', 'the same inputs back off');
    assert.equal((decideOp(buildSnapshot(object, [failed], world(HASH_A))) as { reason: string }).reason, 'BackingOff');
    assert.deepEqual(decideOp(buildSnapshot(object, [failed], world(HASH_B))), {
      kind: 'op',
      op: 'apply',
      reason: 'NoState',
      inputs: 'current',
      image: 'spec',
    });
    assert.equal(retainedJobs([failed], HASH_B).length, 0);
    assert.equal(retainedJobs([failed], HASH_A).length, 1);
  });

  it("a retained Job carries the hash the controller rendered, never the result's: a run refused before it read its inputs has one too", () => {
    // SettingsInvalid: the runner read no inputs, so its result carries no inputsHash.
    const refused = run(
      { op: 'drift', reason: 'DriftDue' },
      { outcome: 'invalid', reason: 'SettingsInvalid' },
      2,
      HASH_B,
    );
    const otherResult = run(
      { op: 'apply', reason: 'InputsChanged' },
      { outcome: 'failed', reason: 'ApplyFailed', inputsHash: HASH_A },
      1,
      HASH_B,
    );
    assert.deepEqual(
      retainedJobs([refused, otherResult]).map((job) => job.inputsHash),
      [HASH_B, HASH_B],
    );
    assert.equal(
      retainedJobs([refused, otherResult], HASH_A).length,
      0,
      'failures of other rendered inputs are left out',
    );
  });

  it('the snapshot of a deleting object renders no inputs, and DecideOp destroys', () => {
    const applied = run(
      { op: 'apply', reason: 'NoState' },
      { outcome: 'succeeded', reason: 'ApplySucceeded', approvalHash: HASH_A },
    );
    const deleting = { ...object, metadata: { ...object.metadata, deletionTimestamp: '2025-06-01T13:00:00.000Z' } };
    const snapshot = buildSnapshot(deleting, [applied], {
      now: new Date('2025-06-01T13:00:00Z'),
      jobActive: false,
      state: { status: 'present', inputsHash: HASH_A },
      hashes: undefined,
    });
    assert.equal(snapshot.inputs.currentHash, null);
    assert.equal(snapshot.image.pinnedDigest, 'demo:1');
    assert.deepEqual(decideOp(snapshot), {
      kind: 'op',
      op: 'destroy',
      reason: 'Deleting',
      inputs: 'durable',
      image: 'pinned',
    });
  });

  it('drift found with action Remediate makes the next decision a remediation apply', () => {
    const applied = run(
      { op: 'apply', reason: 'NoState' },
      { outcome: 'succeeded', reason: 'ApplySucceeded', approvalHash: HASH_A },
    );
    const drift = run(
      { op: 'drift', reason: 'DriftDue' },
      {
        outcome: 'succeeded',
        reason: 'DriftFound',
        drift: {
          found: true,
          outputsOnly: false,
          resourceDrift: [],
          resourceDriftTotal: 0,
          inputsDiffer: [],
          inputsDifferTotal: 0,
          remediationDestructive: false,
        },
      },
    );
    const hashes = { inputsHash: HASH_A, approvalHash: HASH_A };
    const snapshot = buildSnapshot(object, [applied, drift], {
      now: new Date('2025-06-01T14:00:00Z'),
      jobActive: false,
      state: { status: 'present', inputsHash: HASH_A },
      hashes,
    });
    assert.deepEqual(snapshot.drift.lastCheck, { at: drift.result!.finishedAt, found: true });
    const decision = decideOp(snapshot);
    assert.equal(decision.kind, 'op');
    assert.equal(decision.reason, 'DriftRemediation');
  });
});

describe('local: what a blocked run prints', () => {
  it('names the destructive entries, the provider actions and what the runner cannot read', async () => {
    const { resultLines } = await import('../../src/local/print.ts');
    const { localPaths } = await import('../../src/local/object.ts');
    const { classifyPlan } = await import('../../src/plan/classify.ts');
    const plan = classifyPlan({
      format_version: '1.2',
      resource_changes: [{ address: 'terraform_data.a', change: { actions: ['delete'] } }],
      action_invocations: [{ address: 'action.x.stop', invoke_action_trigger: {} }],
      future: 1,
    });
    const lines = resultLines(
      run(
        { op: 'apply', reason: 'InputsChanged' },
        { outcome: 'blocked', reason: 'DestructivePlanBlocked', approvalHash: HASH_A, plan },
      ),
      localPaths('/tmp/obj'),
    );
    assert.ok(lines.includes('  destructive: terraform_data.a (delete)'), lines.join('\n'));
    assert.ok(lines.includes('  provider action: action.x.stop (action invoke)'), lines.join('\n'));
    assert.ok(
      lines.some((line) =>
        line.startsWith('  cannot be read: the plan has a top-level key this runner does not know, "future"'),
      ),
      lines.join('\n'),
    );
  });
});
