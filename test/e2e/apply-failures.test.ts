// The guarded apply when terraform fails, end to end with the real terraform: a failed plan or apply
// never records the new inputs hash, and what a failed apply left is classified. Every test checks the state.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { modules, resourceIds } from '../support/tf-modules.ts';
import { applied, IMAGE } from './apply.support.ts';
import { explain, recordedInputsHash, scenario } from '../support/runner.ts';

describe('apply: failures', () => {
  it('a plan error applies nothing (a precondition that reads only the inputs: exit 2)', async (t) => {
    const s = await applied(t);
    const before = await s.readState();
    await s.useModule(modules.failingPrecondition);
    const run = await s.run('apply', ['--image', IMAGE, '--approved-hash', 'f'.repeat(64)]);
    assert.equal(run.exitCode, 2, explain(run));
    assert.equal(run.result!.outcome, 'invalid');
    assert.equal(run.result!.reason, 'InputsInvalid');
    assert.equal(run.result!.error!.step, 'plan');
    assert.match(run.result!.message, /precondition/i);
    assert.equal(run.result!.applied, false);
    assert.equal((await s.readState()).serial, before.serial);
  });

  it('terraform killed by SIGKILL from outside (an OOM kill): the message names the likely cause, never the glyph of a cut-off line', async (t) => {
    const s = await applied(t);
    const oldHash = recordedInputsHash(await s.readState());
    await s.useModule({
      ...modules.base,
      'killer.tf':
        'resource "terraform_data" "killer" {\n  provisioner "local-exec" {\n    command = "kill -KILL $PPID"\n  }\n}\n',
    });
    const run = await s.run('apply', ['--image', 'registry.example/captf-module:2.0.0']);
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.reason, 'ApplyFailed');
    assert.equal(
      run.result!.message,
      "terraform apply was killed by SIGKILL (from outside terraform: a container's memory limit, OOMKilled, is the usual cause)",
    );
    assert.equal(run.result!.mayHaveChanged, true);
    assert.equal(recordedInputsHash(await s.readState()), oldHash, 'the killed apply recorded no new hash');
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
      'removed.tf':
        'removed {\n  from = terraform_data.network\n  lifecycle {\n    destroy = true\n  }\n  provisioner "local-exec" {\n    when    = destroy\n    command = "exit 1"\n  }\n}\n',
    });
    const run = await s.run('apply', [
      '--image',
      'registry.example/captf-module:3.0.0',
      '--kind',
      'machine',
      '--guard',
      'off',
    ]);
    assert.equal(run.exitCode, 1, explain(run));
    const state = await s.readState();
    assert.ok(resourceIds(state)['terraform_data.network'], 'the failed delete left it in the state');
    assert.equal(recordedInputsHash(state), oldHash, 'the record waits for the deletes of what it depended on');
    assert.ok(
      !run.result!.steps.some((step) => step.name === 'record set back'),
      'terraform itself kept the old value: nothing was set back',
    );
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
    assert.ok(
      (record.instances[0] as { dependencies?: string[] }).dependencies?.includes('terraform_data.extra'),
      JSON.stringify(record),
    );
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
    const deposedInState = (await s.readState()).resources
      .find((r) => r.name === 'a')!
      .instances.find((i) => i.deposed);
    assert.ok(deposedInState, 'the failed apply left a deposed object');

    await s.setInputs({ 'terraform.tfvars.json': { generation: '2', fail: false } });
    const blocked = await s.run('apply', ['--kind', 'pool']);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    const entry = blocked.result!.plan!.destructive.find((d) => d.deposed !== undefined);
    assert.ok(entry, JSON.stringify(blocked.result!.plan!.destructive));
    assert.equal(entry!.address, 'terraform_data.a');
    assert.equal(entry!.deposed, deposedInState!.deposed);
    assert.equal(entry!.action, 'delete');
    assert.ok(
      (await s.readState()).resources.find((r) => r.name === 'a')!.instances.some((i) => i.deposed),
      'nothing was applied',
    );
  });
});
