// The runner's reserved record, terraform_data.captf_inputs_hash, end to end (contract/sections/classification.md §1, reserved addresses): with a
// state that has no record yet, a `moved` block into it made terraform replace the cluster object
// while the runner reported no destructive change. The scan refuses such a module before terraform
// runs; where the scan cannot see (a plan made without it, a state adopted from plain terraform),
// the classifier fails closed. Real terraform, local state; every refusal is checked on the state.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { runProcess } from '../support/exec.ts';
import { createReadStream } from 'node:fs';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Classification } from '../../src/schemas/classification.ts';
import { classifyPlanStream } from '../../src/plan/stream.ts';
import { scanHcl } from '../../src/workspace/scan-hcl.ts';
import { INPUTS_HASH_RESOURCE, INPUTS_HASH_VARIABLE } from '../../src/workspace/reserved-names.ts';
import { inputsHashConfig, localBackendConfig } from '../../src/workspace/workspace.ts';
import {
  readLocalState,
  resourceIds,
  runTestTerraform,
  tempDir,
  testTerraformEnv,
  writeTree,
  type FileTree,
} from '../support/tf-modules.ts';
import { explain, recordedInputsHash, RUNNER, scenario, type Scenario } from '../support/runner.ts';
import { stateOnce } from './state-once.support.ts';

/** `triggers_replace` differs from the record's configuration: moved into the record, the cluster object is replaced. */
const CLUSTER = `resource "terraform_data" "cluster" {
  input            = "cluster-1"
  triggers_replace = "v1"
}
`;

const FAIL_VARIABLE = `variable "fail_bootstrap" {
  type    = bool
  default = false
}
`;

/**
 * The first module: with fail_bootstrap, the bootstrap's precondition fails during the apply (it
 * reads the cluster's id, unknown at plan time), after the cluster exists and before the record.
 */
const FIRST: FileTree = {
  'main.tf': `${CLUSTER}
${FAIL_VARIABLE}
resource "terraform_data" "bootstrap" {
  input = terraform_data.cluster.id

  lifecycle {
    precondition {
      condition     = !var.fail_bootstrap || terraform_data.cluster.id == "no such id"
      error_message = "The bootstrap fails on purpose."
    }
  }
}
`,
};

/** The next module: the cluster block is gone and a moved block sends its object to the record's address. */
const MOVED_INTO_RECORD: FileTree = {
  'main.tf': FAIL_VARIABLE,
  'moves.tf': `# The cluster "becomes" the runner's record.
moved {
  from = terraform_data.cluster
  to   = terraform_data.captf_inputs_hash
}
`,
};

const RESERVED_WHY = new RegExp(
  `^${INPUTS_HASH_RESOURCE.replace('.', '\\.')} is reserved for the runner's own resource`,
);

/** The state the runner's first apply left: it created the cluster and failed at the bootstrap (made once for the file). */
const failedFirstApply = stateOnce(async (t) => {
  const s = await scenario(t, FIRST, { 'terraform.tfvars.json': { fail_bootstrap: true } });
  const first = await s.run('apply');
  assert.equal(first.exitCode, 1, explain(first));
  assert.equal(first.result!.reason, 'ApplyFailed');
  const state = await s.readState();
  assert.equal(recordedInputsHash(state), undefined, 'the failed apply must not write the record');
  assert.deepEqual(Object.keys(resourceIds(state)), ['terraform_data.cluster'], 'the cluster exists, nothing else');
  return s;
});

/** A state without the record, and the inputs of a run that would succeed. */
async function stateWithoutRecord(t: TestContext): Promise<Scenario> {
  const s = await scenario(t, FIRST, { 'terraform.tfvars.json': { fail_bootstrap: false } });
  await failedFirstApply(s);
  return s;
}

describe("reserved address: a moved block into the runner's record over a state without one", () => {
  it('the scan refuses the module: exit 4, the file and line named, the state untouched', async (t) => {
    const s = await stateWithoutRecord(t);
    const before = await readFile(s.state);
    await s.useModule(MOVED_INTO_RECORD);
    const run = await s.run('apply');
    assert.equal(run.exitCode, 4, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'invalid');
    assert.equal(r.reason, 'ImageInvalid');
    assert.equal(r.error!.kind, 'image');
    assert.equal(r.error!.step, 'workspace');
    assert.ok(
      r.error!.message.includes(`${join(s.module, 'moves.tf')}:4: moved { to = ${INPUTS_HASH_RESOURCE} }`),
      r.error!.message,
    );
    assert.match(r.error!.message, /rename or remove that block/);
    assert.equal(r.applied, false);
    assert.ok(!r.steps.some((step) => step.name === 'init'), 'terraform never ran');
    assert.deepEqual(await readFile(s.state), before, 'the state must be untouched');
  });

  it('were the scan bypassed, the classifier fails closed on the plan terraform makes of it', async (t) => {
    const s = await stateWithoutRecord(t);
    // The root the runner would build, by hand: the module, the injected record, a local backend on a copy of the state.
    const root = await tempDir(t, 'captf-reserved-root-');
    await writeTree(root, MOVED_INTO_RECORD);
    await writeFile(join(root, 'captf_runner_inputs_hash.tf'), inputsHashConfig(scanHcl(FAIL_VARIABLE)));
    await copyFile(s.state, join(root, 'copy.tfstate'));
    await writeFile(join(root, 'captf_runner_backend_override.tf'), localBackendConfig(join(root, 'copy.tfstate')));
    const terraform = async (args: string[]) => {
      const run = await runTestTerraform(root, args);
      assert.equal(run.exitCode, 0, `terraform ${args[0]}: ${run.stderr}`);
      return run.stdout;
    };
    await terraform(['init', '-input=false', '-no-color']);
    const human = await terraform([
      'plan',
      '-input=false',
      '-no-color',
      '-out=plan.tfplan',
      '-var',
      `${INPUTS_HASH_VARIABLE}=${'a'.repeat(64)}`,
    ]);
    assert.match(
      human,
      /terraform_data\.captf_inputs_hash must be replaced\s+# \(moved from terraform_data\.cluster\)/,
    );
    await writeFile(join(root, 'plan.json'), await terraform(['show', '-json', 'plan.tfplan']));

    // Classified exactly as the runner's show step does.
    const plan = await classifyPlanStream(createReadStream(join(root, 'plan.json')), {
      ignoreAddresses: new Set([INPUTS_HASH_RESOURCE]),
    });
    assert.equal(plan.gated, true);
    assert.equal(plan.destructive.length, 1, JSON.stringify(plan.destructive));
    const [entry] = plan.destructive;
    assert.equal(entry!.address, INPUTS_HASH_RESOURCE);
    assert.equal(entry!.action, 'replace');
    assert.match(entry!.why!, RESERVED_WHY);
    assert.match(entry!.why!, /moved from terraform_data\.cluster/);

    // The built runner's classify command applies the same reserved-address rules: its verdict is the apply's.
    const cli = await runProcess(process.execPath, [RUNNER, 'classify', '--json', join(root, 'plan.json')], {
      env: testTerraformEnv(),
    });
    assert.equal(cli.exitCode, 0, cli.stderr);
    const classified = JSON.parse(cli.stdout) as Classification;
    assert.equal(classified.gated, true);
    assert.deepEqual(classified, plan, 'classify says what the apply decided');
    assert.match(classified.destructive.find((d) => d.address === INPUTS_HASH_RESOURCE)!.why!, RESERVED_WHY);
  });
});

describe('reserved address: what the scan cannot see', () => {
  it("a state adopted from plain terraform with an object at the record's index 0: the implied move that replaces it is blocked", async (t) => {
    // Plain terraform made this state: no runner, no scan, an object at terraform_data.captf_inputs_hash[0].
    const plain = await tempDir(t, 'captf-reserved-plain-');
    await writeTree(plain, {
      'main.tf': `${CLUSTER}
resource "terraform_data" "captf_inputs_hash" {
  count            = 1
  input            = "someone else's object"
  triggers_replace = "v1"
}
`,
    });
    for (const args of [
      ['init', '-input=false', '-no-color'],
      ['apply', '-input=false', '-no-color', '-auto-approve'],
    ]) {
      const run = await runTestTerraform(plain, args);
      assert.equal(run.exitCode, 0, run.stderr);
    }
    const s = await scenario(t, { 'main.tf': CLUSTER });
    await copyFile(join(plain, 'terraform.tfstate'), s.state);
    const before = await readFile(s.state);
    const adoptedIds = resourceIds(await readLocalState(s.state));
    assert.ok(adoptedIds[`${INPUTS_HASH_RESOURCE}[0]`]);

    // The module names nothing reserved: terraform's own implied move (count → no count) is what moves the object.
    const run = await s.run('apply');
    assert.equal(run.exitCode, 3, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'blocked');
    assert.equal(r.reason, 'DestructivePlanBlocked');
    assert.equal(r.applied, false);
    const entry = r.plan!.destructive.find((d) => d.address === INPUTS_HASH_RESOURCE);
    assert.ok(entry, JSON.stringify(r.plan!.destructive));
    assert.equal(entry.action, 'replace');
    assert.match(entry.why!, RESERVED_WHY);
    assert.match(entry.why!, /moved from terraform_data\.captf_inputs_hash\[0\]/);
    assert.deepEqual(await readFile(s.state), before, 'the state must be untouched');

    // A refresh would carry out the same move (a refresh-only plan reports it as drift): refused.
    const refresh = await s.run('refresh');
    assert.equal(refresh.exitCode, 4, explain(refresh));
    assert.equal(refresh.result!.reason, 'RefreshRefused');
    assert.equal(refresh.result!.error!.step, 'decide');
    assert.match(refresh.result!.message, /moved from terraform_data\.captf_inputs_hash\[0\]/);
    assert.equal(refresh.result!.applied, false);
    assert.deepEqual(await readFile(s.state), before, 'the refresh applied nothing');
  });
});
