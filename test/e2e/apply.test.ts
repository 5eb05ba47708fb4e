// The guarded apply, end to end: the real terraform, real modules, local state. Every test checks
// the state afterwards, not only what the runner says about itself.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { modules, resourceIds, terraformEnv, type FileTree } from '../support/tf-modules.ts';
import { explain, recordedInputsHash, scenario, type Scenario } from './runner.ts';

const CANARY = 'CANARY-e2e-5ecret-Zq9';
const IMAGE = 'registry.example/captf-module:1.0.0';

/** A scenario whose base module is applied already. */
async function applied(t: TestContext, base: FileTree = modules.base): Promise<Scenario> {
  const s = await scenario(t, base, { 'terraform.tfvars.json': { admin_token: CANARY } });
  const first = await s.run('apply', ['--image', IMAGE]);
  assert.equal(first.exitCode, 0, explain(first));
  return s;
}

function assertNoCanary(run: { allBytes: string }) {
  assert.ok(!run.allBytes.includes(CANARY), 'the sensitive value appears in something the runner wrote');
}

describe('apply: the guarded apply', () => {
  it('first apply creates everything and records the inputs hash in the state', async (t) => {
    const s = await scenario(t, modules.base, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'succeeded');
    assert.equal(r.reason, 'ApplySucceeded');
    assert.equal(r.applied, true);
    assert.equal(r.plan!.counts.create, 9);
    assert.equal(r.plan!.destructiveTotal, 0);
    assert.match(r.inputsHash!, /^[0-9a-f]{64}$/);
    assert.equal(r.approvalHash, r.inputsHash);
    const state = await s.readState();
    assert.equal(recordedInputsHash(state), r.inputsHash);
    assert.equal(r.stateInputsHash, r.inputsHash);
    assert.ok(resourceIds(state)['terraform_data.cluster']);
    assert.equal(r.outputs!.admin_token!.sensitive, true);
    assert.equal(r.outputs!.admin_token!.value, undefined);
    assert.ok(r.outputs!.cluster_id!.known);
    assert.deepEqual(r.steps.map((step) => step.name), ['preflight', 'inputs', 'workspace', 'init', 'validate', 'state before', 'plan', 'plan hash', 'show', 'backup', 'plan check', 'apply', 'state after']);
    assert.equal(r.steps.find((step) => step.name === 'backup')!.status, 'skipped', 'no state yet: nothing to back up');
    assertNoCanary(run);
    const termination = JSON.parse(await import('node:fs/promises').then((fs) => fs.readFile(s.termination, 'utf8')));
    assert.equal(termination.outcome, 'succeeded');
  });

  it('outputs: read from the state after the apply, exactly as terraform output -json reports them, sensitive values left out', async (t) => {
    const extra = `output "count" {\n  value = 3\n}\noutput "enabled" {\n  value = true\n}\noutput "zones" {\n  value = ["a", "b"]\n}\n` +
      `output "nothing" {\n  value = null\n}\noutput "settings" {\n  value = { size = 2, tags = { env = "dev" } }\n}\n` +
      `output "key" {\n  value     = { token = var.admin_token, id = 7 }\n  sensitive = true\n}\n`;
    const s = await scenario(t, { ...modules.base, 'more-outputs.tf': extra }, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const shown = JSON.parse((await execa('terraform', ['output', '-json', `-state=${s.state}`], { cwd: s.dir, env: terraformEnv(), extendEnv: false })).stdout) as Record<string, { sensitive: boolean; type: unknown; value: unknown }>;
    const expected = Object.fromEntries(
      Object.entries(shown).map(([name, o]) => [name, o.sensitive ? { sensitive: true, known: true, type: o.type } : { sensitive: false, known: true, type: o.type, value: o.value }]),
    );
    assert.deepEqual(run.result!.outputs, expected);
    assert.deepEqual(Object.keys(expected).sort(), ['admin_token', 'cluster_id', 'count', 'enabled', 'key', 'node_ids', 'settings', 'zones']);
    assertNoCanary(run);
  });

  it('no changes: the apply step is skipped and the state is untouched', async (t) => {
    const s = await applied(t);
    const serial = (await s.readState()).serial;
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.outcome, 'noChanges');
    assert.equal(run.result!.applied, false);
    assert.equal(run.result!.steps.find((step) => step.name === 'apply')!.status, 'skipped');
    assert.equal((await s.readState()).serial, serial);
  });

  it('new inputs that change no resource still record the new hash (outcome noChanges)', async (t) => {
    const s = await applied(t);
    const before = await s.readState();
    const run = await s.run('apply', ['--image', 'registry.example/captf-module:1.0.1']);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.outcome, 'noChanges');
    assert.equal(run.result!.applied, true);
    assert.equal(run.result!.plan!.hasResourceChanges, false);
    const after = await s.readState();
    assert.notEqual(recordedInputsHash(after), recordedInputsHash(before));
    assert.equal(recordedInputsHash(after), run.result!.inputsHash);
    assert.deepEqual(resourceIds(after), resourceIds(before));
  });

  it('an in-place update applies without approval', async (t) => {
    const s = await applied(t);
    const before = resourceIds(await s.readState());
    await s.useModule(modules.update);
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.outcome, 'succeeded');
    assert.equal(run.result!.plan!.counts.update, 1);
    assert.equal(run.result!.approval!.required, false);
    assert.deepEqual(resourceIds(await s.readState()), before);
  });

  for (const [name, tree, address, action] of [
    ['replace (delete, create)', modules.replace, 'terraform_data.cluster', 'replace'],
    ['replace (create, delete)', modules.replaceCreateBeforeDestroy, 'terraform_data.cluster', 'replace'],
    ['delete by removal', modules.deleteByRemoval, 'terraform_data.network', 'delete'],
    ['delete by count', modules.shrinkCount, 'terraform_data.replica[2]', 'delete'],
    ['delete by for_each key', modules.removeForEachKey, 'terraform_data.node["b"]', 'delete'],
    ['delete by a removed module call', modules.removeModuleCall, 'module.addon.terraform_data.this', 'delete'],
  ] as const) {
    it(`${name}: blocked without approval, nothing applied`, async (t) => {
      const s = await applied(t);
      const before = await s.readState();
      await s.useModule(tree);
      const run = await s.run('apply', ['--image', IMAGE, '--object', 'demo', '--namespace', 'team-a']);
      assert.equal(run.exitCode, 3, explain(run));
      const r = run.result!;
      assert.equal(r.outcome, 'blocked');
      assert.equal(r.reason, 'DestructivePlanBlocked');
      assert.equal(r.error!.kind, 'blocked');
      assert.equal(r.applied, false);
      assert.ok(r.plan!.destructive.some((d) => d.address === address && d.action === action), JSON.stringify(r.plan!.destructive));
      assert.equal(r.annotations['captf.io/destructive-plan-blocked'], r.approvalHash);
      assert.equal(r.approveCommand, `kubectl annotate terraformcluster demo -n team-a captf.io/approve-destructive-plan=${r.approvalHash} --overwrite`);
      assert.match(r.message, new RegExp(`${address.replace(/[[\]."]/g, '\\$&')} \\(${action}\\)`));
      assert.match(r.message, /Nothing was applied/);
      const after = await s.readState();
      assert.equal(after.serial, before.serial, 'the state must be untouched');
      assert.deepEqual(resourceIds(after), resourceIds(before));
      assert.match(run.stdout, new RegExp(address.replace(/[[\]."]/g, '\\$&')));
      assertNoCanary(run);
    });
  }

  it('blocked, then approved by the inputs hash: the replace is applied', async (t) => {
    const s = await applied(t);
    const before = resourceIds(await s.readState());
    await s.useModule(modules.replace);
    const blocked = await s.run('apply', ['--image', IMAGE]);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    const approvedRun = await s.run('apply', ['--image', IMAGE, '--approved-hash', blocked.result!.approvalHash!]);
    assert.equal(approvedRun.exitCode, 0, explain(approvedRun));
    assert.equal(approvedRun.result!.outcome, 'succeeded');
    const { blockedRun, ...approval } = approvedRun.result!.approval!;
    assert.deepEqual(approval, { given: true, matched: true, required: true, unreviewed: [], unreviewedTotal: 0 });
    assert.equal(blockedRun?.finishedAt, blocked.result!.finishedAt);
    const after = await s.readState();
    assert.notEqual(resourceIds(after)['terraform_data.cluster'], before['terraform_data.cluster']);
    assert.equal(resourceIds(after)['terraform_data.network'], before['terraform_data.network']);
    assert.equal(recordedInputsHash(after), approvedRun.result!.inputsHash);
  });

  it('an approval of another hash approves nothing and is not an error', async (t) => {
    const s = await applied(t);
    await s.useModule(modules.replace);
    for (const other of ['0'.repeat(64), 'not-a-hash', '']) {
      const run = await s.run('apply', ['--image', IMAGE, '--approved-hash', other]);
      assert.equal(run.exitCode, 3, explain(run));
      assert.equal(run.result!.approval!.matched, false);
    }
    const run = await s.run('apply', ['--image', IMAGE, '--approved-hash', 'f'.repeat(64)]);
    assert.equal(run.exitCode, 3, explain(run));
    assert.equal(run.result!.reason, 'DestructivePlanBlocked');
    assert.match(run.stderr, /approves nothing/);
  });

  it('forget, move and import are not destructive', async (t) => {
    for (const [tree, counter] of [[modules.forget, 'forget'], [modules.moved, 'move'], [modules.importBlock, 'import']] as const) {
      const s = await applied(t);
      await s.useModule(tree);
      const run = await s.run('apply', ['--image', IMAGE]);
      assert.equal(run.exitCode, 0, `${counter}: ${explain(run)}`);
      assert.equal(run.result!.outcome, 'succeeded');
      assert.equal(run.result!.plan!.counts[counter], 1);
      assert.equal(run.result!.plan!.destructiveTotal, 0);
      const ids = resourceIds(await s.readState());
      if (counter === 'forget') assert.equal(ids['terraform_data.network'], undefined);
      if (counter === 'move') assert.ok(ids['terraform_data.vpc']);
      if (counter === 'import') assert.equal(ids['terraform_data.imported'], 'imported-id-123');
    }
  });

  it('an output-only change applies without approval', async (t) => {
    const s = await applied(t);
    await s.useModule(modules.outputOnly);
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.outcome, 'succeeded');
    assert.equal(run.result!.plan!.hasOutputChanges, true);
    assert.equal(run.result!.plan!.hasResourceChanges, false);
    assert.equal(run.result!.outputs!.region!.value, 'eu-west-1');
  });

  it('guard off (machines): a replace is applied, still classified', async (t) => {
    const s = await applied(t);
    const before = resourceIds(await s.readState());
    await s.useModule(modules.replace);
    const run = await s.run('apply', ['--image', IMAGE, '--kind', 'machine', '--guard', 'off']);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.plan!.destructive[0]!.action, 'replace');
    assert.notEqual(resourceIds(await s.readState())['terraform_data.cluster'], before['terraform_data.cluster']);
  });

  it('a plan error applies nothing', async (t) => {
    const s = await applied(t);
    const before = await s.readState();
    await s.useModule(modules.failingPrecondition);
    const run = await s.run('apply', ['--image', IMAGE, '--approved-hash', 'f'.repeat(64)]);
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.outcome, 'failed');
    assert.equal(run.result!.error!.step, 'plan');
    assert.match(run.result!.message, /precondition/i);
    assert.equal(run.result!.applied, false);
    assert.equal((await s.readState()).serial, before.serial);
  });

  it('an apply that fails half way never records the new inputs hash', async (t) => {
    const s = await applied(t);
    const oldHash = recordedInputsHash(await s.readState());
    await s.useModule(modules.failingApply);
    const run = await s.run('apply', ['--image', 'registry.example/captf-module:2.0.0']);
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.outcome, 'failed');
    assert.equal(run.result!.error!.step, 'apply');
    assert.equal(run.result!.mayHaveChanged, true);
    const state = await s.readState();
    assert.ok(resourceIds(state)['terraform_data.step["first"]'], 'part of the change was applied');
    assert.equal(recordedInputsHash(state), oldHash);
    assert.equal(run.result!.stateInputsHash, oldHash);
    assert.notEqual(run.result!.inputsHash, oldHash);
  });

  it('a failed delete of a resource that left the configuration never records the new hash', async (t) => {
    const s = await applied(t);
    const oldHash = recordedInputsHash(await s.readState());
    // terraform_data.network leaves the configuration; its delete runs a destroy-time provisioner that fails.
    await s.useModule({
      ...modules.deleteByRemoval,
      'removed.tf': 'removed {\n  from = terraform_data.network\n  lifecycle {\n    destroy = true\n  }\n  provisioner "local-exec" {\n    when    = destroy\n    command = "exit 1"\n  }\n}\n',
    });
    const run = await s.run('apply', ['--image', 'registry.example/captf-module:3.0.0', '--kind', 'machine', '--guard', 'off']);
    assert.equal(run.exitCode, 1, explain(run));
    const state = await s.readState();
    assert.ok(resourceIds(state)['terraform_data.network'], 'the failed delete left it in the state');
    assert.equal(recordedInputsHash(state), oldHash, 'the record waits for the deletes of what it depended on');
  });

  it('a failed delete of a resource that only a failed apply created never records the new hash', async (t) => {
    const s = await applied(t);
    const oldHash = recordedInputsHash(await s.readState());
    // Each step: the base module plus one file, applied unguarded; the apply fails.
    const failingApply = async (file: string, hcl: string, image: string) => {
      await s.useModule({ ...modules.base, [file]: hcl });
      const run = await s.run('apply', ['--image', image, '--kind', 'machine', '--guard', 'off']);
      assert.equal(run.exitCode, 1, explain(run));
      return { run, state: await s.readState() };
    };
    // terraform_data.extra is created by an apply that fails (terraform_data.bad), which does not
    // rewrite the record's value.
    const { state: afterFailure } = await failingApply(
      'extra.tf',
      'resource "terraform_data" "extra" {}\nresource "terraform_data" "bad" {\n  depends_on = [terraform_data.extra]\n  provisioner "local-exec" {\n    command = "exit 1"\n  }\n}\n',
      'registry.example/captf-module:2.0.0',
    );
    assert.ok(resourceIds(afterFailure)['terraform_data.extra'], 'the failed apply created extra');
    assert.equal(recordedInputsHash(afterFailure), oldHash);
    // Why the next apply stays safe: terraform stored the record's new dependencies, extra among
    // them, though it did not write the record's value.
    const record = afterFailure.resources.find((r) => r.name === 'captf_inputs_hash')!;
    assert.ok((record.instances[0] as { dependencies?: string[] }).dependencies?.includes('terraform_data.extra'), JSON.stringify(record));
    // extra leaves the configuration and its delete fails.
    const { run, state } = await failingApply(
      'removed.tf',
      'removed {\n  from = terraform_data.extra\n  lifecycle {\n    destroy = true\n  }\n  provisioner "local-exec" {\n    when    = destroy\n    command = "exit 1"\n  }\n}\n',
      'registry.example/captf-module:3.0.0',
    );
    assert.ok(resourceIds(state)['terraform_data.extra'], 'the failed delete left extra in the state');
    assert.equal(recordedInputsHash(state), oldHash, 'a failed apply never records its inputs hash');
    assert.equal(run.result!.stateInputsHash, oldHash);
  });

  it('a deposed object left by a failed create-before-destroy is destructive and named with its key', async (t) => {
    // As terraform 1.11 does it: A (create_before_destroy, replaced) and B replaced after it, whose create
    // fails: A's old object stays deposed, and the next plan deletes it.
    const module = {
      'main.tf': `variable "generation" {
  type = string
}
variable "fail" {
  type = bool
}
resource "terraform_data" "a" {
  triggers_replace = var.generation
  lifecycle {
    create_before_destroy = true
  }
}
resource "terraform_data" "b" {
  triggers_replace = terraform_data.a.id
  provisioner "local-exec" {
    command = var.fail ? "exit 1" : "true"
  }
  lifecycle {
    create_before_destroy = true
  }
}
`,
    };
    const s = await scenario(t, module, { 'terraform.tfvars.json': { generation: '1', fail: false } });
    const unguarded = ['--kind', 'machine', '--guard', 'off'];
    assert.equal((await s.run('apply', unguarded)).exitCode, 0);
    await s.setInputs({ 'terraform.tfvars.json': { generation: '2', fail: true } });
    const failed = await s.run('apply', unguarded);
    assert.equal(failed.exitCode, 1, explain(failed));
    const deposedInState = (await s.readState()).resources.find((r) => r.name === 'a')!.instances.find((i) => i.deposed);
    assert.ok(deposedInState, 'the failed apply left a deposed object');

    await s.setInputs({ 'terraform.tfvars.json': { generation: '2', fail: false } });
    const blocked = await s.run('apply', ['--kind', 'pool']);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    const entry = blocked.result!.plan!.destructive.find((d) => d.deposed !== undefined);
    assert.ok(entry, JSON.stringify(blocked.result!.plan!.destructive));
    assert.equal(entry!.address, 'terraform_data.a');
    assert.equal(entry!.deposed, deposedInState!.deposed);
    assert.equal(entry!.action, 'delete');
    assert.ok((await s.readState()).resources.find((r) => r.name === 'a')!.instances.some((i) => i.deposed), 'nothing was applied');
  });

  it('an input file named like configuration stays data', async (t) => {
    const s = await scenario(t, modules.base, {
      'terraform.tfvars.json': { admin_token: CANARY },
      'evil.tf': 'resource "terraform_data" "evil" {}\n',
      'extra.auto.tfvars': 'cluster_name = "hijacked"\n',
    });
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const ids = resourceIds(await s.readState());
    assert.equal(ids['terraform_data.evil'], undefined);
    const cluster = (await s.readState()).resources.find((r) => r.name === 'cluster')!.instances[0]!.attributes.input as { value: { name: string } };
    assert.equal(cluster.value.name, 'demo', 'an input named *.auto.tfvars set no variable');
    assert.ok(!JSON.stringify(await s.readState()).includes('hijacked'));
  });
});

describe('apply: pools', () => {
  it('the approval hash ignores bootstrap_data; a blocked exports change is approved by it', async (t) => {
    const s = await scenario(t, modules.pool, { 'terraform.tfvars.json': { bootstrap_data: 'boot-1', captf_cluster_outputs: { endpoint: 'https://a:6443' } } });
    const first = await s.run('apply', ['--image', IMAGE, '--kind', 'pool']);
    assert.equal(first.exitCode, 0, explain(first));
    assert.notEqual(first.result!.approvalHash, first.result!.inputsHash);

    await s.setInputs({ 'terraform.tfvars.json': { bootstrap_data: 'boot-2', captf_cluster_outputs: { endpoint: 'https://b:6443' } } });
    const blocked = await s.run('apply', ['--image', IMAGE, '--kind', 'pool', '--object', 'workers', '--namespace', 'ns']);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    assert.match(blocked.result!.approveCommand!, /^kubectl annotate terraformmachinepool workers -n ns /);

    // A pool's approval names its approval hash: its inputs hash approves nothing.
    const byInputsHash = await s.run('apply', ['--image', IMAGE, '--kind', 'pool', '--approved-hash', blocked.result!.inputsHash!]);
    assert.equal(byInputsHash.exitCode, 3, explain(byInputsHash));

    // A bootstrap rotation changes the inputs hash, not the approval hash.
    await s.setInputs({ 'terraform.tfvars.json': { bootstrap_data: 'boot-3', captf_cluster_outputs: { endpoint: 'https://b:6443' } } });
    const approved = await s.run('apply', ['--image', IMAGE, '--kind', 'pool', '--approved-hash', blocked.result!.approvalHash!]);
    assert.equal(approved.exitCode, 0, explain(approved));
    assert.equal(approved.result!.approvalHash, blocked.result!.approvalHash);
    assert.notEqual(approved.result!.inputsHash, blocked.result!.inputsHash);
    assert.equal(recordedInputsHash(await s.readState()), approved.result!.inputsHash);
  });
});
