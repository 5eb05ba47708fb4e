import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  approveCommand,
  blockedMessage,
  changesOnlyTheRecord,
  decideApply,
  hashesEqual,
  ungatedWarnings,
} from '../../src/guard/decide.ts';
import { needsApproval, reconcilePlanExit } from '../../src/plan/gate.ts';
import { classifyPlan } from '../../src/plan/classify.ts';
import {
  appliedSinceBlocked,
  FUTURE_TOLERANCE_MS,
  newestBlockedRun,
  readBlockedRun,
  unreviewedChanges,
  unreviewedWarning,
  type BlockedRun,
  type ShownChange,
} from '../../src/guard/unreviewed.ts';

const H = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);

const ACTIONS = [
  ['no-op'],
  ['create'],
  ['update'],
  ['delete'],
  ['delete', 'create'],
  ['create', 'delete'],
  ['read'],
  ['forget'],
  ['teleport'],
];

/** A show -json document with the given entries. */
const planDoc = (entries: string[][], extra: Record<string, unknown> = {}) => ({
  format_version: '1.2',
  terraform_version: '1.11.4',
  applyable: true,
  complete: true,
  errored: false,
  resource_changes: entries.map((actions, i) => ({
    address: `terraform_data.r${i}`,
    mode: 'managed',
    type: 'terraform_data',
    name: `r${i}`,
    change: { actions },
  })),
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
    const d = decideApply({
      planHasChanges: false,
      classification: classifyPlan(planDoc([['no-op']])),
      guard: true,
      approvedHash: '',
      approvalHash: H,
    });
    assert.deepEqual(d, { action: 'skip', outcome: 'noChanges' });
  });

  it('applies a hash-only change with outcome noChanges', () => {
    const d = decideApply({
      planHasChanges: true,
      classification: classifyPlan(planDoc([['no-op']])),
      guard: true,
      approvedHash: '',
      approvalHash: H,
    });
    assert.equal(d.action, 'apply');
    assert.equal(d.action === 'apply' && d.outcome, 'noChanges');
  });

  it('a plan the classifier failed closed on never counts as changing only the record', () => {
    // No resource and no output changes, but a format major or sections it cannot read: destructive.
    for (const plan of [
      planDoc([['no-op']], { format_version: '2.0' }),
      { format_version: '1.2', resource_changes: {} },
      planDoc([['no-op']], { complete: 'yes' }),
    ]) {
      const classification = classifyPlan(plan);
      assert.equal(changesOnlyTheRecord(classification), false, JSON.stringify(plan));
      const d = decideApply({ planHasChanges: true, classification, guard: true, approvedHash: '', approvalHash: H });
      assert.equal(d.action, 'block');
    }
    assert.equal(changesOnlyTheRecord(classifyPlan(planDoc([['no-op']]))), true);
  });

  it('blocks a destructive plan unless the exact approval hash is given', () => {
    const plan = classifyPlan(planDoc([['create'], ['delete', 'create']]));
    assert.equal(
      decideApply({ planHasChanges: true, classification: plan, guard: true, approvedHash: OTHER, approvalHash: H })
        .action,
      'block',
    );
    assert.equal(
      decideApply({ planHasChanges: true, classification: plan, guard: true, approvedHash: H, approvalHash: H }).action,
      'apply',
    );
    assert.equal(
      decideApply({ planHasChanges: true, classification: plan, guard: false, approvedHash: '', approvalHash: H })
        .action,
      'apply',
    );
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
          const destructive =
            entries.some((a) => a.includes('delete') || a.includes('teleport')) || formatVersion === '2.0';
          const d = decideApply({
            planHasChanges,
            classification: plan,
            guard,
            approvedHash: approved ? H : OTHER,
            approvalHash: H,
          });
          const applies = d.action === 'apply';
          assert.equal(applies, planHasChanges && (!destructive || approved || !guard));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('guard: the gate (needsApproval) and the plan exit code', () => {
  const withAction = planDoc([['no-op']], {
    action_invocations: [{ address: 'action.x.stop', invoke_action_trigger: {} }],
  });

  it('a provider action alone gates the plan: blocked without the approval, applied with it, and never "only the record"', () => {
    const plan = classifyPlan(withAction);
    assert.equal(plan.gated, true);
    assert.equal(needsApproval(plan), true);
    assert.equal(changesOnlyTheRecord(plan), false);
    assert.equal(
      decideApply({ planHasChanges: true, classification: plan, guard: true, approvedHash: '', approvalHash: H })
        .action,
      'block',
    );
    const approved = decideApply({
      planHasChanges: true,
      classification: plan,
      guard: true,
      approvedHash: H,
      approvalHash: H,
    });
    assert.deepEqual(approved, {
      action: 'apply',
      outcome: 'succeeded',
      approvalRequired: true,
      approvalMatched: true,
    });
    assert.equal(
      decideApply({ planHasChanges: true, classification: plan, guard: false, approvedHash: '', approvalHash: H })
        .action,
      'apply',
    );
  });

  it('needsApproval: a destructive entry, an action or a failClosed reason, and nothing else', () => {
    assert.equal(needsApproval({ destructiveTotal: 0, actionsTotal: 0, failClosed: [] }), false);
    assert.equal(needsApproval({ destructiveTotal: 1, actionsTotal: 0, failClosed: [] }), true);
    assert.equal(needsApproval({ destructiveTotal: 0, actionsTotal: 1, failClosed: [] }), true);
    assert.equal(needsApproval({ destructiveTotal: 0, actionsTotal: 0, failClosed: ['x'] }), true);
  });

  it('the exit code never outvotes the classification: a changing plan after exit 0 has changes, with a warning', () => {
    const replace = classifyPlan(planDoc([['delete', 'create']]));
    const exit0 = reconcilePlanExit(false, replace, { recordChanges: false, destroyPlan: false });
    assert.equal(exit0.hasChanges, true);
    assert.match(
      exit0.warning!,
      /exited 0 \(no changes\), but the plan document it saved changes something.*needs an approval/,
    );
    assert.equal(
      decideApply({
        planHasChanges: exit0.hasChanges,
        classification: replace,
        guard: true,
        approvedHash: '',
        approvalHash: H,
      }).action,
      'block',
    );
    for (const doc of [
      planDoc([['create']]),
      withAction,
      planDoc([['no-op']], { output_changes: { o: { actions: ['create'] } } }),
      planDoc([['no-op']], { future: [1] }),
    ])
      assert.equal(
        reconcilePlanExit(false, classifyPlan(doc), { recordChanges: false, destroyPlan: false }).hasChanges,
        true,
        JSON.stringify(doc),
      );
    // Nothing classified: exit 0 stays no changes, and exit 2 (the runner's record) stays changes, silently.
    assert.deepEqual(
      reconcilePlanExit(false, classifyPlan(planDoc([['no-op']])), { recordChanges: false, destroyPlan: false }),
      { hasChanges: false },
    );
    assert.deepEqual(
      reconcilePlanExit(true, classifyPlan(planDoc([['no-op']])), { recordChanges: false, destroyPlan: false }),
      { hasChanges: true },
    );
  });
});

describe('guard: messages', () => {
  it('names the resource kind, object, namespace and hash in the approve command', () => {
    assert.equal(
      approveCommand('pool', 'workers', 'ns', H),
      `kubectl annotate terraformmachinepool workers -n ns captf.io/approve-destructive-plan=${H} --overwrite`,
    );
    assert.equal(
      approveCommand('cluster', undefined, undefined, H),
      `kubectl annotate terraformcluster <name> -n <namespace> captf.io/approve-destructive-plan=${H} --overwrite`,
    );
  });

  it('a block names the actions (address, action trigger) and what the runner cannot read', () => {
    const plan = classifyPlan(
      planDoc([['delete']], {
        action_invocations: [
          { address: 'action.x.stop', invoke_action_trigger: {} },
          { address: 'action.x.drain', lifecycle_action_trigger: { action_trigger_event: 'BeforeDestroy' } },
        ],
        future: true,
      }),
    );
    const message = blockedMessage(plan, H);
    assert.match(
      message,
      /^The plan needs an approval: it deletes or replaces: terraform_data\.r0 \(delete\); it runs provider actions, which the runner cannot judge: action\.x\.stop \(action invoke\), action\.x\.drain \(action BeforeDestroy\); the runner cannot fully read it: the plan has a top-level key this runner does not know, "future"/,
    );
    assert.match(message, /Nothing was applied: an approval of approval hash a{64} applies it\.$/);
    const warnings = ungatedWarnings(plan, 'destroyed without an approval');
    assert.deepEqual(
      warnings.map((w) => w.split(':')[0] + ':' + w.split(':')[1]),
      [
        'destroyed without an approval: the plan runs provider actions, which the runner cannot judge',
        'destroyed without an approval: the runner cannot fully read the plan',
      ],
    );
    assert.deepEqual(
      ungatedWarnings(classifyPlan(planDoc([['delete']])), 'x'),
      [],
      "a destructive entry alone is the destroy's job: no warning",
    );
  });

  it('lists every destructive address with its action and says nothing was applied', () => {
    const plan = classifyPlan(planDoc([['delete'], ['create', 'delete']]));
    const message = blockedMessage(plan, H);
    assert.match(message, /terraform_data\.r0 \(delete\)/);
    assert.match(message, /terraform_data\.r1 \(replace\)/);
    assert.match(message, /Nothing was applied/);
    assert.match(message, new RegExp(H));
  });
});

describe('guard: what an approval covered that was not shown (approval.unreviewed)', () => {
  const blocked = (shown: ShownChange[], finishedAt = '2025-01-01T00:00:00Z', location = 'here'): BlockedRun => ({
    location,
    finishedAt,
    shown,
  });
  const A = { address: 'terraform_data.a', action: 'delete' };
  const B = { address: 'terraform_data.b', action: 'delete' };

  it('lists what the approved plan destroys beyond what the blocked run showed, and nothing it showed', () => {
    assert.deepEqual(unreviewedChanges(blocked([A]), [A, B]), { unreviewed: [B], unreviewedTotal: 1 });
    assert.deepEqual(unreviewedChanges(blocked([A, B]), [A, B]), { unreviewed: [], unreviewedTotal: 0 });
    // Shown but no longer planned: nothing to report (the approval covers less than was shown).
    assert.deepEqual(unreviewedChanges(blocked([A, B]), [B]), { unreviewed: [], unreviewedTotal: 0 });
  });

  it('matches address, deposed key and action: a replace shown that is now a delete was not reviewed', () => {
    const replace = { address: 'terraform_data.c', action: 'replace' };
    const nowDelete = { address: 'terraform_data.c', action: 'delete' };
    assert.deepEqual(unreviewedChanges(blocked([replace]), [nowDelete]).unreviewed, [nowDelete]);
    const deposed = { address: 'terraform_data.c', deposed: '00000001', action: 'delete' };
    assert.deepEqual(unreviewedChanges(blocked([nowDelete]), [deposed]).unreviewed, [deposed]);
    assert.deepEqual(unreviewedChanges(blocked([deposed]), [{ ...deposed, deposed: '00000002' }]).unreviewedTotal, 1);
    assert.deepEqual(unreviewedChanges(blocked([deposed]), [deposed]).unreviewedTotal, 0);
  });

  it("entries beyond the blocked run's bounded list were not shown either", () => {
    const entries = Array.from({ length: 150 }, (_, i) => ({ address: `terraform_data.r[${i}]`, action: 'delete' }));
    const shown = blocked(entries.slice(0, 100));
    const found = unreviewedChanges(shown, entries);
    assert.equal(found.unreviewedTotal, 50);
    assert.deepEqual(found.unreviewed, entries.slice(100));
  });

  it('without a blocked run every entry is unreviewed; the list is bounded, the total counts all', () => {
    const entries = Array.from({ length: 120 }, (_, i) => ({ address: `terraform_data.r[${i}]`, action: 'replace' }));
    const found = unreviewedChanges(undefined, entries);
    assert.equal(found.unreviewedTotal, 120);
    assert.equal(found.unreviewed.length, 100);
    assert.deepEqual(unreviewedChanges(undefined, entries, 5).unreviewed, entries.slice(0, 5));
  });

  it('property: unreviewed is exactly the approved entries whose (address, deposed, action) the blocked run did not list', () => {
    const change = fc
      .record({
        address: fc.constantFrom('a', 'b', 'c', 'd'),
        deposed: fc.option(fc.constantFrom('1', '2'), { nil: undefined }),
        action: fc.constantFrom('delete', 'replace', 'unknown'),
      })
      .map((c) =>
        c.deposed === undefined
          ? { address: c.address, action: c.action }
          : { address: c.address, deposed: c.deposed, action: c.action },
      );
    fc.assert(
      fc.property(
        fc.uniqueArray(change, { selector: (c) => JSON.stringify(c) }),
        fc.uniqueArray(change, { selector: (c) => JSON.stringify(c) }),
        (shown, approved) => {
          const found = unreviewedChanges(blocked(shown), approved);
          const same = (x: ShownChange, y: ShownChange) =>
            x.address === y.address && x.deposed === y.deposed && x.action === y.action;
          assert.deepEqual(
            found.unreviewed,
            approved.filter((a) => !shown.some((s) => same(s, a))),
          );
          assert.equal(found.unreviewedTotal, found.unreviewed.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads a blocked apply of the same object and hash from a result document, and nothing else', () => {
    const doc = {
      apiVersion: 'runner.captf.io/v1',
      op: 'apply',
      outcome: 'blocked',
      approvalHash: H,
      finishedAt: '2025-02-01T10:00:00.000Z',
      object: { kind: 'cluster', name: 'prod', namespace: 'ns' },
      plan: {
        destructive: [{ address: 'terraform_data.a', action: 'delete', actions: ['delete'] }],
        destructiveTotal: 3,
        counts: {},
      },
      extra: 'fields of a later runner are fine',
    };
    const wanted = { approvalHash: H, object: { kind: 'cluster', name: 'prod', namespace: 'ns' } };
    assert.deepEqual(readBlockedRun(doc, 'loc', wanted), {
      location: 'loc',
      finishedAt: doc.finishedAt,
      shown: [{ address: 'terraform_data.a', action: 'delete' }],
    });
    assert.ok(
      readBlockedRun(doc, 'loc', { ...wanted, object: { kind: 'cluster', name: 'prod' } }),
      'a namespace on one side only does not matter',
    );
    for (const other of [
      { ...doc, approvalHash: OTHER },
      { ...doc, outcome: 'succeeded' },
      { ...doc, op: 'destroy' },
      { ...doc, apiVersion: 'runner.captf.io/v2' },
      { ...doc, object: { kind: 'pool', name: 'prod' } },
      { ...doc, object: { kind: 'cluster', name: 'staging' } },
      { ...doc, object: { kind: 'cluster', name: 'prod', namespace: 'other' } },
      { ...doc, finishedAt: 'yesterday' },
      { ...doc, plan: undefined },
      'not an object',
      null,
    ])
      assert.equal(readBlockedRun(other, 'loc', wanted), undefined, JSON.stringify(other));
  });

  it('provider actions: shown when the blocked run listed the same address and trigger', () => {
    const invoke = { address: 'action.x.stop', action: 'action', trigger: 'invoke' };
    const doc = {
      apiVersion: 'runner.captf.io/v1',
      op: 'apply',
      outcome: 'blocked',
      approvalHash: H,
      finishedAt: '2025-02-01T10:00:00.000Z',
      object: { kind: 'cluster', name: 'prod' },
      plan: {
        destructive: [],
        destructiveTotal: 0,
        actions: [{ address: 'action.x.stop', trigger: 'invoke', type: 'x' }],
        actionsTotal: 1,
      },
    };
    const run = readBlockedRun(doc, 'loc', { approvalHash: H, object: { kind: 'cluster', name: 'prod' } })!;
    assert.deepEqual(run.shown, [invoke]);
    // A record of a runner before actions showed none.
    const { actions: _actions, ...olderPlan } = doc.plan;
    assert.deepEqual(
      readBlockedRun({ ...doc, plan: olderPlan }, 'loc', {
        approvalHash: H,
        object: { kind: 'cluster', name: 'prod' },
      })!.shown,
      [],
    );
    const afterDestroy = { address: 'action.x.stop', action: 'action', trigger: 'AfterDestroy' };
    assert.deepEqual(unreviewedChanges(run, [invoke, afterDestroy]), {
      unreviewed: [afterDestroy],
      unreviewedTotal: 1,
    });
    assert.match(
      unreviewedWarning(H, run, { unreviewed: [afterDestroy], unreviewedTotal: 1 }, [], true),
      /covers 1 destructive change or provider action that its blocked run .* did not show: action\.x\.stop \(action AfterDestroy\)/,
    );
  });

  it('the newest blocked run wins', () => {
    const older = blocked([A], '2025-01-01T00:00:00Z');
    const newer = blocked([B], '2025-01-02T00:00:00.5Z');
    assert.equal(newestBlockedRun([older, newer]).newest, newer);
    assert.equal(newestBlockedRun([newer, older]).newest, newer);
    assert.deepEqual(newestBlockedRun([]), { newest: undefined, ignored: [] });
  });

  it('a blocked run that says it finished in the future (over a minute ahead) is ignored and named', () => {
    const now = Date.parse('2025-06-01T12:00:00Z');
    const real = blocked([A], '2025-06-01T11:00:00Z', '/b/real.json');
    const forged = blocked([A, B], '2999-01-01T00:00:00Z', 'secret:ns/forged-result');
    const skewed = blocked([B], new Date(now + FUTURE_TOLERANCE_MS).toISOString(), '/o/result.json');
    const justOver = blocked([B], new Date(now + FUTURE_TOLERANCE_MS + 1).toISOString(), '/b/over.json');
    const picked = newestBlockedRun([real, forged], now);
    assert.equal(picked.newest, real, 'a forged record does not claim to be newest');
    assert.deepEqual(picked.ignored, [
      'secret:ns/forged-result (ignored: it says it finished at 2999-01-01T00:00:00Z, in the future)',
    ]);
    assert.equal(newestBlockedRun([real, skewed], now).newest, skewed, 'a clock up to a minute ahead is fine');
    assert.equal(newestBlockedRun([real, justOver], now).newest, real);
    assert.deepEqual(newestBlockedRun([forged], now).newest, undefined, 'only future ones: none found');
    // Without a `now`, the clock of this run.
    assert.equal(newestBlockedRun([real, forged]).newest, real);
  });

  it('onUnreviewed is told every unreviewed entry, also past the bound', () => {
    const entries = Array.from({ length: 7 }, (_, i) => ({ address: `terraform_data.r[${i}]`, action: 'delete' }));
    const told: ShownChange[] = [];
    const found = unreviewedChanges(blocked([entries[0]!]), entries, 2, (c) => told.push(c));
    assert.equal(found.unreviewed.length, 2);
    assert.deepEqual(told, entries.slice(1));
  });

  it('the warning names the count, the first entries, the blocked run, or where it looked when there was none', () => {
    const entries = Array.from({ length: 8 }, (_, i) => ({ address: `terraform_data.r${i}`, action: 'delete' }));
    const run = blocked([]);
    const w = unreviewedWarning(H, run, unreviewedChanges(run, entries));
    assert.match(
      w,
      /covers 8 destructive changes that its blocked run \(here, finished 2025-01-01T00:00:00Z\) did not show: terraform_data\.r0 \(delete\)/,
    );
    assert.match(w, /and 3 more/);
    assert.match(w, /goes ahead as approved/);
    const none = unreviewedWarning(H, undefined, unreviewedChanges(undefined, [A]), [
      '/b/blocked.json',
      '/o/result.json',
    ]);
    assert.match(
      none,
      new RegExp(`no blocked run was found for approval hash ${H} \\(looked in: /b/blocked.json; /o/result.json\\)`),
    );
    assert.match(none, /all 1 destructive change of this plan count as unreviewed: terraform_data\.a \(delete\)/);
    assert.match(unreviewedWarning(H, undefined, { unreviewed: [], unreviewedTotal: 0 }), /^no blocked run was found/);
  });

  it('an approval applied once already (the state records these inputs, which it did not when blocked): the warning says so, and what to do instead', () => {
    const inputs = 'c'.repeat(64);
    const run: BlockedRun = { ...blocked([]), stateInputsHash: OTHER };
    assert.equal(appliedSinceBlocked(run, inputs, inputs), true);
    assert.equal(appliedSinceBlocked(run, inputs, OTHER), false, 'the state still records the inputs of the block');
    assert.equal(
      appliedSinceBlocked({ ...run, stateInputsHash: inputs }, inputs, inputs),
      false,
      'blocked when the state already recorded these inputs (the module changed): nothing says it was applied since',
    );
    assert.equal(appliedSinceBlocked(blocked([]), inputs, inputs), false, 'a record that does not say');
    assert.equal(appliedSinceBlocked(undefined, inputs, inputs), false);
    const found = unreviewedChanges(run, [A]);
    assert.match(
      unreviewedWarning(H, run, found, [], false, true),
      /did not show: terraform_data\.a \(delete\)\. .* It was applied once already: .*An approval is consumed by its apply .*under a new --image/,
    );
    assert.doesNotMatch(unreviewedWarning(H, run, found), /applied once/);
  });
});
