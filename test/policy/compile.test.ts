import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compilePolicy, MAX_RULES } from '../../src/policy/compile.ts';
import type { PolicyProblem } from '../../src/policy/problems.ts';
import { PolicyEvaluator } from '../../src/policy/evaluate.ts';
import { changeView, compiled, planView, POLICY_HEADER } from './policies.support.ts';

/** The problems of one rule in policy/p.yaml, as `rule|message`. */
function problemsOfRule(lines: string, name = 'r'): string[] {
  return problemsOf(`${POLICY_HEADER}rules:\n- name: ${name}\n${lines}`).map((p) => {
    assert.equal(p.file, 'policy/p.yaml');
    return `${p.rule}|${p.message}`;
  });
}

function problemsOf(text: string): PolicyProblem[] {
  const result = compilePolicy([{ file: 'policy/p.yaml', text }]);
  assert.ok(!result.ok, 'expected the policy to be refused');
  return result.problems;
}

const deny = (match: string) => `  match: ${JSON.stringify(match)}\n  effect: deny\n`;
const onPlan = (match: string) => `  on: plan\n${deny(match)}`;
const onAction = (match: string) => `  on: action\n${deny(match)}`;

describe('policy compile: names a rule reads', () => {
  it('refuses a field a view does not have, even where evaluation would never reach it', () => {
    // CEL's `false && x` is false even when x is an error: only the name check sees this typo.
    assert.deepEqual(problemsOfRule(deny('change.kind == "nope" && change.nmae == "db"')), [
      'r|match: change has no field "nmae" (its fields: address, module, mode, type, name, provider, kind, actions, reason, replacePaths, deposed, previousAddress, previousModule, previousType, previousName, addresses, modules, types, names, moved, imported)',
    ]);
    assert.match(problemsOfRule(deny('change["kindd"] == "delete"')).join(), /change has no field "kindd"/);
    assert.match(
      problemsOfRule(onPlan('plan.counts.deletes > 1')).join(),
      /plan\.counts has no field "deletes" \(its fields: create, update, delete, replace, read, noop, forget, import, move, unknown\)/,
    );
    assert.match(
      problemsOfRule(onAction('action.on_failure == "halt"')).join(),
      /action has no field "on_failure" \(its fields: address, type, provider, trigger, triggeringResource, onFailure, deferred\)/,
    );
    assert.match(problemsOfRule(deny('change.before.size() > 0')).join(), /change has no field "before"/);
  });

  it("refuses names other than the scope's variable, saying which rules see them", () => {
    assert.deepEqual(problemsOfRule(deny('plan.counts.delete > 1')), [
      'r|match: unknown name "plan": an "on: change" rule sees only "change" ("plan" is seen by "on: plan" rules)',
    ]);
    assert.match(
      problemsOfRule(onPlan('change.kind == "delete"')).join(),
      /an "on: plan" rule sees only "plan" \("change" is seen by "on: change" rules\)/,
    );
    assert.match(problemsOfRule(deny('chnage.kind == "delete" || true')).join(), /unknown name "chnage"/);
    assert.match(problemsOfRule(deny('request.user == "x"')).join(), /unknown name "request"/);
  });

  it('refuses has() on a view field: it is always present and has() is always true', () => {
    assert.deepEqual(problemsOfRule(deny('has(change.deposed)')), [
      'r|match: has(change.deposed) is always true: every field is always present ("", [] or false when terraform gives none); compare the value instead, e.g. change.deposed != ""',
    ]);
  });

  it('accepts comprehension variables, shadowing and type names', () => {
    compiled(`${POLICY_HEADER}rules:
- name: shadow
  match: change.actions.exists(change, change == "delete") && change.actions.all(a, a != "teleport")
  effect: deny
- name: types
  match: type(change.moved) == bool && type(change.actions) == list && [1, 2].map(x, x * 2)[0] == 2
  effect: requireApproval
- name: paths
  match: change.replacePaths.exists(p, p.size() > 0 && p[0] == "engine")
  effect: deny
- name: counts
  on: plan
  match: plan.counts.delete + plan.counts.replace > 3 && plan.tool == "terraform"
  effect: deny
`);
  });

  it("accepts the strings extension's namespaced strings.quote (policy.md §3), and refuses a namespaced name it lacks", () => {
    const policy = compiled(`${POLICY_HEADER}rules:
- name: quoted
  match: 'strings.quote(change.name) == "\\"db\\""'
  effect: deny
  message: '"refused: " + strings.quote(change.address)'
`);
    const evaluator = new PolicyEvaluator(policy);
    evaluator.change(changeView('db', 'delete'));
    evaluator.change(changeView('web', 'delete'));
    const outcome = evaluator.plan(planView());
    assert.deepEqual(
      outcome.denied.map((d) => `${d.address}: ${d.message}`),
      ['terraform_data.db: refused: "terraform_data.db"'],
    );
    assert.deepEqual(problemsOfRule(deny('strings.unquote(change.name) == "db"')), [
      'r|match: unknown name "strings": an "on: change" rule sees only "change"',
    ]);
  });

  it('names the parse error with its line and column', () => {
    assert.deepEqual(problemsOfRule(deny('change.kind == ')), [
      'r|match: does not parse: line 1, column 15: the expression ends after "==": something must follow it\n | change.kind ==\n | ..............^',
    ]);
    assert.deepEqual(problemsOfRule(deny('change.actions.exists(a, a == "delete"')), [
      'r|match: does not parse: line 1, column 39: missing ")" to close the "(" at column 22\n | change.actions.exists(a, a == "delete"\n | ......................................^',
    ]);
    assert.match(problemsOfRule(`${deny('true')}  message: '"unterminated'\n`).join(), /^r\|message: does not parse: /);
  });
});

describe('policy compile: evaluation over the synthetic views (no type checker)', () => {
  it('refuses a rule that fails on some kind of change, naming the view and the effect at run time', () => {
    assert.deepEqual(problemsOfRule(deny('change.replacePaths[0][0] == "engine"')), [
      'r|match fails on a create change at the root with no optional field (module, reason, replacePaths, deposed, previousAddress empty): index 0 out of bounds [0, -1); at run time that denies. Guard the part that can fail (e.g. size(list) > 0 && list[0] …, or divisor != 0 && …)',
    ]);
    assert.match(
      problemsOfRule('  match: int(change.name) > 0\n  effect: requireApproval\n').join(),
      /match fails on .*; at run time that requires approval/,
    );
    assert.match(
      problemsOfRule(onPlan('plan.counts.delete / plan.counts.create > 1')).join(),
      /match fails on a terraform plan with no changes and an unknown version: int divide by zero/,
    );
    assert.match(
      problemsOfRule(onAction('action.triggeringResource.split(".")[1] == "web"')).join(),
      /match fails on an action triggered by invoke with no triggering resource/,
    );
  });

  it('refuses a match that is not a bool and a message that is not a string', () => {
    assert.match(problemsOfRule(deny('change.address')).join(), /^r\|match gives a string on .*, not a bool$/);
    assert.match(problemsOfRule(onPlan('plan.counts.delete')).join(), /^r\|match gives an int on .*, not a bool$/);
    assert.match(
      problemsOfRule(`${deny('true')}  message: change.actions\n`).join(),
      /^r\|message gives a list\(dyn\) on .*, not a string$/,
    );
    assert.match(
      problemsOfRule(`${deny('true')}  message: 1 / 0\n`).join(),
      /^r\|message fails on .*int divide by zero/,
    );
  });

  it('checks a message only where the rule matches: a message guarded by the match compiles', () => {
    compiled(`${POLICY_HEADER}rules:
- name: engine
  match: change.kind == "replace" && size(change.replacePaths) > 0
  effect: deny
  message: '"replacing " + change.address + " because of " + change.replacePaths[0][0]'
`);
    assert.match(
      problemsOfRule(
        `${deny('change.kind == "replace"')}  message: '"because of " + change.replacePaths[0][0]'\n`,
      ).join(),
      /^r\|message fails on a replace change at the root .*at run time that denies with the runner's words instead/,
    );
  });

  it('refuses a rule name used twice, in one file or across files, naming the first file', () => {
    const rule = (name: string) => `- name: ${name}\n  match: "true"\n  effect: deny\n`;
    const result = compilePolicy([
      { file: 'policy/a.yaml', text: `${POLICY_HEADER}rules:\n${rule('x')}${rule('y')}` },
      { file: 'policy/b.yaml', text: `${POLICY_HEADER}rules:\n${rule('x')}${rule('y')}${rule('y')}` },
    ]);
    assert.ok(!result.ok);
    assert.deepEqual(
      result.problems.map((p) => `${p.file} ${p.rule}: ${p.message}`),
      [
        'policy/b.yaml x: the name is already used in policy/a.yaml: rule names are unique across the policy dir (results name rules only)',
        'policy/b.yaml y: the name is already used in policy/a.yaml: rule names are unique across the policy dir (results name rules only)',
        'policy/b.yaml y: the name is already used in policy/a.yaml: rule names are unique across the policy dir (results name rules only)',
      ],
    );
  });

  it('refuses more rules than a plan can be evaluated against, before compiling any', () => {
    // Rules that would each be refused if compiled: the count alone is the problem.
    const rules = Array.from(
      { length: MAX_RULES + 1 },
      (_, i) => `- name: r${i}\n  match: change.nope\n  effect: deny\n`,
    ).join('');
    assert.deepEqual(problemsOf(`${POLICY_HEADER}rules:\n${rules}`), [
      {
        file: 'policy/p.yaml',
        message: 'the policy dir holds more than 500 rules with this file; fewer, broader rules evaluate faster',
      },
    ]);
  });

  it('collects the problems of every file, and compiles nothing when any file is broken', () => {
    const result = compilePolicy([
      { file: 'policy/a.yaml', text: '{' },
      {
        file: 'policy/b.yaml',
        text: `${POLICY_HEADER}rules:\n- name: ok\n  match: "true"\n  effect: deny\n- name: bad\n  match: change.x\n  effect: deny\n`,
      },
    ]);
    assert.ok(!result.ok);
    assert.deepEqual(
      result.problems.map((p) => [p.file, p.rule]),
      [
        ['policy/a.yaml', undefined],
        ['policy/b.yaml', 'bad'],
      ],
    );
  });
});

describe('policy compile: a rule a rename walks past', () => {
  const warningsOf = (match: string, on = 'change') =>
    compiled(`${POLICY_HEADER}rules:\n- name: r\n  on: ${on}\n  match: ${JSON.stringify(match)}\n  effect: deny\n`)
      .warnings;

  it('warns about a change rule that tests a name or address and never where the change was, naming the file, the rule and the fix', () => {
    assert.deepEqual(warningsOf('change.type == "terraform_data" && change.name.startsWith("db")'), [
      {
        file: 'policy/a.yaml',
        rule: 'r',
        message:
          'match tests change.name, change.type and never where the change was before a move: a module author\'s moved block renames the object past this rule. Test every name it goes by instead (change.names, change.types, e.g. change.names.exists(n, n.startsWith("db")))',
      },
    ]);
    assert.equal(warningsOf('change["address"].startsWith("module.db")').length, 1);
  });

  it('is silent when the rule reads where the change was, or what it goes by, or only what a move keeps', () => {
    for (const match of [
      'change.names.exists(n, n.startsWith("db"))',
      'change.name.startsWith("db") || change.previousName.startsWith("db")',
      'change.address.startsWith("terraform_data.db") || change.moved',
      'change.kind == "delete"',
      '[change].exists(change, change == "x")',
    ])
      assert.deepEqual(warningsOf(match), [], match);
    assert.deepEqual(warningsOf('action.address.startsWith("action.x")', 'action'), []);
  });
});
