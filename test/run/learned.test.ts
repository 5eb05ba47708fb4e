// What a result is built from: the run keeps what each step learned (from its start, its value, or
// kept before it failed), the op adds what it concluded, and finishRun builds the result from
// these. Nothing rides on an error. No process, no terraform.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RunContext } from '../../src/run/context.ts';
import { finishRun } from '../../src/run/finish.ts';
import { RunnerError, errorOf } from '../../src/errors.ts';
import { Masker } from '../../src/masking/mask.ts';
import { Settings } from '../../src/schemas/config.ts';
import type { Logger } from '../../src/output/log.ts';

const quiet = { info() {}, warn() {}, error() {}, debug() {} } as unknown as Logger;
const run = () => new RunContext('apply', Settings.parse({}), quiet, new Masker());
const failure = (reason: 'ApplyFailed' | 'PlanErrored' | 'PlanStale') => errorOf(reason, `${reason}: fix it`);
const state = (serial: number) => ({ serialBefore: 1, serialAfter: serial, lineage: 'l' });

describe('run: the step records and what the result is built from', () => {
  it("keeps what each step's value tells, a later step's word over an earlier one's", async () => {
    const ctx = run();
    await ctx.step('state before', async () => 1, { learned: (serial) => ({ state: state(serial) }) });
    await ctx.step('plan hash', async () => 'h', { learned: (planHash) => ({ planHash }) });
    await ctx.step('state after', async () => 2, { learned: (serial) => ({ state: state(serial) }) });
    assert.deepEqual(ctx.learned(), { state: state(2), planHash: 'h' });
    assert.deepEqual(
      ctx.steps.map((s) => [s.name, s.status]),
      [
        ['state before', 'ok'],
        ['plan hash', 'ok'],
        ['state after', 'ok'],
      ],
    );
  });

  it('keeps what a step learned before it failed, whatever error it fails with (a wrapping catch loses nothing)', async () => {
    const ctx = run();
    const refused = failure('PlanErrored');
    const wrapped = (error: unknown) =>
      new RunnerError({ kind: 'plan', reason: 'PlanErrored', message: 'wrapped', cause: error });
    const show = async () => {
      ctx.keep({ planHash: 'classified' });
      throw refused;
    };
    await assert.rejects(
      ctx.step('show', () => show().catch((error: unknown) => Promise.reject(wrapped(error))), {
        learned: () => ({ planHash: 'never' }),
      }),
      /wrapped/,
    );
    assert.deepEqual(ctx.learned(), { planHash: 'classified' });
    assert.equal(ctx.steps[0]!.status, 'failed');
  });

  it("records what a step's start tells whether it succeeds or fails; what the step keeps later wins", async () => {
    const started = { applied: true, mayHaveChanged: true };
    const ok = run();
    await ok.step('apply', async () => 0, { starting: started });
    assert.deepEqual(ok.learned(), started);
    const failed = run();
    await assert.rejects(
      failed.step(
        'apply',
        async () => {
          throw failure('ApplyFailed');
        },
        { starting: started },
      ),
    );
    assert.deepEqual(failed.learned(), started);
    const stale = run();
    await assert.rejects(
      stale.step(
        'apply',
        async () => {
          stale.keep({ mayHaveChanged: false });
          throw failure('PlanStale');
        },
        { starting: started },
      ),
    );
    assert.deepEqual(stale.learned(), { applied: true, mayHaveChanged: false });
  });

  it('a step refused after a stop request learns nothing, not even what its start would tell', async () => {
    const ctx = run();
    ctx.requestStop('SIGTERM');
    await assert.rejects(
      ctx.step('state push', async () => 0, { starting: { mayHaveChanged: true } }),
      (e: RunnerError) => e.kind === 'interrupted',
    );
    assert.deepEqual(ctx.learned(), {});
  });

  it("an op's conclusion kept before a step fails reaches the result beside the error", async () => {
    const ctx = run();
    const approval = { given: true, matched: true, required: true };
    ctx.keep({ approval });
    const error = failure('ApplyFailed');
    await assert.rejects(
      ctx.step('apply', async () => {
        throw error;
      }),
      error,
    );
    const { result } = await finishRun(ctx, undefined, error);
    assert.deepEqual(result.approval, approval);
    assert.equal(result.reason, 'ApplyFailed');
  });

  it('finishRun: the records, then the ending or the error; the sensitive outputs apart, never in the result', async () => {
    const ctx = run();
    const sensitive = { token: { sensitive: true, known: true, type: 'string', value: 'secret-value' } };
    await ctx.step('apply', async () => 0, { starting: { applied: true, mayHaveChanged: true } });
    await ctx.step('state after', async () => 0, {
      learned: () => ({
        outputs: { token: { sensitive: true, known: true, type: 'string' } },
        sensitiveOutputs: sensitive,
      }),
    });
    ctx.keep({ approveCommand: 'kubectl annotate …' });
    const blocked = new RunnerError({ kind: 'blocked', reason: 'DestructivePlanBlocked', message: 'approve it' });
    const { result, exitCode, sensitiveOutputs } = await finishRun(ctx, undefined, blocked);
    assert.equal(exitCode, 3);
    assert.equal(result.applied, true);
    assert.equal(result.mayHaveChanged, true);
    assert.equal(result.approveCommand, 'kubectl annotate …');
    assert.deepEqual(sensitiveOutputs, sensitive);
    assert.doesNotMatch(JSON.stringify(result), /secret-value|sensitiveOutputs/);
    const quietRun = await finishRun(
      run(),
      { outcome: 'noChanges', reason: 'NoChanges', message: 'nothing', learned: { planHash: 'h' } },
      undefined,
    );
    assert.equal(quietRun.result.mayHaveChanged, false);
    assert.equal(quietRun.result.applied, false);
    assert.equal(quietRun.result.planHash, 'h');
  });
});
