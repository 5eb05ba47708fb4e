// Whether a local apply runs guarded (src/local/apply-guard.ts): pure, no processes. The pool's
// rules as the controller's docs state them ("Machine pools", "Partly applied").
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Result } from '../../src/schemas/result.ts';
import type { OpDecision } from '../../src/controller-model/decision.ts';
import {
  applyGuard,
  partlyAppliedBy,
  staleApproval,
  type ApprovalFacts,
  type GuardFacts,
} from '../../src/local/apply-guard.ts';
import type { Run } from '../../src/local/history.ts';

const E0 = '{"endpoint":"e0"}';
const E1 = '{"endpoint":"e1"}';

const pool = (facts: Partial<GuardFacts>): GuardFacts => ({
  kind: 'pool',
  currentExports: E0,
  applied: { status: 'recorded', exports: E0 },
  partlyAppliedBy: undefined,
  ...facts,
});

let sequence = 0;
/** An apply run: its guard, its result (undefined: it wrote none) and its exit code (undefined: it vanished). */
function apply(
  guard: 'on' | 'off' | undefined,
  result: Pick<Result, 'outcome' | 'reason' | 'mayHaveChanged'> | undefined,
  exitCode?: number,
  op: OpDecision['op'] = 'apply',
): Run {
  sequence++;
  const at = `2025-06-01T12:${String(sequence).padStart(2, '0')}:00.000Z`;
  return {
    dir: `/runs/${sequence}`,
    record: {
      id: `${String(sequence).padStart(4, '0')}-${op}`,
      decision: { kind: 'op', op, reason: 'InputsChanged', inputs: 'current', image: 'spec' },
      image: 'demo:1',
      ...(guard === undefined ? {} : { guard }),
      startedAt: at,
      ...(exitCode === undefined ? {} : { exitCode }),
    },
    result: result && ({ finishedAt: at, applied: result.mayHaveChanged, ...result } as Result),
  };
}

const succeeded = () => apply('off', { outcome: 'succeeded', reason: 'ApplySucceeded', mayHaveChanged: true }, 0);
const failedPartWay = (guard: 'on' | 'off' | undefined = 'on') =>
  apply(guard, { outcome: 'failed', reason: 'ApplyFailed', mayHaveChanged: true }, 1);

describe('local: the apply guard', () => {
  it("guards every cluster apply and no machine's, whatever the history says", () => {
    for (const facts of [pool({ kind: 'cluster', applied: { status: 'none' } }), pool({ kind: 'cluster' })])
      assert.deepEqual(applyGuard(facts), { on: true, why: 'cluster' });
    assert.deepEqual(applyGuard(pool({ kind: 'machine', partlyAppliedBy: '0003-apply' })), {
      on: false,
      why: 'machine',
    });
  });

  it("a pool: the first apply is not guarded; later ones only when the exports differ from the last successful apply's", () => {
    assert.deepEqual(applyGuard(pool({ applied: { status: 'none' }, currentExports: E1 })), {
      on: false,
      why: 'firstApply',
    });
    assert.deepEqual(applyGuard(pool({})), { on: false, why: 'exportsUnchanged' });
    assert.deepEqual(applyGuard(pool({ currentExports: E1 })), { on: true, why: 'exportsChanged' });
    assert.deepEqual(applyGuard(pool({ currentExports: undefined })), { on: true, why: 'exportsChanged' });
    assert.deepEqual(applyGuard(pool({ applied: { status: 'recorded', exports: undefined }, currentExports: E0 })), {
      on: true,
      why: 'exportsChanged',
    });
    assert.deepEqual(
      applyGuard(pool({ applied: { status: 'recorded', exports: undefined }, currentExports: undefined })),
      { on: false, why: 'exportsUnchanged' },
    );
  });

  it('a pool whose last successful apply left no record of its exports is guarded, whatever it renders', () => {
    assert.deepEqual(applyGuard(pool({ applied: { status: 'unknown' } })), { on: true, why: 'appliedExportsUnknown' });
  });

  it('a partly applied pool is guarded even when its exports are back to the applied ones', () => {
    assert.deepEqual(applyGuard(pool({ partlyAppliedBy: '0003-apply' })), {
      on: true,
      why: 'partlyApplied',
      run: '0003-apply',
    });
    assert.deepEqual(applyGuard(pool({ partlyAppliedBy: '0003-apply', applied: { status: 'none' } })), {
      on: true,
      why: 'partlyApplied',
      run: '0003-apply',
    });
  });
});

describe('local: partly applied', () => {
  it('a guarded apply that failed after its apply started leaves the object partly applied until an apply succeeds', () => {
    const failed = failedPartWay();
    assert.equal(partlyAppliedBy([succeeded(), failed]), failed.record.id);
    const blocked = apply('on', { outcome: 'blocked', reason: 'DestructivePlanBlocked', mayHaveChanged: false }, 3);
    assert.equal(partlyAppliedBy([succeeded(), failed, blocked]), failed.record.id, 'a block clears nothing');
    const another = failedPartWay();
    assert.equal(partlyAppliedBy([succeeded(), failed, another]), failed.record.id, 'the first one is named');
    assert.equal(partlyAppliedBy([succeeded(), failed, blocked, succeeded()]), undefined);
    assert.equal(partlyAppliedBy([failed, succeeded()]), undefined);
  });

  it('a run that vanished, or left no result, may have applied part of its change', () => {
    const vanished = apply('on', undefined);
    assert.equal(partlyAppliedBy([succeeded(), vanished]), vanished.record.id);
    const noResult = apply('on', undefined, 1);
    assert.equal(partlyAppliedBy([succeeded(), noResult]), noResult.record.id);
    const stopped = apply('on', { outcome: 'interrupted', reason: 'Interrupted', mayHaveChanged: true }, 143);
    assert.equal(partlyAppliedBy([succeeded(), stopped]), stopped.record.id);
  });

  it('a record without its guard (kept before the guard was) counts as guarded', () => {
    const old = failedPartWay(undefined);
    assert.equal(partlyAppliedBy([succeeded(), old]), old.record.id);
  });

  it('nothing is partly applied by an apply that ran unguarded, changed nothing, or was no apply', () => {
    assert.equal(partlyAppliedBy([succeeded(), failedPartWay('off')]), undefined);
    const refused = apply('on', { outcome: 'failed', reason: 'PlanFailed', mayHaveChanged: false }, 1);
    assert.equal(partlyAppliedBy([succeeded(), refused]), undefined);
    const drift = apply(undefined, { outcome: 'failed', reason: 'PlanFailed', mayHaveChanged: true }, 1, 'drift');
    assert.equal(partlyAppliedBy([succeeded(), drift]), undefined);
    assert.equal(partlyAppliedBy([]), undefined);
  });
});

describe("local: a pool's approval of a change of its exports", () => {
  const HASH_E1 = '1'.repeat(64);
  const HASH_NOW = '0'.repeat(64);
  const facts = (more: Partial<ApprovalFacts>): ApprovalFacts => ({
    annotation: HASH_E1,
    currentApprovalHash: HASH_NOW,
    currentExports: E0,
    applied: { status: 'recorded', exports: E0 },
    approvedChange: { exports: E1 },
    ...more,
  });

  it('is removed once the exports return to the applied ones (withdrawn) or move to another change (superseded)', () => {
    assert.equal(staleApproval(facts({})), 'withdrawn');
    assert.equal(staleApproval(facts({ currentExports: '{"endpoint":"e2"}' })), 'superseded');
    assert.equal(staleApproval(facts({ applied: { status: 'unknown' } })), 'superseded');
  });

  it('stays while it names the current hash, when no run rendered its hash, or when only other inputs moved', () => {
    assert.equal(staleApproval(facts({ currentApprovalHash: HASH_E1 })), undefined);
    assert.equal(staleApproval(facts({ approvedChange: undefined })), undefined);
    assert.equal(staleApproval(facts({ currentExports: E1 })), undefined);
    assert.equal(staleApproval(facts({ annotation: undefined })), undefined);
  });
});
