// Bounded policy evaluation end to end (contract/sections/policy.md §4, §5 *Bounds*): the rules of
// the issue that ran for 48 s or grew the runner past 4 GB are refused when the policy is loaded,
// and a rule that passes the estimate but meets a longer key than it assumed is stopped at its
// budget and denies (fail closed), naming the rule and the change. Nothing is applied either way.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { POLICY_HEADER } from '../policy/policies.support.ts';
import { explain, scenario, type Scenario } from '../support/runner.ts';
import { existsSync } from 'node:fs';

const IMAGE = 'registry.example/captf-module:1.0.0';

/** One terraform_data per key: the keys, from the inputs, make the addresses as long as they are. */
const KEYED = {
  'main.tf':
    'variable "keys" {\n  type = list(string)\n}\n\nresource "terraform_data" "db" {\n  for_each = toset(var.keys)\n  input    = each.key\n}\n',
};

async function withPolicy(s: Scenario, rules: Record<string, string>): Promise<string> {
  const dir = join(s.dir, 'policy');
  await mkdir(dir);
  const text = Object.entries(rules)
    .map(([name, match]) => `- name: ${name}\n  match: ${JSON.stringify(match)}\n  effect: deny\n`)
    .join('');
  await writeFile(join(dir, 'policy.yaml'), `${POLICY_HEADER}rules:\n${text}`);
  return dir;
}

describe('policy: bounded evaluation', () => {
  it("the issue's cubic rule and its list-building rule are refused when the policy is loaded: ImageInvalid, each rule named with its estimate, nothing planned", async (t) => {
    const s = await scenario(t, KEYED, { 'terraform.tfvars.json': { keys: ['k'.repeat(420)] } });
    const policy = await withPolicy(s, {
      cubic:
        'change.address.split("").exists(a, change.address.split("").exists(b, change.address.indexOf(a + b + "#") >= 0))',
      lists: 'change.address.split("").map(c, change.address.split("")).size() > 0',
    });
    const run = await s.run('apply', ['--image', IMAGE, '--policy', policy]);
    assert.equal(run.exitCode, 4, explain(run));
    const r = run.result!;
    assert.equal(r.reason, 'ImageInvalid');
    assert.equal(r.error!.step, 'policy');
    const problems = r.error!.detail!.problems as { rule: string; message: string }[];
    assert.deepEqual(
      problems.map((p) => p.rule),
      ['cubic', 'lists'],
    );
    for (const p of problems)
      assert.match(
        p.message,
        /^match: its worst case costs [0-9,]+ units, over the 1,000,000 one rule may spend on one change/,
      );
    assert.deepEqual(
      r.steps.map((step) => step.name),
      ['policy'],
    );
    assert.equal(existsSync(s.state), false, 'nothing planned or applied');
  });

  it("the issue's slow regular expression (`.{1000}`: six characters, 1,002 instructions) is refused when the policy is loaded", async (t) => {
    const s = await scenario(t, KEYED, { 'terraform.tfvars.json': { keys: ['short'] } });
    const policy = await withPolicy(s, { slow: 'change.names.exists(n, n.matches(".{1000}"))' });
    const run = await s.run('apply', ['--image', IMAGE, '--policy', policy]);
    assert.equal(run.exitCode, 4, explain(run));
    assert.equal(run.result!.reason, 'ImageInvalid');
    const problems = run.result!.error!.detail!.problems as { rule: string; message: string }[];
    assert.deepEqual(
      problems.map((p) => p.rule),
      ['slow'],
    );
    assert.match(problems[0]!.message, /^match: its worst case costs [0-9,]+ units, over the 1,000,000/);
    assert.equal(existsSync(s.state), false, 'nothing planned or applied');
  });

  it("the plan's budget spent on a harmless plan is one finding of its own (limits.planCost: the rule, the units, the plan's size), not rules that denied; it fails closed", async (t) => {
    const keys = Array.from({ length: 8 }, (_, i) => `${i}-${'k'.repeat(960)}`);
    const s = await scenario(t, KEYED, { 'terraform.tfvars.json': { keys } });
    // Each ≈ 440,000 units on an address of 1,000 characters (a program of 402 instructions), and never matches: 20 of them spend the budget in 6 changes.
    const policy = await withPolicy(
      s,
      Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`r${i}`, 'change.address.matches(".{400}#")'])),
    );
    const run = await s.run('apply', ['--image', IMAGE, '--policy', policy]);
    assert.equal(run.exitCode, 8, explain(run));
    const r = run.result!;
    assert.equal(r.reason, 'PolicyDenied');
    const found = r.plan!.policy!;
    assert.equal(found.costExceeded, true);
    assert.equal(found.cost, 50_000_000);
    assert.equal(found.deniedTotal, 1, 'one finding, not one a rule');
    assert.equal(found.denied[0]!.rule, 'limits.planCost');
    assert.match(
      found.denied[0]!.message,
      /^the policy evaluation ran out of the plan's cost budget \(50,000,000 units\) at rule "r\d+" \(.*policy\.yaml\) over change \d of the plan's 8 resource changes and 0 provider actions, under 20 rules, having spent 50,000,000 units: what came after was not judged \(change \d: terraform_data\.db\["\d-k+…\); denied, as an evaluation that cannot finish denies/,
    );
    assert.match(r.message, /limits\.planCost/);
    assert.equal(existsSync(s.state) ? (await s.readState()).resources.length : 0, 0, 'nothing applied');
  });

  it('a rule over its budget on a longer key than the estimate assumed denies that change (fail closed), naming rule and change; nothing applied', async (t) => {
    const key = 'k'.repeat(6000);
    const s = await scenario(t, KEYED, { 'terraform.tfvars.json': { keys: [key, 'short'] } });
    // Quadratic in the address: ≈ 120,000 units for an address of 1,024 characters, millions for this one.
    const policy = await withPolicy(s, {
      slow: 'change.address.split("").exists(c, change.address.contains(c + "#"))',
    });
    const run = await s.run('apply', ['--image', IMAGE, '--policy', policy]);
    assert.equal(run.exitCode, 8, explain(run));
    const r = run.result!;
    assert.equal(r.reason, 'PolicyDenied');
    const found = r.plan!.policy!;
    assert.deepEqual(
      found.denied.map((d) => [
        d.rule,
        d.address === `terraform_data.db["${key}"]` ? 'the long key' : d.address,
        d.message,
      ]),
      [
        [
          'slow',
          'the long key',
          'rule "slow" (' +
            join(policy, 'policy.yaml') +
            ') failed on this change (it ran over its cost budget of 1000000 units on this change) and denies it: a deny rule that cannot be evaluated denies; fix the rule',
        ],
      ],
    );
    assert.equal(found.timedOut, false);
    assert.equal(found.costExceeded, false);
    assert.ok(found.cost > 1_000_000 && found.cost < 1_100_000, `the cost spent: ${found.cost}`);
    assert.equal(existsSync(s.state) ? (await s.readState()).resources.length : 0, 0, 'nothing applied');
  });
});
