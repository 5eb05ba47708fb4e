import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicyText } from '../../src/policy/compile.ts';
import { MAX_EXPRESSION_CHARS, PolicyFile } from '../../src/policy/schema.ts';
import { ISSUE_EXAMPLE, POLICY_HEADER } from './policies.support.ts';

/** The problems of one file's text, as messages. */
function problemsOf(text: string, file = 'policy/p.yaml'): string[] {
  const parsed = parsePolicyText(file, text);
  assert.ok('problems' in parsed, `expected a problem with ${JSON.stringify(text)}`);
  for (const problem of parsed.problems) assert.equal(problem.file, file);
  return parsed.problems.map((problem) => `${problem.rule ?? ''}|${problem.message}`);
}

const rule = (lines: string) => `${POLICY_HEADER}rules:\n- name: r\n${lines}`;

describe('policy schema', () => {
  it('reads the issue example as written: on defaults to change, the limit is a number', () => {
    const parsed = parsePolicyText('policy/example.yaml', ISSUE_EXAMPLE);
    assert.ok('policy' in parsed, JSON.stringify(parsed));
    assert.deepEqual(parsed.policy, {
      apiVersion: 'policy.captf.io/v1',
      rules: [
        {
          name: 'protect-databases',
          on: 'change',
          match:
            '"terraform_data" in change.types && change.names.exists(n, n.startsWith("db")) && change.kind in ["delete", "replace", "unknown"]',
          effect: 'deny',
          message: '"databases are never deleted by the runner: " + change.address',
        },
        {
          name: 'iam-needs-review',
          on: 'change',
          match: 'change.kind == "update" && change.addresses.exists(a, a.startsWith("terraform_data.iam"))',
          effect: 'requireApproval',
        },
      ],
      limits: { maxDeletes: 5 },
    });
  });

  it('reads the same policy from JSON', () => {
    const json = JSON.stringify({
      apiVersion: 'policy.captf.io/v1',
      rules: [{ name: 'r', on: 'plan', match: 'plan.counts.delete > 0', effect: 'requireApproval' }],
    });
    const parsed = parsePolicyText('policy/p.json', json);
    assert.ok('policy' in parsed, JSON.stringify(parsed));
    assert.equal(parsed.policy.rules[0]!.on, 'plan');
  });

  it('refuses a typo in any key, naming the key and the rule: a typo must never disable a rule', () => {
    assert.deepEqual(problemsOf(rule('  match: "true"\n  effect: deny\n  messsage: \'"x"\'\n')), [
      'r|rules[0]: Unrecognized key: "messsage"',
    ]);
    assert.deepEqual(problemsOf(rule('  mach: "true"\n  effect: deny\n')), [
      'r|rules[0].match: Invalid input: expected string, received undefined',
      'r|rules[0]: Unrecognized key: "mach"',
    ]);
    assert.match(
      problemsOf(`${POLICY_HEADER}limits:\n  maxDelete: 5\n`).join(),
      /limits.*Unrecognized key: "maxDelete"/,
    );
    assert.match(problemsOf(`${POLICY_HEADER}rule:\n- name: r\n`).join(), /Unrecognized key: "rule"/);
    assert.match(
      problemsOf(`${POLICY_HEADER}kind: Policy\nlimits: {maxDeletes: 1}\n`).join(),
      /Unrecognized key: "kind"/,
    );
  });

  it('refuses a wrong or missing apiVersion', () => {
    assert.match(
      problemsOf('apiVersion: policy.captf.io/v2\nlimits: {maxDeletes: 1}\n').join(),
      /^\|apiVersion: .*policy\.captf\.io\/v1/,
    );
    assert.match(problemsOf('limits: {maxDeletes: 1}\n').join(), /apiVersion/);
  });

  it('refuses empty files, comment-only files and files without rules or limits', () => {
    assert.match(problemsOf('').join(), /the file is empty/);
    assert.match(problemsOf('# nothing yet\n').join(), /the file is empty/);
    assert.match(problemsOf(POLICY_HEADER).join(), /holds rules, limits or both/);
    assert.match(problemsOf(`${POLICY_HEADER}rules: []\n`).join(), /holds rules, limits or both/);
  });

  it('refuses bad effects, scopes, names and expressions', () => {
    assert.match(problemsOf(rule('  match: "true"\n  effect: warn\n')).join(), /^r\|rules\[0\]\.effect:/);
    assert.match(problemsOf(rule('  on: resource\n  match: "true"\n  effect: deny\n')).join(), /rules\[0\]\.on:/);
    assert.match(
      problemsOf(rule('  match: "  "\n  effect: deny\n')).join(),
      /rules\[0\]\.match: an expression cannot be empty/,
    );
    assert.match(
      problemsOf(rule(`  match: "${'a'.repeat(MAX_EXPRESSION_CHARS + 1)}"\n  effect: deny\n`)).join(),
      /at most 4096 characters/,
    );
    for (const name of ['limits.maxDeletes', '-x', 'x-', 'a b', '', 'é', 'x'.repeat(64)])
      assert.match(
        problemsOf(`${POLICY_HEADER}rules:\n- name: ${JSON.stringify(name)}\n  match: "true"\n  effect: deny\n`).join(),
        /rules\[0\]\.name: a rule name is 1 to 63/,
        name,
      );
    assert.ok(
      PolicyFile.safeParse({
        apiVersion: 'policy.captf.io/v1',
        rules: [{ name: 'A_b-9', match: 'true', effect: 'deny' }],
      }).success,
    );
  });

  it('refuses a message on a requireApproval rule (it would never be shown)', () => {
    assert.deepEqual(problemsOf(rule('  match: "true"\n  effect: requireApproval\n  message: \'"x"\'\n')), [
      'r|rules[0].message: only a deny rule has a message (a requireApproval rule is listed by name)',
    ]);
  });

  it('refuses a negative or fractional maxDeletes; zero means no delete at all', () => {
    assert.match(problemsOf(`${POLICY_HEADER}limits: {maxDeletes: -1}\n`).join(), /limits\.maxDeletes/);
    assert.match(problemsOf(`${POLICY_HEADER}limits: {maxDeletes: 1.5}\n`).join(), /limits\.maxDeletes/);
    assert.match(problemsOf(`${POLICY_HEADER}limits: {maxDeletes: "5"}\n`).join(), /limits\.maxDeletes/);
    assert.ok('policy' in parsePolicyText('p.yaml', `${POLICY_HEADER}limits: {maxDeletes: 0}\n`));
  });

  it('refuses YAML that could be read two ways: duplicate keys, several documents, unknown tags, complex keys', () => {
    assert.match(
      problemsOf(`${POLICY_HEADER}limits: {maxDeletes: 1}\nlimits: {maxDeletes: 9}\n`).join(),
      /not valid YAML: Map keys must be unique/,
    );
    assert.match(
      problemsOf(rule('  match: "true"\n  effect: deny\n  effect: requireApproval\n')).join(),
      /Map keys must be unique/,
    );
    assert.match(
      problemsOf(`${POLICY_HEADER}limits: {maxDeletes: 1}\n---\n${POLICY_HEADER}limits: {maxDeletes: 9}\n`).join(),
      /multiple documents/,
    );
    assert.match(problemsOf(`${POLICY_HEADER}limits: {maxDeletes: !int 1}\n`).join(), /Unresolved tag/);
    assert.match(problemsOf(`${POLICY_HEADER}? [limits]\n: 1\n`).join(), /complex key/);
    assert.match(
      problemsOf('{"apiVersion": "policy.captf.io/v1", "limits": {"maxDeletes": 1, "maxDeletes": 2}}', 'p.json').join(),
      /not valid JSON: Map keys must be unique/,
    );
    assert.match(problemsOf(`${POLICY_HEADER}rules: [\n`).join(), /not valid YAML/);
  });

  it('reads YAML 1.2: yes is a string, not a boolean', () => {
    assert.match(
      problemsOf(`${POLICY_HEADER}limits: {maxDeletes: yes}\n`).join(),
      /limits\.maxDeletes: Invalid input: expected number, received string/,
    );
  });
});
