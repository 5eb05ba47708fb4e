// Issue 17 §3, CI and review, end to end with the real terraform: the drift report tells what changed
// outside terraform from where the inputs differ from the state, and the summary's counts agree with
// terraform's own "Plan:" line in the same log, or say why they differ.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modules, NEWER_TERRAFORM, newerTerraformEnv, type TerraformState } from '../support/tf-modules.ts';
import { explain, scenario, type Scenario } from './runner.ts';

const IMAGE = 'registry.example/captf-module:1.0.0';

async function applied(t: TestContext): Promise<{ s: Scenario; stdout: string }> {
  const s = await scenario(t, modules.base);
  const first = await s.run('apply', ['--image', IMAGE]);
  assert.equal(first.exitCode, 0, explain(first));
  return { s, stdout: first.stdout };
}

/** Edits one resource's `input` in the local state file, as an outside writer of the state would. */
async function editInput(s: Scenario, name: string, value: unknown): Promise<void> {
  const state = JSON.parse(await readFile(s.state, 'utf8')) as TerraformState;
  const resource = state.resources.find((r) => !r.module && r.name === name)!;
  resource.instances[0]!.attributes.input = { value, type: 'string' };
  state.serial += 1;
  await writeFile(s.state, JSON.stringify(state, null, 2));
}

/** terraform's own count lines in the log (the held plan is printed before the summary). */
const terraformLines = (stdout: string) => [...stdout.matchAll(/^(Plan: .*\.)$/gm)].map((m) => m[1]);

describe('the drift report', () => {
  it('an edited state: nothing changed outside terraform, the inputs differ from the state at the address named', async (t) => {
    const { s } = await applied(t);
    await editInput(s, 'network', '10.9.0.0/16');
    const run = await s.run('drift', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.reason, 'DriftFound');
    assert.deepEqual(r.drift!.inputsDiffer, [{ address: 'terraform_data.network', actions: ['update'] }]);
    assert.equal(r.drift!.inputsDifferTotal, 1);
    assert.equal(r.drift!.resourceDriftTotal, 0);
    assert.match(
      r.message,
      /^Drift found: nothing was reported changed outside terraform; the inputs differ from the state \(1: the inputs or the module ask for other values than the state records\): terraform_data\.network \(update\)\. A remediation apply would 0 to create, 1 to update, /,
    );
  });

  it('an object terraform reports changed outside terraform is told apart from one whose inputs differ', async (t) => {
    const { s } = await applied(t);
    await editInput(s, 'network', '10.9.0.0/16');
    await s.useModule(modules.update); // terraform_data.cluster: update, from the module
    // terraform_data only drifts through its state; what a provider's refresh finds is added to the real plan document.
    const add = join(s.dir, 'drift.json');
    await writeFile(add, JSON.stringify({ resource_drift: [{ address: 'terraform_data.network', mode: 'managed', type: 'terraform_data', name: 'network', change: { actions: ['update'] } }] }));
    const run = await s.run('drift', ['--image', IMAGE, '--terraform', NEWER_TERRAFORM], newerTerraformEnv({ showAdd: add }));
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.deepEqual(r.drift!.resourceDrift.map((d) => d.address), ['terraform_data.network']);
    assert.deepEqual(r.drift!.inputsDiffer, [{ address: 'terraform_data.cluster', actions: ['update'] }]);
    assert.match(r.message, /^Drift found: changed outside terraform \(1\): terraform_data\.network; the inputs differ from the state \(1: [^)]*\): terraform_data\.cluster \(update\)\. A remediation apply would 0 to create, 2 to update/);
  });
});

describe("the counts and terraform's own line", () => {
  it("the first apply: terraform counts the runner's record, and the summary quotes its line and says so", async (t) => {
    const { s, stdout } = await applied(t);
    assert.deepEqual(terraformLines(stdout), ['Plan: 10 to add, 0 to change, 0 to destroy.']);
    assert.match(stdout, /^plan: 9 to create, 0 to update, 0 to replace, 0 to delete, 0 to forget, 0 to import, 0 to move; outputs change; terraform's own count: "Plan: 10 to add, 0 to change, 0 to destroy\." \(it counts the runner's record terraform_data\.captf_inputs_hash \(create\), which the runner never counts/m);
    // A replace: terraform counts an add and a destroy; the record is kept as it is, so only the replace explains the difference.
    await s.useModule(modules.replace);
    const replace = await s.run('apply', ['--image', IMAGE, '--approved-hash', (await s.run('apply', ['--image', IMAGE])).result!.approvalHash!]);
    assert.equal(replace.exitCode, 0, explain(replace));
    const [line] = terraformLines(replace.stdout);
    assert.equal(line, 'Plan: 1 to add, 0 to change, 1 to destroy.');
    assert.ok(replace.stdout.includes(`terraform's own count: "${line}" (it counts each replace as an add and a destroy)\n`), replace.stdout);
  });

  it('a destroy: terraform counts the record among what it destroys', async (t) => {
    const { s } = await applied(t);
    const run = await s.run('destroy', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const [line] = terraformLines(run.stdout);
    assert.equal(line, 'Plan: 0 to add, 0 to change, 10 to destroy.');
    assert.match(run.stdout, new RegExp(`terraform's own count: "${line.replace(/\./g, '\\.')}" \\(it counts the runner's record terraform_data\\.captf_inputs_hash \\(delete\\)`));
    assert.match(run.result!.message, /^Destroyed 9 resource instances\.$/);
  });
});
