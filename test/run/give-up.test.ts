// After the kill stage the run gives up on a step that is no terraform and never returns (a read
// that waits forever): the step ends interrupted and the run can write its result.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RunContext } from '../../src/run/context.ts';
import { Masker } from '../../src/masking/mask.ts';
import { Settings } from '../../src/schemas/config.ts';
import { createLogger } from '../../src/output/log.ts';
import { RunnerError } from '../../src/errors.ts';

async function context(): Promise<RunContext> {
  const masker = new Masker();
  const log = await createLogger('json', masker, { op: 'destroy', object: null, namespace: null }, 1);
  return new RunContext('destroy', Settings.parse({}), log, masker);
}

describe('giving up on a step', () => {
  it('a step whose body never settles ends interrupted, named, when the run gives up', {
    timeout: 10_000,
  }, async () => {
    const ctx = await context();
    const running = ctx.step('preflight', () => new Promise<never>(() => undefined));
    ctx.requestStop('SIGTERM');
    ctx.terraformStop.giveUp();
    await assert.rejects(
      running,
      (error: unknown) =>
        error instanceof RunnerError &&
        error.kind === 'interrupted' &&
        error.step === 'preflight' &&
        /during preflight: the step did not end after terraform's process group was killed: the run gave up on it$/.test(
          error.message,
        ),
    );
    assert.equal(ctx.steps.at(-1)?.status, 'interrupted');
  });

  it('giving up on the steps running at the stop leaves a step started since (damage control) running', async () => {
    const ctx = await context();
    const running = ctx.step('backup', () => new Promise<never>(() => undefined));
    ctx.requestStop('SIGTERM');
    const atStop = ctx.terraformStop.waitingNow();
    let release!: (v: string) => void;
    const cleanup = ctx.step('state after', () => new Promise<string>((r) => (release = r)), { cleanup: true });
    ctx.terraformStop.giveUp(atStop);
    await assert.rejects(running, /during backup: the step is no terraform and did not end within the stop grace/);
    release('read');
    assert.equal(await cleanup, 'read');
  });

  it('a step that starts later (damage control) is not given up on', async () => {
    const ctx = await context();
    ctx.requestStop('SIGTERM');
    ctx.terraformStop.giveUp();
    assert.equal(await ctx.step('state after', async () => 'read', { cleanup: true }), 'read');
  });
});
