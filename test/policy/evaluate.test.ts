import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_TIME_LIMIT_MS,
  MAX_DELETES_RULE,
  PLAN_TIME_RULE,
  PolicyEvaluator,
  type EvaluatorOptions,
} from '../../src/policy/evaluate.ts';
import type { CompiledPolicy } from '../../src/policy/compile.ts';
import type { PolicyChangeView } from '../../src/plan/policy-views.ts';
import {
  actionView,
  changeView,
  compiled,
  ISSUE_EXAMPLE,
  oneRule,
  planView,
  POLICY_HEADER,
} from './policies.support.ts';

/** The outcome of the changes under the policy, then an empty plan. */
function outcomeOf(policy: CompiledPolicy, changes: PolicyChangeView[], options?: EvaluatorOptions) {
  const evaluator = new PolicyEvaluator(policy, options);
  for (const view of changes) evaluator.change(view);
  return evaluator.plan(planView());
}

const deletes = (n: number) => Array.from({ length: n }, (_, i) => changeView(`old${i}`, 'delete'));

describe('policy evaluation: the issue example, verbatim', () => {
  const policy = compiled({ file: 'policy/example.yaml', text: ISSUE_EXAMPLE });

  it("denies a database replace, with the rule's message", () => {
    const outcome = outcomeOf(policy, [changeView('db_main', 'replace')]);
    assert.deepEqual(outcome.denied, [
      {
        rule: 'protect-databases',
        address: 'terraform_data.db_main',
        message: 'databases are never deleted by the runner: terraform_data.db_main',
      },
    ]);
    assert.equal(outcome.deniedTotal, 1);
    assert.deepEqual(outcome.approvalRequired, []);
  });

  it('denies a database delete, a deposed delete and an unknown action; a moved-and-replaced database is still a replace', () => {
    const outcome = outcomeOf(policy, [
      changeView('db1', 'delete'),
      changeView('db2', 'delete', { deposed: '00aa' }),
      changeView('db3', 'unknown'),
      changeView('db4', 'replace', { moved: true, previousAddress: 'terraform_data.legacy' }),
      changeView('db5', 'update'),
      changeView('db6', 'create'),
      changeView('cache', 'delete'),
    ]);
    assert.deepEqual(
      outcome.denied.map((d) => d.address),
      ['db1', 'db2', 'db3', 'db4'].map((n) => `terraform_data.${n}`),
    );
  });

  it('requires approval for an IAM update, and for nothing else', () => {
    const outcome = outcomeOf(policy, [
      changeView('iam_role', 'update'),
      changeView('iam_role2', 'create'),
      changeView('app', 'update'),
    ]);
    assert.deepEqual(outcome.approvalRequired, [{ rule: 'iam-needs-review', address: 'terraform_data.iam_role' }]);
    assert.equal(outcome.approvalRequiredTotal, 1);
    assert.deepEqual(outcome.denied, []);
  });

  it('allows 5 deletes and denies 6 (maxDeletes: 5), counting replaces, deposed deletes and unknown actions', () => {
    assert.deepEqual(outcomeOf(policy, deletes(5)).denied, []);
    const six = outcomeOf(policy, deletes(6));
    assert.equal(six.deletes, 6);
    assert.deepEqual(six.denied, [
      {
        rule: MAX_DELETES_RULE,
        message:
          'the plan deletes 6 objects (deletes, replaces, deposed deletes and unknown actions) and the policy (policy/example.yaml) allows at most 5 in one run: apply the change in smaller steps, or raise limits.maxDeletes',
      },
    ]);
    const mixed = outcomeOf(policy, [
      ...deletes(3),
      changeView('r', 'replace'),
      changeView('d', 'delete', { deposed: '01' }),
      changeView('u', 'unknown'),
      changeView('f', 'forget'),
      changeView('c', 'create'),
      changeView('n', 'noop'),
      changeView('rd', 'read'),
    ]);
    assert.equal(mixed.deletes, 6);
    assert.equal(mixed.deniedTotal, 1);
  });

  it('allows a plan that touches nothing the rules name', () => {
    const outcome = outcomeOf(policy, [
      changeView('app', 'update'),
      changeView('web', 'create'),
      changeView('cache', 'delete'),
    ]);
    assert.deepEqual(outcome, {
      denied: [],
      deniedTotal: 0,
      approvalRequired: [],
      approvalRequiredTotal: 0,
      deletes: 1,
      timedOut: false,
      cost: outcome.cost,
      costExceeded: false,
    });
  });
});

describe('policy evaluation: fail closed', () => {
  // Each rule passes the compile check (the synthetic views never reach the failing part) and fails on real data.
  const failing = compiled(`${POLICY_HEADER}rules:
- name: divide
  match: change.name == "boom" && 1 / (size(change.actions) - 1) > 0
  effect: deny
  message: '"never shown"'
- name: missing-key
  match: 'change.name == "boom" && {"create": true}[change.kind]'
  effect: requireApproval
- name: bad-message
  match: change.name.startsWith("msg")
  effect: deny
  message: '"deleting " + change.replacePaths[0][0]'
`);

  it('a deny rule that errors denies, naming the rule and the error', () => {
    const outcome = outcomeOf(failing, [changeView('boom', 'delete')]);
    assert.deepEqual(outcome.denied, [
      {
        rule: 'divide',
        address: 'terraform_data.boom',
        message:
          'rule "divide" (policy/a.yaml) failed on this change (int divide by zero) and denies it: a deny rule that cannot be evaluated denies; fix the rule',
      },
    ]);
  });

  it('a requireApproval rule that errors (a missing map key) requires approval, saying why', () => {
    const outcome = outcomeOf(failing, [changeView('boom', 'delete')]);
    assert.equal(outcome.approvalRequired.length, 1);
    assert.equal(outcome.approvalRequired[0]!.rule, 'missing-key');
    assert.match(outcome.approvalRequired[0]!.error ?? '', /key|delete/i);
  });

  it('a message expression that errors still denies, with a fallback naming the rule', () => {
    const outcome = outcomeOf(failing, [
      changeView('msg1', 'update'),
      changeView('msg2', 'replace', { replacePaths: [['engine']] }),
    ]);
    assert.deepEqual(outcome.denied, [
      {
        rule: 'bad-message',
        address: 'terraform_data.msg1',
        message:
          'denied by policy rule "bad-message" (policy/a.yaml); its message expression failed: index 0 out of bounds [0, -1)',
      },
      { rule: 'bad-message', address: 'terraform_data.msg2', message: 'deleting engine' },
    ]);
  });

  it("a rule without a message denies in the runner's words; a long or multi-line message is made printable and kept whole (the sinks cut it, masked)", () => {
    const plain = oneRule('- name: freeze\n  match: "true"\n  effect: deny\n');
    assert.deepEqual(outcomeOf(plain, [changeView('x', 'create')]).denied, [
      { rule: 'freeze', address: 'terraform_data.x', message: 'denied by policy rule "freeze" (policy/a.yaml)' },
    ]);
    const long = oneRule(
      `- name: long\n  match: "true"\n  effect: deny\n  message: '"a\\nb\\tc" + change.address + "${'x'.repeat(2000)}"'\n`,
    );
    const [denial] = outcomeOf(long, [changeView('x', 'create')]).denied;
    assert.equal(denial!.message, `a b cterraform_data.x${'x'.repeat(2000)}`);
  });
});

describe('policy evaluation: the time limit', () => {
  /** A clock that moves `step` ms every time it is read. */
  const tickingClock = (step: number) => {
    let t = 0;
    return () => (t += step);
  };
  const mixed = () =>
    compiled(`${POLICY_HEADER}rules:
- name: d1
  match: change.kind == "delete"
  effect: deny
- name: a1
  match: change.kind == "update"
  effect: requireApproval
- name: p1
  on: plan
  match: "false"
  effect: deny
limits: {maxDeletes: 2}
`);

  it("running out is one finding of its own (the bound, the rule, the entry, the plan's size), fails closed, stops evaluating, and still counts deletes for the limit", () => {
    const evaluator = new PolicyEvaluator(mixed(), { timeLimitMs: 10, now: tickingClock(1) });
    for (let i = 0; i < 20; i++) evaluator.change(changeView(`c${i}`, i < 3 ? 'delete' : 'create'));
    const outcome = evaluator.plan(planView());
    assert.equal(outcome.timedOut, true);
    assert.equal(outcome.deletes, 3);
    const ranOut = outcome.denied.filter((d) => d.address === undefined);
    assert.deepEqual(
      ranOut.map((d) => d.rule),
      [PLAN_TIME_RULE, MAX_DELETES_RULE],
      'no rule is said to have denied: the bound is its own finding',
    );
    assert.match(
      ranOut[0]!.message,
      /^the policy evaluation ran out of its time limit \(10 ms of evaluation\) at rule "\w+" \(policy\/a\.yaml\) over change (\d+) of the plan's 20 resource changes and 0 provider actions, under 3 rules, having spent \d+ units: what came after was not judged \(change \1: terraform_data\.c\d+\); denied, as an evaluation that cannot finish denies: judge less at once/,
    );
    // Only the entries before the limit were evaluated (the clock moves 1 ms per reading: about 3 ms per change).
    assert.deepEqual(
      outcome.denied.filter((d) => d.address !== undefined).map((d) => d.address),
      ['terraform_data.c0', 'terraform_data.c1', 'terraform_data.c2'],
    );
    // a1 matched no update; the time limit adds no approval of its own where it denies
    assert.equal(outcome.approvalRequiredTotal, 0);
  });

  it('a requireApproval-only policy that runs out requires approval and denies nothing', () => {
    const policy = oneRule('- name: a\n  match: "false"\n  effect: requireApproval\n');
    const evaluator = new PolicyEvaluator(policy, { timeLimitMs: 5, now: tickingClock(2) });
    for (let i = 0; i < 10; i++) evaluator.change(changeView(`c${i}`, 'create'));
    const outcome = evaluator.plan(planView());
    assert.equal(outcome.timedOut, true);
    assert.deepEqual(outcome.denied, []);
    assert.equal(outcome.approvalRequired.length, 1);
    assert.equal(outcome.approvalRequired[0]!.rule, PLAN_TIME_RULE);
    assert.match(
      outcome.approvalRequired[0]!.error!,
      /^the policy evaluation ran out of its time limit \(5 ms of evaluation\) at rule "a"/,
    );
  });

  it("counts only evaluation time: time between calls (the stream's I/O) is not spent", () => {
    let t = 0;
    const now = () => t;
    const evaluator = new PolicyEvaluator(mixed(), { timeLimitMs: 10, now });
    for (let i = 0; i < 100; i++) {
      t += 1000; // a second of I/O before each change
      evaluator.change(changeView(`c${i}`, 'create'));
    }
    assert.equal(evaluator.plan(planView()).timedOut, false);
    assert.equal(DEFAULT_TIME_LIMIT_MS, 30_000);
  });

  it('reads the clock once a rule and once as an entry starts; each step yields that reading', () => {
    let reads = 0;
    const evaluator = new PolicyEvaluator(mixed(), { now: () => ++reads });
    const steps = evaluator.changeSteps(changeView('c', 'create'));
    assert.deepEqual([...steps], [2, 3], 'two rules: the reading as it starts (1), after d1 (2), after a1 (3)');
    for (let i = 0; i < 10; i++) evaluator.change(changeView(`c${i}`, i % 2 ? 'update' : 'create'));
    assert.equal(reads, 33, 'three readings a change of two rules, whatever the rules found');
  });

  it('a pause the caller reports as it resumes is not spent; time between steps it does not report is', () => {
    const run = (paused: boolean) => {
      let t = 0;
      const evaluator = new PolicyEvaluator(mixed(), { timeLimitMs: 10, now: () => t });
      for (let i = 0; i < 5; i++) {
        const steps = evaluator.changeSteps(changeView(`c${i}`, 'create'));
        for (let step = steps.next(); !step.done; step = steps.next(paused)) t += 1000; // the caller away between rules
      }
      return evaluator.plan(planView());
    };
    assert.equal(run(true).timedOut, false, 'told of each pause: none of it spent');
    const unreported = run(false);
    assert.equal(unreported.timedOut, true, 'not told: the time between the rules is evaluation time');
    assert.match(
      unreported.denied[0]!.message,
      /ran out of its time limit \(10 ms of evaluation\) at rule "d1" \(policy\/a\.yaml\) over change 2 of/,
    );
  });

  it('the time limit still stops a plan mid-way, at a rule of a change, with the clock read once a rule', () => {
    let t = 0;
    // each reading moves the clock 0.5 ms: each rule spends 0.5 ms, the reading as a change starts none of it (the
    // stream's time), so 1 ms a change of two rules, and the limit of 9 ms is passed after the tenth change's first rule
    const evaluator = new PolicyEvaluator(mixed(), { timeLimitMs: 9, now: () => (t += 0.5) });
    for (let i = 0; i < 20; i++) evaluator.change(changeView(`c${i}`, 'delete'));
    const outcome = evaluator.plan(planView());
    assert.equal(outcome.timedOut, true);
    assert.equal(evaluator.evaluations, 19, 'the rules before it, none after');
    assert.equal(outcome.deletes, 20, 'the deletes still counted for the limit');
    assert.match(
      outcome.denied.find((d) => d.rule === PLAN_TIME_RULE)!.message,
      /ran out of its time limit \(9 ms of evaluation\) at rule "a1" \(policy\/a\.yaml\) over change 10 of the plan's 20 resource changes/,
    );
  });
});

describe("policy evaluation: one change's bindings, shared by its rules", () => {
  it("no rule sees what another built from the change's lists (appends, joins, map and filter), nor a change what the one before it did", () => {
    const policy = oneRule(`- name: builds
  match: >-
    size(change.actions + ["delete"]) + size(change.types.map(t, t + "!")) + size(change.replacePaths.map(p, p + ["x"]))
    + size(change.names.filter(n, true)) + size(change.addresses.map(a, [a]).map(l, l + l)) == 0
  effect: requireApproval
- name: sees-the-change-as-it-is
  match: >-
    change.actions != ["update"] || change.types != ["terraform_data"] || change.replacePaths != [["input"]]
    || change.names != [change.name] || change.addresses != [change.address]
    || size(change.types.map(t, t)) != 1 || size(change.actions.filter(a, true)) != 1
  effect: deny
  message: '"the bindings changed: " + change.actions.join(",") + " " + change.names.join(",")'
`);
    const views = Array.from({ length: 3 }, (_, i) => changeView(`c${i}`, 'update', { replacePaths: [['input']] }));
    const outcome = outcomeOf(policy, views);
    assert.deepEqual(outcome.denied, []);
    assert.deepEqual(outcome.approvalRequired, []);
  });
});

describe('policy evaluation: effects, bounds, actions and plan rules', () => {
  it('effects "deny" (apply --plan-artifact) evaluates deny rules and limits only', () => {
    const policy = compiled({ file: 'policy/example.yaml', text: ISSUE_EXAMPLE });
    const outcome = outcomeOf(policy, [changeView('iam_x', 'update'), changeView('db', 'delete'), ...deletes(5)], {
      effects: 'deny',
    });
    assert.deepEqual(outcome.approvalRequired, []);
    assert.deepEqual(
      outcome.denied.map((d) => d.rule),
      ['protect-databases', MAX_DELETES_RULE],
    );
  });

  it('lists at most listLimit findings of each list; the totals count all', () => {
    const policy = compiled(
      `${POLICY_HEADER}rules:\n- name: d\n  match: "true"\n  effect: deny\n- name: a\n  match: "true"\n  effect: requireApproval\n`,
    );
    const outcome = outcomeOf(policy, deletes(7), { listLimit: 3 });
    assert.equal(outcome.denied.length, 3);
    assert.equal(outcome.deniedTotal, 7);
    assert.equal(outcome.approvalRequired.length, 3);
    assert.equal(outcome.approvalRequiredTotal, 7);
  });

  it('action rules see each action; plan rules see the plan once', () => {
    const policy = compiled(`${POLICY_HEADER}rules:
- name: no-destroy-actions
  on: action
  match: action.trigger in ["BeforeDestroy", "AfterDestroy"]
  effect: deny
  message: '"action " + action.address + " runs on destroy"'
- name: any-action
  on: action
  match: "true"
  effect: requireApproval
- name: tofu-deletes
  on: plan
  match: plan.tool == "opentofu" && plan.counts.delete > 0
  effect: requireApproval
`);
    const evaluator = new PolicyEvaluator(policy);
    evaluator.action(actionView('action.aws_lambda_invoke.a'));
    evaluator.action(
      actionView('action.aws_lambda_invoke.b', { trigger: 'BeforeDestroy', triggeringResource: 'aws_instance.web' }),
    );
    const outcome = evaluator.plan(planView({ tool: 'opentofu', counts: { ...planView().counts, delete: 1 } }));
    assert.deepEqual(outcome.denied, [
      {
        rule: 'no-destroy-actions',
        address: 'action.aws_lambda_invoke.b',
        message: 'action action.aws_lambda_invoke.b runs on destroy',
      },
    ]);
    assert.deepEqual(outcome.approvalRequired, [
      { rule: 'any-action', address: 'action.aws_lambda_invoke.a' },
      { rule: 'any-action', address: 'action.aws_lambda_invoke.b' },
      { rule: 'tofu-deletes' },
    ]);
  });

  it('one evaluator evaluates one plan: nothing is taken after plan()', () => {
    const evaluator = new PolicyEvaluator(compiled(ISSUE_EXAMPLE));
    evaluator.plan(planView());
    assert.throws(() => evaluator.change(changeView('x', 'delete')), /one evaluator evaluates one plan/);
    assert.throws(() => evaluator.plan(planView()), /one evaluator evaluates one plan/);
  });

  it('maxDeletes: 0 denies any delete; the smallest limit of several files applies', () => {
    const zero = compiled(`${POLICY_HEADER}limits: {maxDeletes: 0}\n`);
    assert.equal(outcomeOf(zero, [changeView('x', 'create')]).deniedTotal, 0);
    assert.equal(outcomeOf(zero, [changeView('x', 'replace')]).deniedTotal, 1);
    const two = compiled(`${POLICY_HEADER}limits: {maxDeletes: 9}\n`, `${POLICY_HEADER}limits: {maxDeletes: 2}\n`);
    assert.match(outcomeOf(two, deletes(3)).denied[0]!.message, /policy \(policy\/b\.yaml\) allows at most 2/);
  });
});
