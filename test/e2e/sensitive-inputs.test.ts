// The variables of the inputs with the real terraform: every variable of sensitive.tfvars.json is
// sensitive to terraform (the runner's override, whatever syntax declares the variable), so what a
// module derives from one is redacted by terraform itself, and an output that shows one is the
// module's problem (exit 4, naming the output's file and line). Ephemeral variables (terraform
// 1.10+) reach the apply of the saved plan, and no plan artifact, state, result or log holds them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Result } from '../../src/schemas/result.ts';
import { unpackArtifactDir } from '../support/artifacts.ts';
import { explain, scenario, type RunnerRun } from '../support/runner.ts';

const SECRET = 'Tok3n/Canary+q7@x';
const JSON_SECRET = 'JsonCanary-Vz81/kq';

/** The everyday shapes of cluster modules: a cloud-init join token, a database URL, an upper-cased and a base64 value; one variable declared in the JSON syntax. */
const DERIVING = {
  'main.tf': `variable "db_password" { type = string }

resource "terraform_data" "cloud_init" {
  input = base64encode("#cloud-config\\ntoken: \${var.db_password}\\n")
}

resource "terraform_data" "database" {
  input = "postgres://app:\${urlencode(var.db_password)}@db:5432/app"
}

resource "terraform_data" "upper" {
  input = upper(var.db_password)
}
`,
  'variables.tf.json': JSON.stringify({ variable: { join_token: { type: 'string' } } }, null, 2),
  'encoded.tf.json': JSON.stringify(
    { resource: { terraform_data: { encoded: { input: '${base64encode(var.join_token)}' } } } },
    null,
    2,
  ),
};

/** What the module prints of the secrets when terraform does not know they are secret. */
const DERIVED = [
  Buffer.from(`#cloud-config\ntoken: ${SECRET}\n`).toString('base64').slice(28, 48),
  encodeURIComponent(SECRET),
  SECRET.toUpperCase(),
  Buffer.from(JSON_SECRET).toString('base64'),
];

function assertAbsent(run: RunnerRun, texts: readonly string[], what: string) {
  for (const text of [SECRET, JSON_SECRET, ...texts]) {
    const at = run.allBytes.indexOf(text);
    assert.equal(
      at,
      -1,
      `${what}: ${JSON.stringify(text)} got out: …${run.allBytes.slice(Math.max(0, at - 200), at + 60)}…`,
    );
  }
}

describe('every variable of sensitive.tfvars.json is sensitive to terraform', () => {
  it('what the module derives from one (base64 of a cloud-init document, a URL, upper, base64) is redacted in stdout, the plan text, the summaries and the state holds it sensitive', async (t) => {
    const s = await scenario(t, DERIVING, {
      'sensitive.tfvars.json': { db_password: SECRET, join_token: JSON_SECRET },
    });
    const summary = join(s.dir, 'summary.md');
    const run = await s.run('apply', ['--summary-md', summary]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.match(run.stdout, /\+ input\s+= \(sensitive value\)/, 'terraform redacts the derived values itself');
    const markdown = await readFile(summary, 'utf8');
    assert.ok(markdown.includes('terraform_data.cloud_init'), 'the summary was written');
    assertAbsent({ ...run, allBytes: run.allBytes + markdown }, DERIVED, 'apply');
    // terraform, not only the runner's masker, knows the values are secret: the state says so.
    const state = await s.readState();
    for (const name of ['cloud_init', 'database', 'upper', 'encoded']) {
      const instance = state.resources.find((r) => r.name === name)!.instances[0]! as {
        sensitive_attributes?: unknown[];
      };
      assert.ok((instance.sensitive_attributes ?? []).length > 0, `${name} is held sensitive in the state`);
    }
  });

  it("an output that shows one without sensitive = true is the module's problem: exit 4 naming each output's file and line (HCL and JSON), nothing applied", async (t) => {
    const s = await scenario(
      t,
      {
        ...DERIVING,
        'outputs.tf': `output "database_url" {
  value = "postgres://app:\${urlencode(var.db_password)}@db:5432/app"
}
`,
        'outputs.tf.json': JSON.stringify({ output: { token: { value: '${var.join_token}' } } }, null, 2),
      },
      { 'sensitive.tfvars.json': { db_password: SECRET, join_token: JSON_SECRET } },
    );
    const run = await s.run('apply');
    assert.equal(run.exitCode, 4, explain(run));
    const result = Result.parse(run.result);
    assert.deepEqual([result.outcome, result.reason, result.error!.step], ['invalid', 'ImageInvalid', 'validate']);
    assert.match(result.message, /outputs\.tf(\.json)?:\d+: Output refers to sensitive values/);
    assert.match(result.message, /Mark the output sensitive = true/);
    const places = (result.error!.detail!.diagnostics as { file?: string; line?: number; summary: string }[])
      .map((d) => `${d.file}:${d.line}: ${d.summary}`)
      .sort();
    assert.deepEqual(places, [
      'outputs.tf.json:3: Output refers to sensitive values',
      'outputs.tf:1: Output refers to sensitive values',
    ]);
    assert.ok(!existsSync(s.state), 'nothing was applied');
    assertAbsent(run, DERIVED, 'the refused apply');
  });

  it("an override file of the module's own that sets sensitive = false again is refused after the plan, nothing applied", async (t) => {
    const s = await scenario(
      t,
      { ...DERIVING, 'zz_override.tf': 'variable "db_password" {\n  sensitive = false\n}\n' },
      { 'sensitive.tfvars.json': { db_password: SECRET, join_token: JSON_SECRET } },
    );
    const run = await s.run('apply');
    assert.equal(run.exitCode, 4, explain(run));
    assert.equal(run.result!.reason, 'ImageInvalid');
    assert.equal(run.result!.error!.step, 'show');
    assert.match(run.result!.message, /does not hold var\.db_password sensitive/);
    assert.ok(!existsSync(s.state), 'nothing was applied');
    assertAbsent(run, DERIVED, 'the refused apply');
  });
});

const TOKEN = 'EphTok3n-from-tfvars-81';
const SESSION = 'EphSess-from-sensitive-42';

/** An ephemeral variable from each variables file the runner reads (one declared in the JSON syntax); a provisioner proves the apply got both. */
const EPHEMERAL = {
  'main.tf': `variable "token" {
  type      = string
  ephemeral = true
}

variable "proof" { type = string }

resource "terraform_data" "joined" {
  input = var.proof

  provisioner "local-exec" {
    command     = "printf %s \\"$T:$S\\" | sha256sum | cut -c1-64 > \\"$P\\""
    environment = { T = var.token, S = var.session, P = var.proof }
  }
}
`,
  'variables.tf.json': JSON.stringify({ variable: { session: { type: 'string', ephemeral: true } } }, null, 2),
};

describe('ephemeral variables (terraform 1.10+)', () => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

  async function ephemeralScenario(t: Parameters<typeof scenario>[0]) {
    const s = await scenario(t, EPHEMERAL);
    const proof = join(s.dir, 'proof');
    await s.setInputs({
      'terraform.tfvars.json': { token: TOKEN, proof },
      'sensitive.tfvars.json': { session: SESSION },
    });
    return { s, proof };
  }

  /** No ephemeral value in what the runner wrote, nor in the state. */
  async function assertNoEphemeral(run: RunnerRun, statePath: string, what: string) {
    for (const value of [TOKEN, SESSION]) {
      assert.ok(!run.allBytes.includes(value), `${what}: ${value} got out`);
      assert.ok(!(await readFile(statePath, 'utf8')).includes(value), `${what}: the state holds ${value}`);
    }
  }

  it('apply: the apply of the saved plan gets the values of both variables files', async (t) => {
    const { s, proof } = await ephemeralScenario(t);
    const run = await s.run('apply');
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.reason, 'ApplySucceeded');
    assert.equal(
      (await readFile(proof, 'utf8')).trim(),
      sha256(`${TOKEN}:${SESSION}`),
      'the provisioner saw both values',
    );
    await assertNoEphemeral(run, s.state, 'apply');
  });

  it('plan, then apply --plan-artifact (applyPolicy Manual): the artifact holds neither value, the approved apply gets both', async (t) => {
    const { s, proof } = await ephemeralScenario(t);
    const plan = await s.run('plan', ['--artifacts', join(s.dir, 'artifacts')]);
    assert.equal(plan.exitCode, 0, explain(plan));
    const ref = plan.result!.planArtifact!;
    const artifact = join(ref.location, ref.object);
    const { files } = await unpackArtifactDir(artifact);
    const stored = [
      ...Object.values(files).map((file) => file.toString('latin1')),
      ...(await Promise.all((await readdir(artifact)).map((name) => readFile(join(artifact, name), 'latin1')))),
    ];
    for (const value of [TOKEN, SESSION])
      assert.ok(!stored.some((bytes) => bytes.includes(value)), `the plan artifact holds ${value}`);
    assert.ok(!plan.allBytes.includes(TOKEN) && !plan.allBytes.includes(SESSION), 'the plan wrote no ephemeral value');

    const apply = await s.run('apply', ['--plan-artifact', artifact, '--approved-plan-hash', plan.result!.planHash!]);
    assert.equal(apply.exitCode, 0, explain(apply));
    assert.equal(
      (await readFile(proof, 'utf8')).trim(),
      sha256(`${TOKEN}:${SESSION}`),
      'the provisioner saw both values',
    );
    await assertNoEphemeral(apply, s.state, 'the approved apply');
  });
});
