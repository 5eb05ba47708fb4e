import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { detailedExitCode, exitCodeOf, exitCodeOfError, outcomeOf } from '../../src/run/exit-codes.ts';
import { RunnerError, errorOf } from '../../src/errors.ts';
import { EXIT, REASONS, REASON_NAMES, isErrorReason } from '../../src/vocabulary/reasons.ts';

describe('exit codes', () => {
  it('follow the contract table', () => {
    assert.equal(exitCodeOf('ApplySucceeded'), 0);
    assert.equal(exitCodeOf('NoChanges'), 0);
    assert.equal(exitCodeOf('DriftFound'), 0, '6 only with --detailed-exitcode');
    assert.equal(exitCodeOf('ApplyFailed'), 1);
    assert.equal(exitCodeOf('SettingsInvalid'), 2);
    assert.equal(exitCodeOf('InputsInvalid'), 2);
    assert.equal(exitCodeOf('DestructivePlanBlocked'), 3);
    assert.equal(exitCodeOf('ImageInvalid'), 4);
    assert.equal(exitCodeOf('PolicyDenied'), 8, 'a denial is told apart from a broken module (4)');
    assert.equal(exitCodeOf('RefreshRefused'), 4);
    assert.equal(exitCodeOf('PlanStale'), 5);
    assert.equal(exitCodeOf('ArtifactMismatch'), 5);
    assert.equal(exitCodeOf('ArtifactNotFound'), 5, 'an approved artifact that is gone: a new plan, not a retry');
    assert.equal(exitCodeOf('StateLineageMismatch'), 7);
    assert.equal(exitCodeOf('JobDeadlineExceeded'), 124);
    const interrupted = (cause: string) =>
      new RunnerError({ kind: 'interrupted', reason: 'Interrupted', message: '', detail: { cause } });
    assert.equal(exitCodeOfError(interrupted('SIGINT')), 130);
    assert.equal(exitCodeOfError(interrupted('SIGTERM')), 143);
  });

  it('a failure a retry cannot pass never exits 1: deterministic refusals of unlock and restore', () => {
    for (const reason of ['LockIdMismatch', 'UnlockUnsupported', 'LineageMismatch', 'BackupMismatch'] as const) {
      assert.equal(exitCodeOf(reason), EXIT.usage, reason);
      assert.equal(outcomeOf(errorOf(reason, '')), 'invalid', reason);
    }
  });

  it("an error's outcome and exit code are its reason's row, whatever the kind", () => {
    for (const reason of REASON_NAMES.filter(isErrorReason)) {
      const error = errorOf(reason, 'x');
      assert.equal(error.kind, REASONS[reason].kind, reason);
      assert.equal(outcomeOf(error), REASONS[reason].outcomes[0], reason);
      if (reason !== 'Interrupted') assert.equal(exitCodeOfError(error), REASONS[reason].exitCode, reason);
    }
  });

  it('--detailed-exitcode: drift found 6, a denied classification 8, a gated one 3; a failure keeps its code', () => {
    assert.equal(detailedExitCode(0, { driftFound: true }), 6);
    assert.equal(detailedExitCode(0, { gated: true, denied: true }), 8);
    assert.equal(detailedExitCode(0, { gated: true }), 3);
    assert.equal(detailedExitCode(0, {}), 0);
    assert.equal(detailedExitCode(2, { gated: true, denied: true }), 2);
  });
});
