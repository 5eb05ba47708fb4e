import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { changeBinding, compileExpression } from '../../src/policy/cel.ts';
import { compilePolicy } from '../../src/policy/compile.ts';
import {
  CostMeter,
  MAX_BUILT_LIST_ELEMENTS,
  MAX_BUILT_STRING_CHARS,
  PLAN_COST_LIMIT,
  RULE_COST_LIMIT,
} from '../../src/policy/cost.ts';
import { ESTIMATE_ADDRESS_CHARS, ESTIMATE_STRING_CHARS, estimateCost } from '../../src/policy/estimate.ts';
import { PLAN_COST_RULE, PLAN_TIME_RULE, PolicyEvaluator } from '../../src/policy/evaluate.ts';
import { compilePattern, instructionBound, MAX_REGEX_INSTRUCTIONS } from '../../src/policy/regex.ts';
import type { PolicyChangeView } from '../../src/plan/policy-views.ts';
import { changeView, oneRule, planView, POLICY_HEADER } from './policies.support.ts';

/** A change whose for_each key is `length` characters long. */
const keyed = (length: number, extra: Partial<PolicyChangeView> = {}) =>
  changeView('x', 'create', { address: `terraform_data.x["${'k'.repeat(length)}"]`, ...extra });

function program(source: string) {
  const compiled = compileExpression(source, 'change');
  assert.ok('program' in compiled, String('problems' in compiled && compiled.problems));
  return compiled;
}

/** What `source` spends over `view` with a budget of `limit`. */
function spend(source: string, view: PolicyChangeView, limit = RULE_COST_LIMIT) {
  const meter = new CostMeter(limit, 'rule');
  const value = program(source).program(changeBinding(view), meter);
  return { value, spent: meter.spent, exhausted: meter.exhausted };
}

const estimate = (source: string) => estimateCost(program(source).expr, 'change');

// The rules of the issue: cubic in the length of an address, and a list built from a key.
const CUBIC =
  'change.address.split("").exists(a, change.address.split("").exists(b, change.address.indexOf(a + b + "#") >= 0))';
const LIST_OF_LISTS = 'change.address.split("").map(c, change.address.split("")).size() > 0';
/** Quadratic in the name: under the estimate's limit (names of 256 characters), over the runtime budget with 6,000. */
const QUADRATIC = 'change.name.split("").exists(c, change.address.contains(c + "#"))';
const named_ = (length: number) => changeView('n'.repeat(length), 'create');

describe('policy cost: the estimate made when a policy is compiled', () => {
  it("refuses the issue's cubic rule and its list-building rule, naming the rule, the estimate and the budget", () => {
    for (const [name, match] of [
      ['cubic', CUBIC],
      ['lists', LIST_OF_LISTS],
    ]) {
      const result = compilePolicy([
        {
          file: 'policy/p.yaml',
          text: `${POLICY_HEADER}rules:\n- name: ${name}\n  match: ${JSON.stringify(match)}\n  effect: deny\n`,
        },
      ]);
      assert.ok(!result.ok);
      assert.equal(result.problems.length, 1);
      assert.equal(result.problems[0]!.rule, name);
      assert.match(
        result.problems[0]!.message,
        new RegExp(
          `^match: its worst case costs [0-9,]+ units, over the 1,000,000 one rule may spend on one change \\(estimated with addresses of ${ESTIMATE_ADDRESS_CHARS} characters and other strings of ${ESTIMATE_STRING_CHARS}\\)`,
        ),
      );
    }
  });

  it('refuses a message expression over the budget too', () => {
    const result = compilePolicy([
      {
        file: 'policy/p.yaml',
        text: `${POLICY_HEADER}rules:\n- name: m\n  match: "true"\n  effect: deny\n  message: ${JSON.stringify(`string(${LIST_OF_LISTS})`)}\n`,
      },
    ]);
    assert.ok(!result.ok);
    assert.match(result.problems[0]!.message, /^message: its worst case costs/);
  });

  it("keeps ordinary rules far below the budget: the contract's examples cost tens to thousands of units", () => {
    assert.ok(
      estimate('change.names.exists(n, n.startsWith("db")) && change.kind in ["delete", "replace", "unknown"]') < 1000,
    );
    assert.ok(estimate('change.address.split("/").exists(p, p.startsWith("db"))') < 20_000);
    assert.ok(estimate('change.address.split(".").map(p, p + "!").size() > 2') < RULE_COST_LIMIT);
    assert.ok(estimate('change.replacePaths.exists(p, p.exists(s, s == "engine"))') < 20_000);
  });

  it('bounds what the meter counts: a rule over a view of the assumed sizes spends no more than its estimate', () => {
    const largest = changeView('n'.repeat(ESTIMATE_STRING_CHARS), 'replace', {
      address: `module.m["${'a'.repeat(ESTIMATE_ADDRESS_CHARS - 40)}"].terraform_data.x`,
      type: 't'.repeat(ESTIMATE_STRING_CHARS),
      replacePaths: Array.from({ length: 64 }, () =>
        Array.from({ length: 16 }, () => 'p'.repeat(ESTIMATE_STRING_CHARS)),
      ),
    });
    for (const source of [
      'change.address.split("").map(c, c + c).size() > 0',
      'change.address.split("").filter(c, c == "a").size() > 3',
      'change.replacePaths.exists(p, p.exists(s, s == "engine"))',
      'change.address.contains(change.name) || change.address.matches("^module[.]db.*x$")',
      '[change.address, change.type].join("/").size() > 10 && change.address.replace("a", "bb").size() > 0',
      '"%s is %s".format([change.address, change.kind]).size() > 0',
    ]) {
      const { spent, exhausted } = spend(source, largest);
      assert.equal(exhausted, undefined, source);
      assert.ok(spent <= estimate(source), `${source}: spent ${spent}, estimated ${estimate(source)}`);
    }
  });
});

describe('policy cost: the meter at run time', () => {
  it('stops a rule at its budget, whatever the machine: the count is the same at every run', () => {
    assert.ok(estimate(QUADRATIC) <= RULE_COST_LIMIT);
    const small = spend(QUADRATIC, named_(400));
    assert.equal(small.exhausted, undefined);
    const large = spend(QUADRATIC, named_(6000));
    assert.deepEqual(large.exhausted, { kind: 'rule', limit: RULE_COST_LIMIT });
    assert.equal(spend(QUADRATIC, named_(6000)).spent, large.spent);
  });

  it("a stop cannot be swallowed: CEL's `||` and `all` absorb an error, never the meter's word", () => {
    for (const source of [`!(${CUBIC} || true)`, `[1, 2].all(i, ${CUBIC} || true) == false`]) {
      const { exhausted } = spend(source, keyed(3000), 50_000);
      assert.deepEqual(exhausted, { kind: 'rule', limit: 50_000 });
    }
  });

  it('bounds the strings and lists a rule builds, before the call that would build them', () => {
    const built = (source: string) => spend(source, keyed(2000), 100 * RULE_COST_LIMIT).exhausted;
    const length = keyed(2000).address.length;
    assert.deepEqual(built('change.address.replace("", change.address).size() > 0'), {
      kind: 'size',
      what: `replace could build a string of ${length + (length + 1) * length} characters (a rule builds at most ${MAX_BUILT_STRING_CHARS})`,
    });
    assert.deepEqual(
      built(
        '(change.address + change.address + change.address + change.address + change.address).split("").size() > 0',
      ),
      {
        kind: 'size',
        what: `split could build a list of ${5 * length + 1} elements (a rule builds at most ${MAX_BUILT_LIST_ELEMENTS})`,
      },
    );
    assert.equal(built('change.address.split("").size() > 0'), undefined);
    assert.deepEqual(
      spend(
        '(change.address + change.address).split("").size() > 0',
        keyed(MAX_BUILT_LIST_ELEMENTS),
        100 * RULE_COST_LIMIT,
      ).exhausted,
      {
        kind: 'size',
        what: `split could build a list of ${2 * (MAX_BUILT_LIST_ELEMENTS + 20) + 1} elements (a rule builds at most ${MAX_BUILT_LIST_ELEMENTS})`,
      },
    );
  });

  it('map and filter append in place, and their results stay values: nothing built is changed afterwards, an empty list stays empty', () => {
    for (const source of [
      '[1, 2].map(x, x * 10) == [10, 20] && [].map(x, x) == [] && [].size() == 0',
      '[[1, 2].map(x, x)].map(l, l.map(y, y + 1) + l) == [[2, 3, 1, 2]]',
      '[1, 2, 3].filter(x, x > 1).map(x, [x].map(y, y)) == [[2], [3]] && [1, 2, 3].map(x, x > 1, x) == [2, 3]',
      'change.actions.map(a, a).size() == 1 && change.actions.map(a, a).size() == 1',
    ]) {
      const { value, exhausted } = spend(source, keyed(3));
      assert.equal(exhausted, undefined, source);
      assert.equal(value, true, source);
    }
    // Linear as charged: a map over 9,000 characters spends ≈ 14 units a step, not a copy of all before it.
    const { spent } = spend('change.address.split("").map(c, c + "x").size() > 0', keyed(9000));
    assert.ok(spent < 20 * 9020, `spent ${spent}`);
  });

  it('joins lists into one list: a map over 2,000 characters reads each element once, not through a chain', () => {
    const { value, exhausted } = spend('change.address.split("").map(c, c + c)[2017] == "kk"', keyed(2000));
    assert.equal(exhausted, undefined);
    assert.equal(value, true);
  });
});

describe('policy cost: regular expressions, charged by their compiled program', () => {
  /** The rule of the issue: six characters of pattern, about 1,000 instructions, once at 30 s for 107,539 units. */
  const SLOW = 'change.names.exists(n, n.matches(".{1000}"))';

  it("refuses the issue's slow rule when the policy is compiled: `.{1000}` is charged as the 1,000 instructions it compiles to", () => {
    const result = compilePolicy([
      {
        file: 'policy/p.yaml',
        text: `${POLICY_HEADER}rules:\n- name: slow\n  match: ${JSON.stringify(SLOW)}\n  effect: deny\n`,
      },
    ]);
    assert.ok(!result.ok);
    assert.match(result.problems[0]!.message, /^match: its worst case costs [0-9,]+ units, over the 1,000,000/);
    // a short pattern stays cheap
    assert.ok(estimate('change.names.exists(n, n.matches("^db-[a-z0-9]+$"))') < 100_000);
  });

  it('charges a pattern that comes from the plan as the largest program: refused over a long string, bounded over a short one', () => {
    const refused = compilePolicy([
      {
        file: 'policy/p.yaml',
        text: `${POLICY_HEADER}rules:\n- name: supplied\n  match: ${JSON.stringify('change.address.matches(change.name)')}\n  effect: deny\n`,
      },
    ]);
    assert.ok(!refused.ok);
    assert.match(refused.problems[0]!.message, /its worst case costs/);
    assert.ok(estimate('"db".matches(change.name)') <= RULE_COST_LIMIT);
    assert.ok(estimate('"db".matches(change.name)') >= MAX_REGEX_INSTRUCTIONS * 100);
  });

  it('never compiles a pattern over the bound: refused from its text, before RE2 builds it (the issue measured 828 MB for one)', () => {
    for (const pattern of ['(.{1000}){1000}', '((a{100}){100}){100}', '(x{1000}|y{1000}){1000}']) {
      assert.ok(instructionBound(pattern) > MAX_REGEX_INSTRUCTIONS, pattern);
      const rss = process.memoryUsage().rss;
      const compiled = compilePattern(pattern);
      assert.ok('refused' in compiled && compiled.size, pattern);
      assert.ok(process.memoryUsage().rss - rss < 50e6, 'nothing large was built');
    }
    // at run time, such a pattern stops the rule (size): a rule that fails closed, never a call that runs
    const meter = new CostMeter(100 * RULE_COST_LIMIT, 'rule');
    const value = program('change.address.matches(change.name)').program(
      changeBinding(changeView('x', 'create', { name: '(.{1000}){1000}' })),
      meter,
    );
    assert.ok(value !== true && value !== false);
    assert.equal(meter.exhausted?.kind, 'size');
  });

  it("the text's bound is never below what RE2 compiles, and a call is charged by the compiled program", () => {
    for (const pattern of [
      '.{1000}',
      '^db-[0-9]+$',
      '(a|b)*c',
      '(?i)db',
      '[a-z]{3,5}',
      '(ab){10}',
      'x{2,}',
      '\\pL+',
      '(a{10}){10}',
      '((a|bc|d)e{3}|f)+',
      '[]a]{9}',
      '\\Qa.b\\E{4}',
      '(?:x{5}){4}',
      '.{0,1000}',
      '(?P<n>a{2,7})+',
    ]) {
      const compiled = compilePattern(pattern);
      assert.ok('instructions' in compiled, pattern);
      assert.ok(instructionBound(pattern) >= compiled.instructions, `${pattern}: ${compiled.instructions}`);
    }
    const long = spend('change.address.matches(".{300}")', keyed(1000));
    const short = spend('change.address.matches(".{5}")', keyed(1000));
    assert.equal(long.value, true);
    assert.ok(long.spent > 20 * short.spent, `${long.spent} vs ${short.spent}`);
  });
});

describe('policy cost: what a rule over budget means (fail closed)', () => {
  const quadratic = QUADRATIC;
  const long = named_(6000);
  /** Findings with the long address named by its length: a failure prints them. */
  const shown = <T extends { address?: string }>(findings: T[]) =>
    findings.map((f) => ({ ...f, address: f.address === long.address ? 'the long one' : f.address }));

  it('a deny rule over its budget denies that change, naming the rule, the change and the budget', () => {
    const evaluator = new PolicyEvaluator(
      oneRule(`- name: slow\n  match: ${JSON.stringify(quadratic)}\n  effect: deny\n`),
    );
    evaluator.change(long);
    evaluator.change(named_(10));
    const outcome = evaluator.plan(planView());
    assert.deepEqual(shown(outcome.denied), [
      {
        rule: 'slow',
        address: 'the long one',
        message: `rule "slow" (policy/a.yaml) failed on this change (it ran over its cost budget of ${RULE_COST_LIMIT} units on this change) and denies it: a deny rule that cannot be evaluated denies; fix the rule`,
      },
    ]);
    assert.equal(outcome.costExceeded, false);
    assert.ok(outcome.cost > RULE_COST_LIMIT);
  });

  it('a requireApproval rule over its budget requires approval, with the reason', () => {
    const evaluator = new PolicyEvaluator(
      oneRule(`- name: slow\n  match: ${JSON.stringify(quadratic)}\n  effect: requireApproval\n`),
    );
    evaluator.change(long);
    assert.deepEqual(shown(evaluator.plan(planView()).approvalRequired), [
      {
        rule: 'slow',
        address: 'the long one',
        error: `it ran over its cost budget of ${RULE_COST_LIMIT} units on this change`,
      },
    ]);
  });

  it("a message over its budget still denies, in the runner's words", () => {
    const evaluator = new PolicyEvaluator(
      oneRule(
        `- name: m\n  match: "true"\n  effect: deny\n  message: ${JSON.stringify(`${quadratic} ? "yes" : "no"`)}\n`,
      ),
    );
    evaluator.change(long);
    assert.equal(
      evaluator.plan(planView()).denied[0]!.message,
      `denied by policy rule "m" (policy/a.yaml); its message expression failed: it ran over its cost budget of ${RULE_COST_LIMIT} units on this change`,
    );
  });

  it("the plan's budget: once spent, nothing more is evaluated and one finding of its own says so (the rule, the units, the plan's size); deletes still count", () => {
    const policy = oneRule(
      '- name: d\n  match: change.address.split("").exists(c, c == "#")\n  effect: deny\n- name: a\n  match: change.kind == "update"\n  effect: requireApproval\n',
    );
    const evaluator = new PolicyEvaluator(policy, { planCostLimit: 50_000 });
    for (let i = 0; i < 40; i++) evaluator.change(keyed(2000, { kind: i < 3 ? 'delete' : 'create' }));
    const outcome = evaluator.plan(planView());
    assert.equal(outcome.costExceeded, true);
    assert.equal(outcome.timedOut, false);
    assert.equal(outcome.deletes, 3);
    assert.deepEqual(outcome.denied, [
      {
        rule: PLAN_COST_RULE,
        message: `the policy evaluation ran out of the plan's cost budget (50,000 units) at rule "d" (policy/a.yaml) over change 2 of the plan's 40 resource changes and 0 provider actions, under 2 rules, having spent 50,000 units: what came after was not judged (change 2: ${keyed(2000).address.slice(0, 199)}…); denied, as an evaluation that cannot finish denies: judge less at once: fewer or cheaper rules, or the change in smaller plans (contract/sections/policy.md §5 says what rules cost)`,
      },
    ]);
    assert.deepEqual(
      outcome.approvalRequired,
      [],
      'no rule is said to require approval for it: the denial fails closed',
    );
    assert.ok(outcome.cost <= 50_000);
    assert.equal(PLAN_COST_LIMIT, 50_000_000);
  });

  it("the contract's example rules cost 54 units a rule and change: 10,000 harmless changes under 92 of them spend the plan's budget (policy.md §5)", () => {
    const copies = (n: number) =>
      compilePolicy([
        {
          file: 'policy/examples.yaml',
          text: `${POLICY_HEADER}rules:\n${Array.from(
            { length: n },
            (_, i) => `- name: protect-databases-${i}
  match: >-
    change.types.exists(t, t in ["aws_db_instance", "aws_rds_cluster", "google_sql_database_instance"])
    && change.kind in ["delete", "replace", "unknown"]
  effect: deny
- name: iam-needs-review-${i}
  match: >-
    change.types.exists(t, t.startsWith("aws_iam_") || t.startsWith("google_project_iam_")
      || t.startsWith("google_service_account"))
    && !(change.kind in ["read", "noop"])
  effect: requireApproval
`,
          ).join('')}`,
        },
      ]);
    const compiled = copies(1);
    assert.ok(compiled.ok);
    const evaluator = new PolicyEvaluator(compiled.policy);
    for (let i = 0; i < 100; i++)
      evaluator.change(changeView('web', 'create', { address: `terraform_data.web["${i}"]` }));
    // 2 rules over 100 changes: 54 units a rule and change, the same on every machine
    assert.equal(evaluator.plan(planView()).cost, 2 * 100 * 54);
    assert.ok(92 * 10_000 * 54 <= PLAN_COST_LIMIT && 93 * 10_000 * 54 > PLAN_COST_LIMIT);
  });

  it('the wall-time limit stays the last resort, now inside an evaluation too, and is reported as timedOut', () => {
    let t = 0;
    const evaluator = new PolicyEvaluator(
      oneRule(`- name: slow\n  match: ${JSON.stringify(quadratic)}\n  effect: deny\n`),
      { timeLimitMs: 5, now: () => (t += 1) },
    );
    evaluator.change(long);
    const outcome = evaluator.plan(planView());
    assert.equal(outcome.timedOut, true);
    assert.equal(outcome.costExceeded, false);
    assert.equal(outcome.denied[0]!.rule, PLAN_TIME_RULE);
    assert.match(outcome.denied[0]!.message, /ran out of its time limit \(5 ms of evaluation\) at rule "slow"/);
  });
});
