import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { detailedExitCode, exitCodeOf } from '../../src/run/exit-codes.ts';
import { RunnerError } from '../../src/errors.ts';

describe('exit codes', () => {
  it('follow the contract table', () => {
    const e = (kind: ConstructorParameters<typeof RunnerError>[0]['kind'], reason = 'R', detail?: Record<string, unknown>) => new RunnerError({ kind, reason, message: '', detail });
    assert.equal(exitCodeOf('succeeded'), 0);
    assert.equal(exitCodeOf('noChanges'), 0);
    assert.equal(exitCodeOf('failed', e('terraform')), 1);
    assert.equal(exitCodeOf('invalid', e('usage')), 2);
    assert.equal(exitCodeOf('blocked', e('blocked')), 3);
    assert.equal(exitCodeOf('invalid', e('image')), 4);
    assert.equal(exitCodeOf('invalid', e('policy', 'PolicyDenied')), 8, 'a denial is told apart from a broken module (4)');
    assert.equal(exitCodeOf('failed', e('terraform', 'PlanStale')), 5);
    assert.equal(exitCodeOf('failed', e('artifact', 'ArtifactMismatch')), 5);
    assert.equal(exitCodeOf('failed', e('plan', 'RefreshRefused')), 4);
    assert.equal(exitCodeOf('failed', e('state', 'StateLineageMismatch')), 7);
    assert.equal(exitCodeOf('invalid', e('usage', 'InputsInvalid')), 2);
    assert.equal(exitCodeOf('interrupted', e('interrupted', 'JobDeadlineExceeded', { cause: 'deadline' })), 124);
    assert.equal(exitCodeOf('interrupted', e('interrupted', 'Interrupted', { cause: 'SIGINT' })), 130);
    assert.equal(exitCodeOf('interrupted', e('interrupted', 'Interrupted', { cause: 'SIGTERM' })), 143);
  });

  it('--detailed-exitcode: drift found 6, a denied classification 8, a gated one 3; a failure keeps its code', () => {
    assert.equal(detailedExitCode(0, { driftFound: true }), 6);
    assert.equal(detailedExitCode(0, { gated: true, denied: true }), 8);
    assert.equal(detailedExitCode(0, { gated: true }), 3);
    assert.equal(detailedExitCode(0, {}), 0);
    assert.equal(detailedExitCode(2, { gated: true, denied: true }), 2);
  });
});
