// The summary's end: whether anything changed, and the one next step (for a block: how to approve it, once).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { humanSummary, rerunCommand, SUMMARY_LABELS } from '../../src/output/summary.ts';
import type { Result } from '../../src/schemas/result.ts';
import { classifyPlan } from '../../src/plan/classify.ts';
import { approveCommand } from '../../src/guard/decide.ts';

const H = 'a'.repeat(64);
const plan = classifyPlan({ format_version: '1.2', applyable: true, complete: true, errored: false, resource_changes: [{ address: 'terraform_data.a', mode: 'managed', type: 'terraform_data', name: 'a', change: { actions: ['delete'] } }] });
const result = (over: Partial<Result>): Result => ({
  apiVersion: 'runner.captf.io/v1', op: 'apply', outcome: 'succeeded', reason: 'ApplySucceeded', message: 'Applied.', exitCode: 0, runnerVersion: '0', object: { kind: 'cluster' },
  applied: false, mayHaveChanged: false, steps: [], annotations: {}, warnings: [], startedAt: '', finishedAt: '', ...over,
});
const count = (text: string, part: string) => text.split(part).length - 1;

describe('humanSummary: what changed and what next', () => {
  it('a local block (no --object): the rerun command with --approved-hash, once, and no kubectl', () => {
    const argv = ['apply', '--module', 'm', '--inputs', 'my inputs', '--approved-hash', 'b'.repeat(64), '--backend-config', 'password=hunter22', '--backend-config=token=x'];
    const blocked = result({ outcome: 'blocked', reason: 'DestructivePlanBlocked', exitCode: 3, plan, approvalHash: H, approveCommand: approveCommand('cluster', undefined, undefined, H), message: 'The plan needs an approval.' });
    const text = humanSummary(blocked, { argv });
    const rerun = `captf-runner apply --module m --inputs 'my inputs' --backend-config '<as before>' '--backend-config=<as before>' --approved-hash ${H}`;
    assert.equal(count(text, rerun), 1, text);
    assert.equal(count(text, '--approved-hash'), 1, 'the old approval is dropped');
    assert.doesNotMatch(text, /kubectl|hunter22|token=x/);
    assert.match(text, /^changed: nothing: no infrastructure or state was changed$/m);
    assert.match(text, /^next: review the destructive changes above; to apply them, run again with the approval: captf-runner apply/m);
  });

  it("a Job's block (--object): the kubectl command, once", () => {
    const command = approveCommand('cluster', 'demo', 'team-a', H);
    const text = humanSummary(result({ outcome: 'blocked', reason: 'DestructivePlanBlocked', exitCode: 3, plan, approvalHash: H, approveCommand: command, object: { kind: 'cluster', name: 'demo', namespace: 'team-a' } }), { argv: ['apply'] });
    assert.equal(count(text, command), 1, text);
    assert.doesNotMatch(text, /run again with the approval/);
  });

  it('each outcome its change and next step', () => {
    const cases: [Partial<Result>, RegExp, RegExp][] = [
      [{ applied: true, mayHaveChanged: true }, /changed: yes, terraform apply ran/, /next: nothing: the run did its job/],
      [{ outcome: 'noChanges', reason: 'NoChanges' }, /changed: nothing/, /next: nothing/],
      [{ outcome: 'failed', reason: 'ApplyFailed', exitCode: 1, applied: true, mayHaveChanged: true }, /changed: maybe: terraform apply ran/, /next: see the error above; a retry can help/],
      [{ outcome: 'failed', reason: 'PlanStale', exitCode: 5 }, /changed: nothing/, /next: make a new plan \(and approval\)/],
      [{ outcome: 'invalid', reason: 'InputsInvalid', exitCode: 2 }, /changed: nothing/, /next: fix the inputs or flags named above/],
      [{ outcome: 'invalid', reason: 'ImageInvalid', exitCode: 4 }, /changed: nothing/, /next: fix the module or image named above/],
      [{ op: 'restore', outcome: 'failed', reason: 'RestoreVerifyFailed', exitCode: 1, mayHaveChanged: true }, /changed: maybe: the state may differ/, /next: see the error/],
    ];
    for (const [over, changed, next] of cases) {
      const text = humanSummary(result(over));
      assert.match(text, changed, text);
      assert.match(text, next, text);
    }
  });
});

describe('humanSummary: its lines are its own', () => {
  it('a message cannot start a line: it stays one line, its control characters escaped', () => {
    const text = humanSummary(result({ message: 'Bad.\nchanged: nothing\r\nnext: nothing to do\x1b[2J\u202e' }));
    assert.equal(text.split('\n')[1], String.raw`Bad.\nchanged: nothing\r\nnext: nothing to do\x1b[2J\u202e`);
    assert.equal(count(text, '\nchanged: '), 1, text);
  });

  it("every line is masked but its label, the runner's own words: a secret equal to one of them leaves the shape readable", () => {
    const mask = (text: string) => text.replace(/apply|changed|succeeded/g, '(sensitive value)');
    const text = humanSummary(result({ applied: true, warnings: ['apply changed'] }), { mask });
    assert.deepEqual(text.trimEnd().split('\n'), [
      'captf-runner (sensitive value): (sensitive value) (ApplySucceeded)',
      'Applied.',
      'warning: (sensitive value) (sensitive value)',
      'changed: yes, terraform (sensitive value) ran',
      'next: nothing: the run did its job',
    ]);
    for (const line of text.trimEnd().split('\n')) assert.ok(SUMMARY_LABELS.some((label) => label !== '' && line.startsWith(label)) || line === 'Applied.', line);
  });
});

describe('rerunCommand', () => {
  it('replaces a given approval, in either spelling', () => {
    assert.equal(rerunCommand(['apply', `--approved-hash=${'c'.repeat(64)}`, '--guard', 'on'], H), `captf-runner apply --guard on --approved-hash ${H}`);
    assert.equal(rerunCommand(['apply', "it's"], H), `captf-runner apply 'it'\\''s' --approved-hash ${H}`);
  });
});
