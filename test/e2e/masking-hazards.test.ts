// Secrets whose shape defeats a naive masker, with the real terraform: values too large for one
// regular expression, JSON documents terraform prints field by field, the old value of a rotated
// secret (whole, or a part of a value or an output), words of the runner's own protocol, and the
// keys of a secret map. No part of any appears in a byte the runner writes, and the result stays
// well-formed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Result } from '../../src/schemas/result.ts';
import { explain, scenario, type RunnerRun } from '../support/runner.ts';

const OTHER = 'CANARYOTHER-db-password';

function assertAbsent(run: RunnerRun, parts: readonly string[], what: string) {
  for (const part of parts) {
    const at = run.allBytes.indexOf(part);
    assert.equal(
      at,
      -1,
      `${what}: ${JSON.stringify(part.slice(0, 40))} got out: …${run.allBytes.slice(Math.max(0, at - 200), at + 60)}…`,
    );
  }
}

describe('masking secrets a naive masker fails on', () => {
  it('a 45 KB repetitive sensitive output and a 120 KB value of sensitive.tfvars.json: the apply finishes, its result is written, no secret shows', async (t) => {
    const s = await scenario(t, {
      'main.tf': `variable "db_password" { type = string }
variable "ca_bundle" { type = string }
resource "terraform_data" "db" { input = var.db_password }
resource "terraform_data" "ca" { input = var.ca_bundle }
output "kubeconfig" {
  sensitive = true
  value     = join("", [for i in range(1000) : "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"])
}
`,
    });
    const bundle = Array.from(
      { length: 3000 },
      (_, i) => `QBUNDLE${String(i).padStart(5, '0')} "\\ é\u2028${'A'.repeat(20)}`,
    ).join('');
    assert.ok(bundle.length > 100_000);
    await s.setInputs({ 'sensitive.tfvars.json': { db_password: OTHER, ca_bundle: bundle } });
    const run = await s.run('apply');
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result?.outcome, 'succeeded');
    assert.ok(
      (await s.readState()).resources.some((r) => r.name === 'ca'),
      'the apply happened',
    );
    assert.match(await readFile(s.termination, 'utf8'), /"outcome":"succeeded"/);
    assertAbsent(run, [OTHER, 'a1a1a1a1a1a1a1a1', 'QBUNDLE0', 'AAAAAAAAAAAAAAAAAAAA'], 'apply');
    assert.doesNotMatch(run.stderr, /Invalid regular expression/);
  });

  it('a secret that is a JSON document: terraform prints each field on its own line, and none shows in stdout, the plan text or the result', async (t) => {
    const s = await scenario(t, {
      // Declassified: terraform would redact the value of a variable of sensitive.tfvars.json itself.
      'main.tf': `variable "creds" { type = string }
resource "terraform_data" "sa" { input = nonsensitive(var.creds) }
`,
    });
    const creds = JSON.stringify({
      type: 'service_account',
      private_key: 'CANARYPK-secret-material-123',
      nested: { client: ['CANARYCLIENT-id-456'] },
      CANARYFIELDKEY: 'v',
    });
    await s.setInputs({ 'sensitive.tfvars.json': { creds } });
    const plan = await s.run('plan', ['--artifacts', join(s.dir, 'artifacts')]);
    assert.equal(plan.exitCode, 0, explain(plan));
    assert.match(
      plan.result!.planText!,
      /jsonencode\([^]*\+ \(sensitive value\)\s+= "\(sensitive value\)"/,
      `terraform printed the document field by field, masked: ${plan.result!.planText}`,
    );
    assertAbsent(plan, ['CANARYPK', 'CANARYCLIENT', 'CANARYFIELDKEY'], 'plan');
    const apply = await s.run('apply');
    assert.equal(apply.exitCode, 0, explain(apply));
    assertAbsent(apply, ['CANARYPK', 'CANARYCLIENT', 'CANARYFIELDKEY'], 'apply');
  });

  it('a rotated secret of sensitive.tfvars.json that the module does not declare sensitive: its old value never shows', async (t) => {
    const s = await scenario(t, {
      'main.tf': `variable "token" { type = string }
resource "terraform_data" "cluster" { input = { token = var.token, name = "c1" } }
`,
    });
    await s.setInputs({ 'sensitive.tfvars.json': { token: 'CANARYOLD-token-1' } });
    const first = await s.run('apply');
    assert.equal(first.exitCode, 0, explain(first));
    await s.setInputs({ 'sensitive.tfvars.json': { token: 'CANARYNEW-token-2' } });
    const plan = await s.run('plan', ['--artifacts', join(s.dir, 'artifacts')]);
    assert.equal(plan.exitCode, 0, explain(plan));
    assert.match(plan.result!.planText!, /~ input\s+=/, 'the plan updates the value');
    assertAbsent(plan, ['CANARYOLD', 'CANARYNEW'], 'the plan of the rotation');
    const apply = await s.run('apply');
    assert.equal(apply.exitCode, 0, explain(apply));
    assertAbsent(apply, ['CANARYOLD', 'CANARYNEW'], 'the apply of the rotation');
    assert.ok(
      JSON.stringify(
        (await s.readState()).resources.find((r) => r.name === 'cluster')!.instances[0]!.attributes.input,
      ).includes('CANARYNEW-token-2'),
      'the state holds the new value',
    );
  });

  it('a rotated secret in a part of a value, and in an output: its old value never shows (output changes, resource changes), and an output that shows it undeclared is refused', async (t) => {
    // The module declassifies: terraform prints these values, the masker must hold.
    const declassified = `variable "db_password" { type = string }
resource "terraform_data" "conn" { input = nonsensitive("user:\${var.db_password}") }
output "conn" { value = nonsensitive("user:\${var.db_password}@db") }
`;
    const s = await scenario(t, { 'main.tf': declassified });
    await s.setInputs({ 'sensitive.tfvars.json': { db_password: 'OLDCONN-Bx7w-1' } });
    const first = await s.run('apply');
    assert.equal(first.exitCode, 0, explain(first));
    await s.setInputs({ 'sensitive.tfvars.json': { db_password: 'NEWCONN-Qp2z-2' } });
    for (const op of ['drift', 'apply'] as const) {
      const run = await s.run(op);
      assert.equal(run.exitCode, 0, `${op}: ${explain(run)}`);
      assert.match(
        run.stdout,
        /~ conn\s+= "user:\(sensitive value\)@db" -> "user:\(sensitive value\)@db"/,
        `${op}: terraform printed the output change`,
      );
      assertAbsent(run, ['OLDCONN', 'NEWCONN'], `the ${op} of the rotation`);
    }
    // The module: the output shows the variable undeclared. terraform refuses it now (the
    // variable is sensitive to it); before, the drift printed the old value beside the masked new one.
    await s.useModule({
      'main.tf': declassified.replace('nonsensitive("user:\${var.db_password}@db")', '"user:\${var.db_password}@db"'),
    });
    await s.setInputs({ 'sensitive.tfvars.json': { db_password: 'NEWERCONN-Lk3d-3' } });
    const refused = await s.run('drift');
    assert.equal(refused.exitCode, 4, explain(refused));
    assert.match(refused.result!.message, /main\.tf:3: Output refers to sensitive values/);
    assertAbsent(refused, ['NEWCONN', 'NEWERCONN'], 'the drift of a module whose output shows the secret');
  });

  it("secrets equal to words of the protocol mask nothing of the runner's own fields: outcome, reason, annotations, steps; the result keeps its schema", async (t) => {
    const s = await scenario(t, { 'main.tf': 'resource "terraform_data" "db" { input = "db" }\n' });
    await s.setInputs({
      'sensitive.tfvars.json': { pw: 'succeeded', pw2: 'ApplySucceeded', pw3: 'apply', pw4: 'init' },
    });
    const run = await s.run('apply');
    assert.equal(run.exitCode, 0, explain(run));
    const result = Result.parse(run.result);
    assert.equal(result.outcome, 'succeeded');
    assert.equal(result.reason, 'ApplySucceeded');
    assert.equal(result.op, 'apply');
    assert.deepEqual(
      { outcome: result.annotations['captf.io/outcome'], reason: result.annotations['captf.io/reason'] },
      { outcome: 'succeeded', reason: 'ApplySucceeded' },
    );
    assert.ok(
      result.steps.some((step) => step.name === 'init' && step.status === 'ok'),
      JSON.stringify(result.steps),
    );
    assert.ok(
      result.warnings.some((w) => w.includes('word of the runner protocol')),
      JSON.stringify(result.warnings),
    );
    const termination = JSON.parse(await readFile(s.termination, 'utf8'));
    assert.deepEqual(
      [termination.op, termination.outcome, termination.reason],
      ['apply', 'succeeded', 'ApplySucceeded'],
    );
  });

  it('the keys of a map in sensitive.tfvars.json (4+ characters) never show', async (t) => {
    const s = await scenario(t, {
      'main.tf': `variable "users" { type = map(string) }
resource "terraform_data" "users" { input = var.users }
`,
    });
    await s.setInputs({ 'sensitive.tfvars.json': { users: { 'CANARYKEY-alice': 'CANARYPW-alice-pw' } } });
    const run = await s.run('apply');
    assert.equal(run.exitCode, 0, explain(run));
    assertAbsent(run, ['CANARYKEY', 'CANARYPW'], 'apply');
  });
});
