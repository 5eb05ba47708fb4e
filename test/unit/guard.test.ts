import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { approveCommand, blockedMessage, changesOnlyTheRecord, decideApply, hashesEqual } from '../../src/guard/decide.ts';
import { classifyPlan } from '../../src/plan/classify.ts';
import { refuseErrored } from '../../src/ops/steps.ts';

const H = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);

const ACTIONS = [['no-op'], ['create'], ['update'], ['delete'], ['delete', 'create'], ['create', 'delete'], ['read'], ['forget'], ['teleport']];

/** A show -json document with the given entries. */
const planDoc = (entries: string[][], extra: Record<string, unknown> = {}) => ({
  format_version: '1.2',
  terraform_version: '1.11.4',
  applyable: true,
  complete: true,
  errored: false,
  resource_changes: entries.map((actions, i) => ({ address: `terraform_data.r${i}`, mode: 'managed', type: 'terraform_data', name: `r${i}`, change: { actions } })),
  ...extra,
});

describe('guard: hashesEqual', () => {
  it('matches only the exact 64-hex hash', () => {
    assert.equal(hashesEqual(H, H), true);
    assert.equal(hashesEqual(OTHER, H), false);
    assert.equal(hashesEqual('', H), false);
    assert.equal(hashesEqual(H.toUpperCase(), H), false);
    assert.equal(hashesEqual(H.slice(1), H.slice(1)), false);
  });
});

describe('guard: decideApply', () => {
  it('skips when terraform planned nothing', () => {
    const d = decideApply({ planHasChanges: false, classification: classifyPlan(planDoc([['no-op']])), guard: true, approvedHash: '', approvalHash: H });
    assert.deepEqual(d, { action: 'skip', outcome: 'noChanges' });
  });

  it('applies a hash-only change with outcome noChanges', () => {
    const d = decideApply({ planHasChanges: true, classification: classifyPlan(planDoc([['no-op']])), guard: true, approvedHash: '', approvalHash: H });
    assert.equal(d.action, 'apply');
    assert.equal(d.action === 'apply' && d.outcome, 'noChanges');
  });

  it('a plan the classifier failed closed on never counts as changing only the record', () => {
    // No resource and no output changes, but a format major or sections it cannot read: destructive.
    for (const plan of [planDoc([['no-op']], { format_version: '2.0' }), { format_version: '1.2', resource_changes: {} }, planDoc([['no-op']], { complete: 'yes' })]) {
      const classification = classifyPlan(plan);
      assert.equal(changesOnlyTheRecord(classification), false, JSON.stringify(plan));
      const d = decideApply({ planHasChanges: true, classification, guard: true, approvedHash: '', approvalHash: H });
      assert.equal(d.action, 'block');
    }
    assert.equal(changesOnlyTheRecord(classifyPlan(planDoc([['no-op']]))), true);
  });

  it('an errored plan is refused before any decision, even when approved', () => {
    assert.throws(() => refuseErrored(classifyPlan(planDoc([['create']], { errored: true }))), /PlanErrored|errored/);
    refuseErrored(classifyPlan(planDoc([['create']])));
  });

  it('blocks a destructive plan unless the exact approval hash is given', () => {
    const plan = classifyPlan(planDoc([['create'], ['delete', 'create']]));
    assert.equal(decideApply({ planHasChanges: true, classification: plan, guard: true, approvedHash: OTHER, approvalHash: H }).action, 'block');
    assert.equal(decideApply({ planHasChanges: true, classification: plan, guard: true, approvedHash: H, approvalHash: H }).action, 'apply');
    assert.equal(decideApply({ planHasChanges: true, classification: plan, guard: false, approvedHash: '', approvalHash: H }).action, 'apply');
  });

  it('property: the apply step runs iff the plan has changes and is non-destructive, approved, or the guard is off', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...ACTIONS), { maxLength: 8 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom('1.2', '1.0', '0.1', '2.0'),
        (entries, planHasChanges, guard, approved, formatVersion) => {
          const plan = classifyPlan(planDoc(entries, { format_version: formatVersion }));
          const destructive = entries.some((a) => a.includes('delete') || a.includes('teleport')) || formatVersion === '2.0';
          const d = decideApply({ planHasChanges, classification: plan, guard, approvedHash: approved ? H : OTHER, approvalHash: H });
          const applies = d.action === 'apply';
          assert.equal(applies, planHasChanges && (!destructive || approved || !guard));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('guard: messages', () => {
  it('names the resource kind, object, namespace and hash in the approve command', () => {
    assert.equal(approveCommand('pool', 'workers', 'ns', H), `kubectl annotate terraformmachinepool workers -n ns captf.io/approve-destructive-plan=${H} --overwrite`);
    assert.equal(approveCommand('cluster', undefined, undefined, H), `kubectl annotate terraformcluster <name> -n <namespace> captf.io/approve-destructive-plan=${H} --overwrite`);
  });

  it('lists every destructive address with its action and says nothing was applied', () => {
    const plan = classifyPlan(planDoc([['delete'], ['create', 'delete']]));
    const message = blockedMessage(plan, H, 'cmd');
    assert.match(message, /terraform_data\.r0 \(delete\)/);
    assert.match(message, /terraform_data\.r1 \(replace\)/);
    assert.match(message, /Nothing was applied/);
    assert.match(message, new RegExp(H));
  });
});
