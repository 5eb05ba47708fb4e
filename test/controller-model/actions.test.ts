// What a finished Job means to the controller: the cases of action-cases.ts, the handling of every
// reason by every op that can end with it, and contract/controller-actions.json, which is generated
// from them (scripts/generators/gen-vocabulary.ts) and must not be stale.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CONTROLLER_ACTIONS_PATH, renderControllerActions } from '../../scripts/generators/gen-vocabulary.ts';
import {
  conditionMessageOf,
  consumesApproval,
  consumesRestoreRequest,
  handlingOf,
  jobOutcomeOf,
} from '../../src/controller-model/actions.ts';
import { EXIT, REASONS, RESULT_REASONS } from '../../src/vocabulary/reasons.ts';
import { APPROVAL_CASES, CONDITION_MESSAGE_CASES, JOB_OUTCOME_CASES, RESTORE_CASES } from './actions.cases.ts';

describe('the Job outcome DecideOp reads', () => {
  for (const c of JOB_OUTCOME_CASES)
    test(`${c.name} — “${c.doc}”`, () => assert.equal(jobOutcomeOf(c.pod), c.jobOutcome));
});

describe('the destructive-plan approval is consumed', () => {
  for (const c of APPROVAL_CASES)
    test(`${c.name} — “${c.doc}”`, () => assert.equal(consumesApproval(c.job, c.annotation), c.consumed));
});

describe("the condition's message", () => {
  for (const c of CONDITION_MESSAGE_CASES)
    test(`${c.name} — “${c.doc}”`, () => assert.equal(conditionMessageOf(c.result), c.message));
});

describe('the restore annotation is spent', () => {
  for (const c of RESTORE_CASES)
    test(`${c.name} — “${c.doc}”`, () => assert.equal(consumesRestoreRequest(c.reason, c.exitCode), c.consumed));
});

describe('one action per result', () => {
  test('a failure that a retry can pass says retry (exit 1); a hold is only ever of a plan, a refresh or a drift', () => {
    for (const reason of RESULT_REASONS) {
      for (const op of REASONS[reason].ops) {
        const { action } = handlingOf(op, reason);
        const where = `${op} ${reason}`;
        if (REASONS[reason].exitCode === EXIT.failed && op !== 'unlock') assert.equal(action, 'retry', where);
        if (action === 'hold') assert.ok(op === 'plan' || op === 'refresh' || op === 'drift', where);
        if (action === 'hold' && op === 'plan') assert.equal(REASONS[reason].exitCode, EXIT.usage, where);
      }
    }
  });

  test('every failed apply retries with backoff, whatever its reason, but a stale approved plan (a new plan) and a block', () => {
    for (const reason of RESULT_REASONS) {
      if (!(REASONS[reason].ops as readonly string[]).includes('apply')) continue;
      const { action, jobOutcome } = handlingOf('apply', reason);
      if (jobOutcome !== 'failed' && jobOutcome !== 'deadlineExceeded') continue;
      assert.equal(action, REASONS[reason].exitCode === EXIT.planStale ? 'newPlan' : 'retry', reason);
    }
  });

  test('the deterministic refusals the issue names: a retry cannot help', () => {
    assert.equal(handlingOf('unlock', 'LockIdMismatch').action, 'byHand');
    assert.equal(handlingOf('unlock', 'UnlockUnsupported').action, 'byHand');
    assert.equal(handlingOf('restore', 'LineageMismatch').action, 'awaitRestore');
    assert.equal(handlingOf('restore', 'BackupMismatch').action, 'awaitRestore');
    for (const reason of ['InputsInvalid', 'SettingsInvalid'] as const)
      assert.equal(handlingOf('plan', reason).action, 'hold', reason);
    for (const reason of ['ImageInvalid', 'InputsInvalid', 'PolicyDenied'] as const)
      assert.equal(handlingOf('drift', reason).action, 'hold', reason);
    assert.equal(handlingOf('refresh', 'RefreshRefused').action, 'hold');
    assert.equal(handlingOf('plan', 'ImageInvalid').action, 'retry');
    assert.equal(handlingOf('plan', 'PolicyDenied').action, 'retry');
    assert.equal(handlingOf('apply', 'PlanStale').action, 'newPlan');
  });

  test('a destroy retries with backoff whatever failed, and its condition stays DestroyFailed unless the image must change', () => {
    assert.deepEqual(handlingOf('destroy', 'InputsInvalid'), {
      jobOutcome: 'failed',
      countsTowardBackoff: true,
      action: 'retry',
      conditionReason: 'DestroyFailed',
    });
    assert.deepEqual(handlingOf('destroy', 'ImageInvalid'), {
      jobOutcome: 'failed',
      countsTowardBackoff: true,
      action: 'retry',
      conditionReason: 'ImageInvalid',
    });
    assert.deepEqual(handlingOf('destroy', 'JobDeadlineExceeded'), {
      jobOutcome: 'deadlineExceeded',
      countsTowardBackoff: true,
      action: 'retry',
      conditionReason: 'JobDeadlineExceeded',
    });
    assert.deepEqual(handlingOf('destroy', 'Interrupted'), {
      jobOutcome: 'interrupted',
      countsTowardBackoff: false,
      action: 'retryAtOnce',
      conditionReason: 'Interrupted',
    });
  });

  test("a state that is not the object's (exit 7) retries with backoff until a person acts, and keeps its condition reason, for a destroy too", () => {
    for (const op of ['apply', 'plan', 'refresh', 'drift'] as const)
      assert.deepEqual(
        handlingOf(op, 'StateLineageMismatch'),
        { jobOutcome: 'failed', countsTowardBackoff: true, action: 'retry', conditionReason: 'StateLineageMismatch' },
        op,
      );
    assert.deepEqual(handlingOf('destroy', 'StateLineageMismatch'), {
      jobOutcome: 'failed',
      countsTowardBackoff: true,
      action: 'retry',
      conditionReason: 'StateLineageMismatch',
    });
    assert.equal(handlingOf('destroy', 'NoStateFound').jobOutcome, 'succeeded');
  });

  test("a newer runner's reason is handled by its exit code", () => {
    assert.equal(handlingOf('apply', 'SomeNewDenial', 4).action, 'retry');
    assert.equal(handlingOf('drift', 'SomeNewDenial', 4).action, 'hold');
    assert.equal(handlingOf('drift', 'SomeNewDenial', 8).action, 'hold');
    assert.equal(handlingOf('plan', 'SomeNewDenial', 2).action, 'hold');
    assert.equal(handlingOf('plan', 'SomeNewDenial', 8).action, 'retry');
    assert.equal(handlingOf('refresh', 'SomeNewFailure', 1).action, 'retry');
    assert.equal(handlingOf('refresh', 'SomeNewFailure', 9).action, 'retry');
  });
});

test('contract/controller-actions.json is what the generator writes (node --import tsx scripts/generators/gen-vocabulary.ts), with a row for every reason a Job can end with', () => {
  const checkedIn = readFileSync(CONTROLLER_ACTIONS_PATH, 'utf8');
  assert.equal(checkedIn, renderControllerActions());
  const { reasons } = JSON.parse(checkedIn) as { reasons: { reason: string; byOp: Record<string, unknown> }[] };
  assert.deepEqual(
    reasons.map((row) => row.reason),
    RESULT_REASONS,
  );
  for (const row of reasons)
    assert.deepEqual(Object.keys(row.byOp), [...REASONS[row.reason as keyof typeof REASONS].ops], row.reason);
});
