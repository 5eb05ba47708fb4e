// What a result is built from: each step's record keeps what the step learned (from its value, or
// from its error when it failed after learning something), the op adds what it concluded, and
// finishRun builds the result from these. No process, no terraform.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RunContext } from '../../src/run/context.ts';
import { finishRun } from '../../src/run/finish.ts';
import { keepOnFailure, reporting, takeLearned, withLearned } from '../../src/run/learned.ts';
import { RunnerError, errorOf } from '../../src/errors.ts';
import { Masker } from '../../src/output/mask.ts';
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
    assert.deepEqual(ctx.steps.map((s) => [s.name, s.status]), [['state before', 'ok'], ['plan hash', 'ok'], ['state after', 'ok']]);
  });

  it('keeps what a step learned before it failed, in its own record, and takes it off the error', async () => {
    const ctx = run();
    const refused = failure('PlanErrored');
    await assert.rejects(ctx.step('show', () => keepOnFailure({ planHash: 'classified' }, () => { throw refused; }), { learned: () => ({ planHash: 'never' }) }), refused);
    assert.deepEqual(ctx.learned(), { planHash: 'classified' });
    assert.equal(ctx.steps[0]!.status, 'failed');
    assert.deepEqual(takeLearned(refused), {}, 'recorded once, in the step, not again from the error');
  });

  it("records what a step's start tells whether it succeeds or fails; what its error says wins", async () => {
    const started = { applied: true, mayHaveChanged: true };
    const ok = run();
    await ok.step('apply', async () => 0, { starting: started });
    assert.deepEqual(ok.learned(), started);
    const failed = run();
    await assert.rejects(failed.step('apply', async () => { throw failure('ApplyFailed'); }, { starting: started }));
    assert.deepEqual(failed.learned(), started);
    const stale = run();
    await assert.rejects(stale.step('apply', async () => { throw withLearned(failure('PlanStale'), { mayHaveChanged: false }); }, { starting: started }));
    assert.deepEqual(stale.learned(), { applied: true, mayHaveChanged: false });
  });

  it('a step refused after a stop request learns nothing, not even what its start would tell', async () => {
    const ctx = run();
    ctx.requestStop('SIGTERM');
    await assert.rejects(ctx.step('state push', async () => 0, { starting: { mayHaveChanged: true } }), (e: RunnerError) => e.kind === 'interrupted');
    assert.deepEqual(ctx.learned(), {});
  });

  it("reporting: the op's conclusion reaches the result with its ending or on its error", async () => {
    const approval = { given: true, matched: true, required: true };
    const ending = await reporting({ approval }, async () => ({ outcome: 'succeeded' as const, reason: 'ApplySucceeded', message: 'Applied.', learned: { planText: 'x' } }));
    assert.deepEqual(ending.learned, { approval, planText: 'x' });
    const error = failure('ApplyFailed');
    await assert.rejects(reporting({ approval }, async () => { throw error; }), error);
    assert.deepEqual(takeLearned(error), { approval });
  });

  it('finishRun: the records, then the ending or the error; the sensitive outputs apart, never in the result', async () => {
    const ctx = run();
    const sensitive = { token: { sensitive: true, known: true, type: 'string', value: 'secret-value' } };
    await ctx.step('apply', async () => 0, { starting: { applied: true, mayHaveChanged: true } });
    await ctx.step('state after', async () => 0, { learned: () => ({ outputs: { token: { sensitive: true, known: true, type: 'string' } }, sensitiveOutputs: sensitive }) });
    const blocked = withLearned(new RunnerError({ kind: 'blocked', reason: 'DestructivePlanBlocked', message: 'approve it' }), { approveCommand: 'kubectl annotate …' });
    const { result, exitCode, sensitiveOutputs } = await finishRun(ctx, undefined, blocked);
    assert.equal(exitCode, 3);
    assert.equal(result.applied, true);
    assert.equal(result.mayHaveChanged, true);
    assert.equal(result.approveCommand, 'kubectl annotate …');
    assert.deepEqual(sensitiveOutputs, sensitive);
    assert.doesNotMatch(JSON.stringify(result), /secret-value|sensitiveOutputs/);
    const quietRun = await finishRun(run(), { outcome: 'noChanges', reason: 'NoChanges', message: 'nothing', learned: { planHash: 'h' } }, undefined);
    assert.equal(quietRun.result.mayHaveChanged, false);
    assert.equal(quietRun.result.applied, false);
    assert.equal(quietRun.result.planHash, 'h');
  });
});
