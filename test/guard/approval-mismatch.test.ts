// Why a given approval did not match: every way a pasted value goes wrong is named, and a value
// that only differs in form is still no approval (the guard compares exactly).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { approvalMismatch, type ApprovalFacts } from '../../src/guard/approval-mismatch.ts';
import { decideApply } from '../../src/guard/decide.ts';
import { classifyPlan } from '../../src/plan/classify.ts';

/** A plan that deletes one resource: gated. */
const deletes = classifyPlan({
  format_version: '1.2',
  applyable: true,
  complete: true,
  errored: false,
  resource_changes: [
    {
      address: 'terraform_data.a',
      mode: 'managed',
      type: 'terraform_data',
      name: 'a',
      change: { actions: ['delete'] },
    },
  ],
});

const h = (c: string) => c.repeat(64);
const facts: Omit<ApprovalFacts, 'given'> = {
  approvalHash: h('a'),
  inputsHash: h('b'),
  planHashes: [h('c'), h('9')],
  stateInputsHash: h('d'),
};
const explain = (given: string, more: Partial<ApprovalFacts> = {}) => approvalMismatch({ ...facts, ...more, given });

describe('approvalMismatch', () => {
  it('the approval hash itself: nothing to explain', () => {
    assert.equal(explain(h('a')), undefined);
    assert.ok(deletes.gated, 'the plan below needs an approval');
  });

  for (const [given, problem] of [
    [h('A'), 'upper-case letters'],
    [` ${h('a')}`, 'whitespace around it'],
    [`${h('a')}\n`, 'a newline or whitespace around it'],
    [`sha256:${h('a')}`, 'a "sha256:" prefix'],
    [`SHA256:${h('A')}`, 'upper-case letters'],
    [h('a').slice(1), '63 characters where 64 are needed'],
    [`${h('a').slice(1)}g`, 'characters that are not hex digits'],
  ] as const) {
    it(`not 64 lowercase hex (${JSON.stringify(given.slice(0, 12))}…): ${problem}, and still no approval`, () => {
      const notice = explain(given)!;
      assert.equal(notice.code, 'ApprovalMalformed');
      assert.ok(notice.message.includes(problem), notice.message);
      assert.ok(
        notice.message.includes('it approves nothing') &&
          notice.message.includes(`pass exactly the approval hash ${h('a')}`),
        notice.message,
      );
      const decision = decideApply({
        planHasChanges: true,
        classification: deletes,
        guard: true,
        approvedHash: given,
        approvalHash: h('a'),
      });
      assert.equal(decision.action, 'block', 'the guard does not normalise');
    });
  }

  it('a tidied value that would match says so; one that would not does not', () => {
    assert.match(
      explain(`sha256:${h('a')}`)!.message,
      /it is this run's approval hash written another way \(the runner compares exactly\)/,
    );
    assert.doesNotMatch(explain(`sha256:${h('e')}`)!.message, /written another way/);
  });

  it("this run's plan hash, its inputs hash, the state's recorded inputs, a blocked run's approval, anything else", () => {
    assert.equal(explain(h('c'))!.code, 'ApprovalIsPlanHash');
    assert.match(explain(h('c'))!.message, /a plan hash \(planHash/);
    assert.equal(explain(h('9'))!.code, 'ApprovalIsPlanHash', "the blocked run's plan hash");
    assert.equal(explain(h('b'))!.code, 'ApprovalIsInputsHash');
    assert.match(explain(h('b'))!.message, /bootstrap_data/);
    assert.equal(explain(h('d'))!.code, 'ApprovalOfOtherInputs');
    assert.match(explain(h('d'))!.message, /the inputs hash the state records/);
    const blocked = explain(h('e'), { blockedRunFinishedAt: '2026-12-01T10:00:00.000Z' })!;
    assert.equal(blocked.code, 'ApprovalOfOtherInputs');
    assert.match(blocked.message, /a run blocked at 2026-12-01T10:00:00\.000Z for other inputs/);
    assert.equal(explain(h('e'))!.code, 'ApprovalMismatch');
    assert.equal(explain(h('e'), { stateInputsHash: null, planHashes: [] })!.code, 'ApprovalMismatch');
  });
});
