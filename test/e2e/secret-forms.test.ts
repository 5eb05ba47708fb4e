// Secrets in every form terraform prints them in (the real terraform 1.11): generated values of
// every character class, given in sensitive.tfvars.json to a module that does not declare them
// sensitive, go through a plan, an apply, outputs, a failing plan and a failing apply (locally
// and in a cluster), and no part of any of them appears in a byte the runner wrote. One of them is
// a JSON document of generated values.
//
// The oracle does not use the masker: each generated secret is made of random alphanumeric
// tokens with the special characters between them. No escaping changes an ASCII letter or digit,
// so a token found anywhere means some part of a secret got out, whatever the escaping.
//
// Then generated secrets through the encodings a module computes from them (base64 at each byte
// offset, URL base64, urlencode, upper, lower, hex), in an apply in a cluster with --summary-md:
// the oracle computes each form with Node's own encoders and finds none in stdout, stderr, the out
// dir, the termination message, the Markdown summary, the Job and the result Secret's keys.
//
// Then those encodings through a change of case (upper, lower, title of urlencode, base64encode and
// jsonencode) in a plan, an apply, an output, a check block's warning and a failing precondition:
// the oracle folds case and white space of what was written and of each form before it looks.
import { describe, it, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { FakeApiServer } from '../support/fake-apiserver.ts';
import { explain, scenario, terraformStderr, type RunnerRun } from '../support/runner.ts';

/** Every form terraform's renderers give a string: as is (heredoc), Go-quoted, a JSON document, Go-quoted JSON and HCL, a map key; diagnostics that quote and wrap it. */
const MODULE = {
  'main.tf': `terraform {
  required_providers {
    terraform = { source = "terraform.io/builtin/terraform" }
  }
}

variable "canaries" { type = list(string) }

variable "refuse" {
  type    = bool
  default = false
}

variable "fail_apply" {
  type    = bool
  default = false
}

# Declassified: every variable of sensitive.tfvars.json is sensitive to terraform, which would
# redact every form below; the masker must hold where a module prints a secret all the same.
locals {
  canaries = { for i, c in nonsensitive(var.canaries) : tostring(i) => c }
}

resource "terraform_data" "plain" {
  for_each = local.canaries
  input    = each.value

  lifecycle {
    precondition {
      condition     = !var.refuse || each.value == "never"
      error_message = "The value \${each.value} is refused, and this sentence is long enough to be word-wrapped."
    }
  }
}

resource "terraform_data" "encoded" {
  for_each = local.canaries
  input = {
    json     = jsonencode({ k = each.value })
    embedded = "x \${jsonencode(each.value)} y"
    hcl      = provider::terraform::encode_expr(each.value)
    keyed    = { (each.value) = "v" }
  }
}

resource "terraform_data" "fail" {
  for_each = var.fail_apply ? local.canaries : {}
  input    = each.value

  lifecycle {
    postcondition {
      condition     = self.output == "never"
      error_message = "After apply, \${self.output} was refused, and this sentence is long enough to be word-wrapped."
    }
  }
}

output "canaries" {
  value = nonsensitive(var.canaries)
}
`,
};

const token = fc.stringMatching(/^[A-Za-z0-9]{8}$/).map((t) => `Q${t}`);
/** What goes between tokens: each character class some renderer escapes, splits or normalises. */
const special = fc.constantFrom(
  '\x00',
  '\x01',
  '\x07',
  '\b',
  '\f',
  '\v',
  '\x1b',
  '\x7f', // control characters
  '\u2028',
  '\u2029',
  '\u0085',
  '\u00a0',
  '\u3000',
  '\u200b',
  '\ufeff',
  '\u00ad', // separators, format characters
  '"',
  "'",
  '\\',
  '\\n',
  '${',
  '%{',
  '$${',
  '<&>', // quotes, backslashes, template introducers, HTML
  '\n',
  '\r\n',
  '\n\n',
  '\t',
  ' ',
  '  ',
  ' ',
  ' ', // line breaks and white space (where terraform splits and wraps)
  'e\u0301',
  '\u{1F600}',
  '\u{E0001}',
  '\u{10FFFD}', // NFC (terraform composes), non-BMP, unprintable
);
/** A secret: tokens with specials between them; long ones (hundreds of characters) wrap over several lines. */
const canary = fc
  .tuple(token, fc.array(fc.tuple(special, token), { minLength: 1, maxLength: 40 }))
  .map(([first, rest]) => first + rest.map(([s, t]) => s + t).join(''));

/** The values of the issue, and one long passphrase: always among the secrets. */
const FIXED = [
  'Qcanaryls\u2028Qlstail',
  'Qcanaryctl\x01Qctltail',
  `Qwrapped ${Array.from({ length: 14 }, (_, i) => `Qpassword${i}`).join(' ')}`,
];

/**
 * A secret that is a JSON document (a service-account key): terraform prints it as jsonencode({...}),
 * one field to a line, so each field, and a key, must be masked on its own. Its fields are secrets
 * only as parts of it.
 */
function jsonDocument([first, second, third]: string[]): string {
  return JSON.stringify({
    type: 'service_account',
    [`${tokensOf(first!)[0]}key`]: first,
    nested: { list: [second, { field: third }] },
  });
}

let currentSeed = 0;

const tokensOf = (value: string) => value.match(/Q[A-Za-z0-9]{8,}/g) ?? [];

/** Every file the run left under `dir`, but the chunks of backups and plan artifacts (a state and a plan hold secrets by design). */
async function writtenFiles(dir: string): Promise<string> {
  let bytes = '';
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (!entry.isFile() || /^chunk-\d{5}$/.test(entry.name)) continue;
    bytes += `\n${join(entry.parentPath, entry.name)}:\n${await readFile(join(entry.parentPath, entry.name), 'utf8')}`;
  }
  return bytes;
}

function assertNoToken(bytes: string, secrets: readonly string[], what: string) {
  what = `${what} (seed ${currentSeed})`;
  for (const secret of secrets) {
    for (const t of tokensOf(secret)) {
      const at = bytes.indexOf(t);
      assert.equal(
        at,
        -1,
        `${what}: part of the secret ${JSON.stringify(secret)} got out: …${bytes.slice(Math.max(0, at - 300), at + 100)}…`,
      );
    }
  }
}

/** The Job and every Secret of the namespace but the chunks of backups and plan artifacts (a state and a plan hold secrets by design), their data decoded. */
function clusterObjects(api: FakeApiServer, job: string) {
  const objects = [
    api.job(NS, job)!,
    ...api.secrets(NS).filter((secret) => secret.metadata.labels?.['captf.io/part'] !== 'chunk'),
  ];
  return objects.map((object) => ({
    ...object,
    data: Object.fromEntries(
      Object.entries<string>(object.data ?? {}).map(([key, value]) => [
        key,
        Buffer.from(value, 'base64').toString('utf8'),
      ]),
    ),
  }));
}

/** Every op over one set of secrets; each check names the seed that made them. */
async function exercise(
  t: TestContext,
  api: FakeApiServer,
  canaries: readonly string[],
  attempt: number,
): Promise<void> {
  const s = await scenario(t, MODULE);
  const inputs = (extra: Record<string, unknown>) =>
    s.setInputs({ 'sensitive.tfvars.json': { canaries }, 'terraform.tfvars.json': extra });
  const check = async (run: RunnerRun, what: string, exitCode: number) => {
    assert.equal(run.exitCode, exitCode, `${what}: ${explain(run)}`);
    // The out dir holds result.json, the backups (blocked-run records, manifests) and the plan artifact; the termination message is beside it.
    assertNoToken(
      run.stdout + run.stderr + (await writtenFiles(s.out)) + (await readFile(s.termination, 'utf8')),
      canaries,
      what,
    );
  };

  await inputs({});
  const plan = await s.run('plan', ['--artifacts', join(s.out, 'artifacts')]);
  await check(plan, 'plan', 0);
  assert.ok(plan.result!.planText!.includes('(sensitive value)'), 'the plan text shows the secrets masked');
  await check(await s.run('apply'), 'apply', 0);
  await check(await s.run('drift'), 'drift', 0);

  await inputs({ refuse: true });
  const failedPlan = await s.run('drift');
  await check(failedPlan, 'a plan that fails with diagnostics quoting the secrets', 1);
  assert.match(
    terraformStderr(failedPlan),
    /The value \(sensitive value\)\s+is refused/,
    'the diagnostic is there, masked',
  );

  await inputs({ fail_apply: true });
  const failedApply = await s.run('apply');
  await check(failedApply, 'an apply that fails after changing things', 1);
  assert.equal(failedApply.result!.reason, 'ApplyFailed');
  assert.match(terraformStderr(failedApply), /After apply, \(sensitive value\)\s+was refused/);

  // In a cluster: the result Secret (no output is sensitive, so nothing in it may show a secret),
  // the Job's annotations, and the backup Secrets but their chunks.
  const job = `forms-${attempt}`;
  api.addJob(NS, job);
  const sa = await api.writeServiceAccountDir(join(s.dir, 'sa'));
  const identity = [
    '--job-name',
    job,
    '--job-uid',
    api.job(NS, job)!.metadata.uid,
    '--service-account-dir',
    sa,
    '--namespace',
    NS,
    '--object',
    `demo-${attempt}`,
  ];
  await check(await s.run('apply', identity, api.env), 'an apply in a cluster that fails', 1);
  const decoded = clusterObjects(api, job);
  assert.ok(
    decoded.some(
      (object) =>
        object.metadata.labels?.['captf.io/artifact-kind'] === 'result' && object.metadata.name.startsWith(job),
    ),
    'the result Secret was written',
  );
  assertNoToken(JSON.stringify(decoded), canaries, 'the Kubernetes objects');
}

const NS = 'forms';

/**
 * Secrets through the encodings a module computes (declassified, so terraform prints them): base64
 * of a text the secret sits in at each byte offset (standard and URL alphabets, unpadded),
 * urlencode into a URL, upper, lower, and hex (a provisioner's dump: terraform streams it).
 */
const ENCODING_MODULE = {
  'main.tf': `variable "secrets" {
  type = list(object({ value = string, prefix = string, suffix = string }))
}

locals {
  secrets = { for i, s in nonsensitive(var.secrets) : tostring(i) => s }
}

resource "terraform_data" "encoded" {
  for_each = local.secrets
  input = {
    base64    = base64encode("\${each.value.prefix}\${each.value.value}\${each.value.suffix}")
    base64url = replace(replace(replace(base64encode("\${each.value.prefix}\${each.value.value}\${each.value.suffix}"), "=", ""), "+", "-"), "/", "_")
    url       = "postgres://app:\${urlencode(each.value.value)}@db:5432/app"
    upper     = upper(each.value.value)
    lower     = lower(each.value.value)
  }

  provisioner "local-exec" {
    command     = "printf '%s' \\"$V\\" | od -An -tx1 -v | tr -d ' \\\\n'; echo"
    environment = { V = each.value.value }
  }
}

output "encoded" {
  value = { for k, r in terraform_data.encoded : k => r.input }
}
`,
};

/** A character of a generated secret: one whose upper and lower case are one character each, in JavaScript as in Go. */
const encodingChar = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789') },
  { weight: 3, arbitrary: fc.constantFrom(...'!#$&()*+,-./:;<=>?@[]^_`{|}~ ') },
  { weight: 1, arbitrary: fc.constantFrom('é', 'Ω', 'ж', '€', '中') },
);
const encodingText = (minLength: number, maxLength: number) =>
  fc.array(encodingChar, { minLength, maxLength }).map((chars) => chars.join(''));
/** 5 characters or more, none of them white space at either end: every base64 piece of it is 6 characters or more. */
const encodingSecret = encodingText(5, 30).filter((s) => s.trim() === s && s.length >= 5);

/** The forms of one embedded secret the oracle looks for: computed by Node's own encoders, never the masker's. */
function encodedOracle({ value, prefix, suffix }: { value: string; prefix: string; suffix: string }): string[] {
  const b64 = Buffer.from(prefix + value + suffix).toString('base64');
  const bytes = (s: string) => Buffer.byteLength(s);
  const core = b64.slice(Math.ceil((8 * bytes(prefix)) / 6), Math.floor((8 * (bytes(prefix) + bytes(value))) / 6));
  const queryEscape = [...value]
    .map((c) =>
      /^[A-Za-z0-9\-_.~]$/.test(c)
        ? c
        : c === ' '
          ? '+'
          : [...Buffer.from(c)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
    )
    .join('');
  return [
    value,
    core,
    core.replaceAll('+', '-').replaceAll('/', '_'),
    queryEscape,
    value.toUpperCase(),
    value.toLowerCase(),
    Buffer.from(value).toString('hex'),
  ];
}

/**
 * Secrets through an encoding and then a change of case (declassified, so terraform prints them):
 * upper, lower and title of urlencode, base64encode (at each byte offset, padded and not) and
 * jsonencode, the encodings of the secret in upper and lower case, and urlencode of base64encode
 * (upper-cased), in a resource's input (the
 * plan and the apply), an output, a check block's warning and a precondition's error (a failing
 * plan). title() leaves a mix of cases: the letter after each `%`, `+`, `/`, … upper, the rest as
 * they were.
 */
const CASED_ENCODING_MODULE = {
  'main.tf': `variable "secrets" { type = list(string) }

# Not secret: which byte of a base64 group each secret starts at.
variable "prefixes" { type = list(string) }

variable "refuse" {
  type    = bool
  default = false
}

locals {
  secrets = { for i, v in nonsensitive(var.secrets) : tostring(i) => { value = v, prefix = var.prefixes[i] } }
  cased = { for k, s in local.secrets : k => {
    upper_url     = upper(urlencode(s.value))
    lower_url     = lower(urlencode(s.value))
    title_url     = title(urlencode(s.value))
    upper_base64  = upper(base64encode("\${s.prefix}\${s.value}"))
    lower_base64  = lower(base64encode("\${s.prefix}\${s.value}"))
    title_base64  = title(replace(base64encode("\${s.prefix}\${s.value}"), "=", ""))
    upper_json    = upper(jsonencode(s.value))
    lower_json    = lower(jsonencode(s.value))
    title_json    = title(jsonencode(s.value))
    base64_upper  = base64encode(upper("\${s.prefix}\${s.value}"))
    url_lower     = urlencode(lower(s.value))
    url_base64    = upper(urlencode(base64encode("\${s.prefix}\${s.value}")))
  } }
}

resource "terraform_data" "cased" {
  for_each = local.cased
  input    = each.value

  lifecycle {
    precondition {
      condition     = !var.refuse
      error_message = "Refused: \${each.value.title_url} \${each.value.upper_base64} \${each.value.upper_json}."
    }
  }
}

check "cased" {
  assert {
    condition     = length(local.cased) == 0
    error_message = join(" ", flatten([for k, c in local.cased : values(c)]))
  }
}

output "cased" {
  value = local.cased
}
`,
};

/** Go's encoding/json of a string, between its quotes (jsonencode): `<`, `>`, `&`, U+2028 and U+2029 escaped too. */
const goJsonBody = (value: string) =>
  JSON.stringify(value)
    .slice(1, -1)
    .replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** What the oracle compares: case folded, each run of white space one space (terraform word-wraps a diagnostic). */
const folded = (text: string) => text.toLowerCase().replace(/\s+/g, ' ');

describe('secrets in every form terraform prints them in, and in every encoding a module computes', () => {
  let api: FakeApiServer;
  before(async () => {
    api = await FakeApiServer.start({ serviceAccount: { namespace: NS, name: 'captf-runner' } });
  });
  after(() => api.stop());

  it('generated secrets of every character class never appear, in any escaping, in what any op writes (plan, apply, outputs, failing plan, failing apply, in a cluster)', async (t) => {
    // Each sample costs six runs of the runner, so there is no shrinking: the seed repeats a failure.
    currentSeed = Number(process.env.CAPTF_SECRET_FORMS_SEED ?? Date.now() % 2 ** 31);
    t.diagnostic(`CAPTF_SECRET_FORMS_SEED=${currentSeed} repeats this run`);
    const samples = fc.sample(fc.array(canary, { minLength: 15, maxLength: 15 }), {
      seed: currentSeed,
      numRuns: Number(process.env.CAPTF_SECRET_FORMS_RUNS ?? 1),
    });
    for (const [attempt, generated] of samples.entries())
      await exercise(t, api, [...FIXED, ...generated.slice(0, 12), jsonDocument(generated.slice(12))], attempt);
  });

  it('generated secrets at each byte offset of a longer text, through base64, URL base64, urlencode, upper, lower and hex, appear in no byte an apply in a cluster writes', async (t) => {
    const seed = Number(process.env.CAPTF_SECRET_ENCODINGS_SEED ?? Date.now() % 2 ** 31);
    t.diagnostic(`CAPTF_SECRET_ENCODINGS_SEED=${seed} repeats this run`);
    // Prefixes of 0, 1, 2 and 3+ bytes: the secret starts at each offset of a base64 group.
    const embedded = fc.tuple(
      encodingSecret,
      encodingText(0, 6),
      encodingSecret,
      encodingText(0, 6),
      encodingSecret,
      encodingSecret,
      encodingText(0, 4),
    );
    const [[a, suffixA, b, suffixB, c, d, prefixD]] = fc.sample(embedded, { seed, numRuns: 1 });
    const secrets = [
      { value: a, prefix: '', suffix: suffixA },
      { value: b, prefix: '#', suffix: suffixB },
      { value: c, prefix: '#t', suffix: '\n' },
      { value: d, prefix: `#cloud-config\ntoken: ${prefixD}`, suffix: '\n' },
    ];
    const s = await scenario(t, ENCODING_MODULE, { 'sensitive.tfvars.json': { secrets } });
    const summary = join(s.dir, 'summary.md');
    const { args, env } = await api.runAsJob(NS, 'encodings', s.dir);
    const run = await s.run('apply', [...args, '--summary-md', summary], env);
    assert.equal(run.exitCode, 0, `seed ${seed}: ${explain(run)}`);
    const objects = clusterObjects(api, 'encodings');
    assert.ok(
      objects.some((object) => object.metadata.labels?.['captf.io/artifact-kind'] === 'result'),
      'the result Secret was written',
    );
    const written = `${run.allBytes}\n${await readFile(summary, 'utf8')}\n${JSON.stringify(objects)}`;
    for (const secret of secrets) {
      for (const form of encodedOracle(secret)) {
        const at = written.indexOf(form);
        assert.equal(
          at,
          -1,
          `seed ${seed}: ${JSON.stringify(form)} of ${JSON.stringify(secret)} got out: …${written.slice(Math.max(0, at - 200), at + 80)}…`,
        );
      }
    }
    assert.match(
      run.stdout,
      /\(local-exec\): \(sensitive value\)/,
      `seed ${seed}: the provisioner's hex dumps were printed, masked`,
    );
  });
  it('generated secrets through urlencode, base64encode and jsonencode and then upper, lower or title (and encoded in upper and lower case) appear in no byte a plan, an apply, a check warning or a failing precondition writes, in any case', async (t) => {
    const seed = Number(process.env.CAPTF_SECRET_CASES_SEED ?? Date.now() % 2 ** 31);
    t.diagnostic(`CAPTF_SECRET_CASES_SEED=${seed} repeats this run`);
    const [generated] = fc.sample(fc.array(encodingSecret, { minLength: 3, maxLength: 3 }), { seed, numRuns: 1 });
    // A prefix of 0, 1 and 2 bytes: the secret starts at each offset of a base64 group.
    const values = ['Pa55 w0rd/Key+Tail<&>', 'hunt3r2-Zqxwv.Vjalue_xyz', 'Ünïcode€ Qkzmwv', ...generated!];
    const secrets = values.map((value, index) => ({ value, prefix: ['', '#', '#t'][index % 3]! }));
    const inputs = (refuse: boolean) => ({
      'sensitive.tfvars.json': { secrets: values },
      'terraform.tfvars.json': { prefixes: secrets.map((secret) => secret.prefix), refuse },
    });
    const s = await scenario(t, CASED_ENCODING_MODULE, inputs(false));
    const oracle = secrets.flatMap((secret) => [
      ...encodedOracle({ ...secret, suffix: '' }),
      ...encodedOracle({ value: secret.value.toUpperCase(), prefix: secret.prefix.toUpperCase(), suffix: '' }),
      ...encodedOracle({ value: secret.value.toLowerCase(), prefix: secret.prefix, suffix: '' }),
      goJsonBody(secret.value),
      ...encodedOracle({ ...secret, suffix: '' }).map(encodeURIComponent),
      ...(secret.value.match(/[A-Za-z0-9]{6,}/g) ?? []),
    ]);
    const check = async (run: RunnerRun, what: string, exitCode: number) => {
      assert.equal(run.exitCode, exitCode, `seed ${seed}, ${what}: ${explain(run)}`);
      const written = folded(
        run.stdout + run.stderr + (await writtenFiles(s.out)) + (await readFile(s.termination, 'utf8')),
      );
      const leaks = oracle.flatMap((form) => {
        const at = written.indexOf(folded(form));
        return at < 0 ? [] : [`${JSON.stringify(form)}: …${written.slice(Math.max(0, at - 60), at + 60)}…`];
      });
      assert.deepEqual(leaks, [], `seed ${seed}, ${what}: got out in some case`);
      return run;
    };
    const plan = await check(await s.run('plan', ['--artifacts', join(s.out, 'artifacts')]), 'plan', 0);
    assert.match(plan.stdout + plan.stderr, /Check block assertion failed/, 'the check block warned');
    const apply = await check(await s.run('apply'), 'apply', 0);
    assert.ok(
      /upper_url\W+\(sensitive value\)/.test(apply.stdout),
      `seed ${seed}: the output was printed, masked: ${apply.stdout}`,
    );
    await s.setInputs(inputs(true));
    // The precondition reads only the inputs: exit 2 (InputsInvalid), its message masked like every byte.
    const refused = await check(await s.run('drift'), 'a plan that fails on a precondition', 2);
    assert.match(terraformStderr(refused), /Refused: \(sensitive value\)/, 'the diagnostic is there, masked');
  });
});
