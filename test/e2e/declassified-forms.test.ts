// Secrets a module declassifies and prints in forms terraform builds (the real terraform 1.11.4):
// upper() and lower() as terraform maps case (rune by rune: `lower("İ")` is `i`, `upper("ı")` is
// `I`), an escaping three deep (a jsonencode of a jsonencode, Go-quoted in the plan), and the value
// a root module passes to a child module's sensitive variable. None shows in stdout, stderr, the
// result, the termination message or the Markdown summary, in any form the module printed it in.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { explain, scenario, type RunnerRun } from '../support/runner.ts';

/** Every byte the run wrote and its Markdown summary. */
async function written(run: RunnerRun, summary: string): Promise<string> {
  return `${run.allBytes}\n${await readFile(summary, 'utf8').catch(() => '')}`;
}

function assertAbsent(bytes: string, parts: readonly string[], what: string) {
  for (const part of parts) {
    const at = bytes.indexOf(part);
    assert.equal(at, -1, `${what}: ${JSON.stringify(part)} got out: …${bytes.slice(Math.max(0, at - 200), at + 60)}…`);
  }
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe("secrets a module declassifies, in the forms terraform's own functions build", () => {
  it('lower() of a secret with `İ` and upper() of one with `ı`, as terraform maps case, and their base64: masked in the plan, the apply, the outputs and the summary', async (t) => {
    const s = await scenario(t, {
      'main.tf': `variable "pw" { type = string }
variable "key" { type = string }
resource "terraform_data" "lowered" {
  input = { lower = nonsensitive(lower(var.pw)), b64 = nonsensitive(base64encode(lower(var.pw))) }
}
resource "terraform_data" "uppered" {
  input = { upper = nonsensitive(upper(var.key)), b64 = nonsensitive(base64encode(upper(var.key))) }
}
output "lowered" { value = nonsensitive(lower(var.pw)) }
output "uppered" { value = nonsensitive(upper(var.key)) }
`,
    });
    const pw = 'İzmir-Parola-7q9Kx';
    const key = 'kırmızı-şifre-4tz8q';
    await s.setInputs({ 'sensitive.tfvars.json': { pw, key } });
    const summary = join(s.dir, 'summary.md');
    const run = await s.run('apply', ['--summary-md', summary]);
    assert.equal(run.exitCode, 0, explain(run));
    const state = JSON.stringify((await s.readState()).resources);
    assert.ok(state.includes('"izmir-parola-7q9kx"'), "terraform's lower() maps İ to i");
    assert.ok(state.includes('"KIRMIZI-ŞIFRE-4TZ8Q"'), "terraform's upper() maps ı to I");
    assert.match(run.stdout, /lowered = "\(sensitive value\)"/, 'terraform printed the output, masked');
    const bytes = await written(run, summary);
    assert.match(bytes, /### captf-runner apply/, 'the summary was written');
    assertAbsent(
      bytes,
      ['izmir-parola', 'IZMIR-PAROLA', 'KIRMIZI', 'kirmizi', 'Parola-7q9Kx', base64('izmir-parola-7q9kx').slice(0, 16)],
      'the case forms',
    );
    assertAbsent(bytes, [base64('KIRMIZI-ŞIFRE-4TZ8Q').slice(0, 16)], 'the base64 of the upper case form');
  });

  it('jsonencode(jsonencode(…)) of a secret with `"` and `\\`, printed three escapes deep in the plan: masked', async (t) => {
    const s = await scenario(t, {
      'main.tf': `variable "pw" { type = string }
resource "terraform_data" "deep" { input = jsonencode(jsonencode(nonsensitive(var.pw))) }
output "deep" { value = jsonencode(jsonencode(nonsensitive(var.pw))) }
`,
    });
    await s.setInputs({ 'sensitive.tfvars.json': { pw: 'Xk9"pw\\Canary-31' } });
    const summary = join(s.dir, 'summary.md');
    const run = await s.run('apply', ['--summary-md', summary]);
    assert.equal(run.exitCode, 0, explain(run));
    const state = JSON.stringify((await s.readState()).resources);
    assert.ok(state.includes(JSON.stringify(JSON.stringify(JSON.stringify('Xk9"pw\\Canary-31')))), state);
    assert.match(run.stdout, /\+ input\s+= "\\"\\\\\\"\(sensitive value\)\\\\\\"\\""/, run.stdout);
    assertAbsent(await written(run, summary), ['Xk9', 'Canary-31'], 'the value three escapes deep');
  });

  it("a root variable passed to a child module's sensitive variable, built into a DSN at the root: masked on the first apply, learned from the plan's configuration", async (t) => {
    const s = await scenario(t, {
      'main.tf': `variable "db_password" { type = string }
module "db" {
  source   = "./db"
  password = var.db_password
}
resource "terraform_data" "app" { input = "postgres://app:\${var.db_password}@db" }
output "dsn" { value = "postgres://app:\${var.db_password}@db" }
`,
      'db/main.tf': `variable "password" {
  type      = string
  sensitive = true
}
resource "terraform_data" "db" { input = var.password }
`,
    });
    await s.setInputs({ 'terraform.tfvars.json': { db_password: 'Hunter2-Zq8x-77' } });
    const summary = join(s.dir, 'summary.md');
    const run = await s.run('apply', ['--summary-md', summary]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.ok(JSON.stringify((await s.readState()).resources).includes('postgres://app:Hunter2-Zq8x-77@db'));
    assert.match(run.stdout, /dsn = "postgres:\/\/app:\(sensitive value\)@db"/, run.stdout);
    assertAbsent(await written(run, summary), ['Hunter2', 'Zq8x'], 'the first apply');
  });
});
