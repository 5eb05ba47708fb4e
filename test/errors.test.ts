// The one exit funnel: a typed error's exit code by the contract's table, for every command; an
// untyped error's message never printed where no masker stands between it and the terminal.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RunnerError, asRunnerError, imageError, unmaskedMessage, usageError } from '../src/errors.ts';
import { exitCodeOf, exitCodeOfError } from '../src/run/exit-codes.ts';
import { EXIT } from '../src/vocabulary/reasons.ts';

describe('the exit funnel', () => {
  it('gives a command the exit code an op result of the same error has', () => {
    const errors = [
      usageError('SettingsInvalid', 'bad'),
      imageError('broken image'),
      new RunnerError({ kind: 'plan', reason: 'PlanStale', message: 'stale' }),
      new RunnerError({ kind: 'terraform', reason: 'ApplyFailed', message: 'failed' }),
      new RunnerError({ kind: 'blocked', reason: 'DestructivePlanBlocked', message: 'blocked' }),
      asRunnerError(new Error('boom')),
    ];
    assert.deepEqual(errors.map(exitCodeOfError), [
      EXIT.usage,
      EXIT.imageInvalid,
      EXIT.planStale,
      EXIT.failed,
      EXIT.blocked,
      EXIT.failed,
    ]);
    for (const e of errors) assert.equal(exitCodeOfError(e), exitCodeOf(e.reason, e));
  });

  it('prints a typed message as it is, an untyped one by its class and place only', () => {
    assert.equal(
      unmaskedMessage(usageError('SettingsInvalid', '--limit must be a whole number')),
      '--limit must be a whole number',
    );
    const secret = 'CANARY-token-in-a-message-42';
    const internal = asRunnerError(new TypeError(`cannot read ${secret}`));
    const printed = unmaskedMessage(internal);
    assert.ok(!printed.includes(secret), printed);
    assert.match(
      printed,
      /^internal error \(TypeError at .*errors\.test\.ts:\d+:\d+.*\): a bug in the runner, please report it$/,
    );
    assert.match(unmaskedMessage(asRunnerError(secret)), /^internal error \(string\): a bug in the runner/);
    assert.ok(internal.message.includes(secret), 'an op keeps the message, for the masked result and log');
  });
});
