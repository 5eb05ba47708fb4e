// Negative zero (contract/sections/inputs.md): `{"gen": -0}` and `{"gen": 0}` hashed alike, but terraform
// keeps the sign ("cp-${var.gen}" is cp--0), so an approval of one applied the other. The runner
// refuses a negative zero in either variables file before anything runs. The rest of the class:
// two spellings of one number that terraform itself reads as two numbers; the runner gives
// terraform canonical text, so one inputs hash is one set of values.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Result } from '../../src/schemas/result.ts';
import { resourceIds, type FileTree } from '../support/tf-modules.ts';
import { explain, scenario, type RunnerRun, type Scenario } from '../support/runner.ts';

const IMAGE = 'registry.example/captf-module:1.0.0';
const CANARY = 'CANARY-negzero-5ecret-Qx7';
const CANARY_KEY = 'canary-key-5ecret-Wd2';

/** The module: the control plane is replaced when the text of `gen` changes; nodes by key. */
const module: FileTree = {
  'main.tf': `variable "gen" {
  type = number
}

variable "nodes" {
  type = list(string)
}

variable "api" {
  type    = any
  default = null
}

variable "token" {
  type      = string
  sensitive = true
  default   = ""
}

resource "terraform_data" "control_plane" {
  triggers_replace = "cp-\${var.gen}"
}

resource "terraform_data" "node" {
  for_each = toset(var.nodes)
  input    = each.key
}
`,
};

/** gen 0 and nodes a, b applied. */
async function applied(t: TestContext): Promise<Scenario> {
  const s = await scenario(t, module, { 'terraform.tfvars.json': '{"gen": 0, "nodes": ["a", "b"]}' });
  const first = await s.run('apply', ['--image', IMAGE]);
  assert.equal(first.exitCode, 0, explain(first));
  return s;
}

function assertRefused(run: RunnerRun, message: RegExp): void {
  assert.equal(run.exitCode, 2, explain(run));
  const r = Result.parse(run.result);
  assert.equal(r.outcome, 'invalid');
  assert.equal(r.reason, 'InputsInvalid');
  assert.equal(r.error!.kind, 'usage');
  assert.equal(r.applied, false);
  assert.match(r.message, message);
  assert.equal(
    r.steps.find((step) => step.name === 'plan'),
    undefined,
    'nothing was planned',
  );
}

describe('a negative zero in the inputs', () => {
  it('an approval of {"gen": 0} does not apply {"gen": -0}: refused, the state untouched', async (t) => {
    const s = await applied(t);
    // Inputs A delete node b: blocked, and the person approves A's hash.
    await s.setInputs({ 'terraform.tfvars.json': '{"gen": 0, "nodes": ["a"]}' });
    const blocked = await s.run('apply', ['--image', IMAGE]);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    const before = await s.readState();

    // Inputs B also replace the control plane ("cp--0"), yet hashed like A before the fix.
    await s.setInputs({ 'terraform.tfvars.json': '{"gen": -0, "nodes": ["a"]}' });
    const run = await s.run('apply', ['--image', IMAGE, '--approved-hash', blocked.result!.approvalHash!]);
    assertRefused(
      run,
      /terraform\.tfvars\.json: \$\.gen is a negative zero \(-0\) at line 1 column 9: terraform keeps its sign, so it would render differently from 0; write 0/,
    );
    assert.deepEqual(run.result!.error!.detail, { file: 'terraform.tfvars.json', line: 1, column: 9, path: '$.gen' });
    const after = await s.readState();
    assert.equal(after.serial, before.serial, 'the state must be untouched');
    assert.deepEqual(resourceIds(after), resourceIds(before));
  });

  it('every spelling, at any depth, is refused with its JSON path', async (t) => {
    const s = await applied(t);
    const before = await s.readState();
    await s.setInputs({
      'terraform.tfvars.json': '{"gen": 1, "nodes": ["a", "b"],\n "api": {"ports": [443, -0.000e-3]}}',
    });
    const run = await s.run('apply', ['--image', IMAGE]);
    assertRefused(
      run,
      /terraform\.tfvars\.json: \$\.api\.ports\[1\] is a negative zero \(-0\.000e-3\) at line 2 column 25:/,
    );
    assert.equal((await s.readState()).serial, before.serial);
  });

  it('sensitive.tfvars.json: refused, naming only the variable, and no secret in any output', async (t) => {
    const s = await applied(t);
    const before = await s.readState();
    await s.setInputs({
      'terraform.tfvars.json': '{"gen": 0, "nodes": ["a", "b"]}',
      'sensitive.tfvars.json': `{"token": "${CANARY}", "api": {"${CANARY_KEY}": [1, -0e5]}}`,
    });
    const run = await s.run('apply', ['--image', IMAGE]);
    assertRefused(
      run,
      /sensitive\.tfvars\.json: a number inside \$\.api is a negative zero at line 1 column \d+ \(keys inside a sensitive variable are not named\): terraform keeps its sign/,
    );
    assert.equal((await s.readState()).serial, before.serial);
    for (const secret of [CANARY, CANARY_KEY, '-0e5'])
      assert.ok(!run.allBytes.includes(secret), `${secret} appears in something the runner wrote`);
  });
});

/**
 * The midpoint between two 512-bit numbers (terraform's precision) at 2^-600, written exactly: 575
 * digits × 10^-601. terraform 1.11 rounds it down when spelled `De-601` and up when spelled
 * `D0e-602` (its parser divides by an inexact 5^601), so the two render differently.
 */
const MIDPOINT_DIGITS = ((2n ** 511n + 2n ** 255n + 12345n) * 2n + 1n) * 5n ** 601n;

describe('one inputs hash, one meaning to terraform', () => {
  it('two spellings of one number that terraform reads differently: the second apply changes nothing', async (t) => {
    const size: FileTree = {
      'main.tf':
        'variable "size" {\n  type = number\n}\n\nresource "terraform_data" "control_plane" {\n  triggers_replace = "cp-${var.size}"\n}\n',
    };
    const s = await scenario(t, size, { 'terraform.tfvars.json': `{"size": ${MIDPOINT_DIGITS}e-601}` });
    const first = await s.run('apply', ['--image', IMAGE]);
    assert.equal(first.exitCode, 0, explain(first));
    const before = await s.readState();

    await s.setInputs({ 'terraform.tfvars.json': `{"size": ${MIDPOINT_DIGITS}0e-602}` });
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.inputsHash, first.result!.inputsHash);
    assert.equal(run.result!.outcome, 'noChanges');
    assert.equal(run.result!.plan!.hasResourceChanges, false, 'terraform read the same number');
    const after = await s.readState();
    assert.equal(after.serial, before.serial);
    assert.deepEqual(resourceIds(after), resourceIds(before));
  });
});
