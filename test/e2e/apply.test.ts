// The guarded apply, end to end: the real terraform, real modules, local state. Every test checks
// the state afterwards, not only what the runner says about itself. This file: what applies without
// approval (apply-guard.test.ts: what is blocked and approved; apply-failures.test.ts: failures).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runChecked } from '../support/exec.ts';
import { modules, resourceIds, testTerraformEnv } from '../support/tf-modules.ts';
import { assertNoCanary, baseApplied, CANARY, IMAGE } from './apply.support.ts';
import { explain, recordedInputsHash, scenario } from '../support/runner.ts';

// The first test asserts on the first apply of the base module; every test after it that needs the
// base applied starts from a copy of the state that apply left (the same run: it is made once).

describe('apply: the guarded apply', () => {
  it('first apply creates everything and records the inputs hash in the state', async () => {
    const { s, run } = await baseApplied.first();
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
    assert.deepEqual(
      r.steps.map((step) => step.name),
      [
        'preflight',
        'inputs',
        'workspace',
        'init',
        'validate',
        'backup store',
        'plan',
        'plan hash',
        'state before',
        'show',
        'decide',
        'state before',
        'backup',
        'plan check',
        'apply',
        'state after',
      ],
    );
    assert.equal(r.steps.find((step) => step.name === 'backup')!.status, 'skipped', 'no state yet: nothing to back up');
    assertNoCanary(run);
    const termination = JSON.parse(await import('node:fs/promises').then((fs) => fs.readFile(s.termination, 'utf8')));
    assert.equal(termination.outcome, 'succeeded');
  });

  it('outputs: read from the state after the apply, exactly as terraform output -json reports them, sensitive values left out', async (t) => {
    const extra =
      `output "count" {\n  value = 3\n}\noutput "enabled" {\n  value = true\n}\noutput "zones" {\n  value = ["a", "b"]\n}\n` +
      `output "nothing" {\n  value = null\n}\noutput "settings" {\n  value = { size = 2, tags = { env = "dev" } }\n}\n` +
      `output "key" {\n  value     = { token = var.admin_token, id = 7 }\n  sensitive = true\n}\n`;
    const s = await scenario(
      t,
      { ...modules.base, 'more-outputs.tf': extra },
      { 'terraform.tfvars.json': { admin_token: CANARY } },
    );
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const shown = JSON.parse(
      (await runChecked('terraform', ['output', '-json', `-state=${s.state}`], { cwd: s.dir, env: testTerraformEnv() }))
        .stdout,
    ) as Record<string, { sensitive: boolean; type: unknown; value: unknown }>;
    const expected = Object.fromEntries(
      Object.entries(shown).map(([name, o]) => [
        name,
        o.sensitive
          ? { sensitive: true, known: true, type: o.type }
          : { sensitive: false, known: true, type: o.type, value: o.value },
      ]),
    );
    assert.deepEqual(run.result!.outputs, expected);
    assert.deepEqual(Object.keys(expected).sort(), [
      'admin_token',
      'cluster_id',
      'count',
      'enabled',
      'key',
      'node_ids',
      'settings',
      'zones',
    ]);
    assertNoCanary(run);
  });

  it('no changes: the apply step is skipped and the state is untouched', async (t) => {
    const s = await baseApplied.applied(t);
    const serial = (await s.readState()).serial;
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.outcome, 'noChanges');
    assert.equal(run.result!.applied, false);
    assert.equal(run.result!.steps.find((step) => step.name === 'apply')!.status, 'skipped');
    assert.equal((await s.readState()).serial, serial);
  });

  it('new inputs that change no resource still record the new hash (outcome noChanges)', async (t) => {
    const s = await baseApplied.applied(t);
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
    const s = await baseApplied.applied(t);
    const before = resourceIds(await s.readState());
    await s.useModule(modules.update);
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.outcome, 'succeeded');
    assert.equal(run.result!.plan!.counts.update, 1);
    assert.equal(run.result!.approval!.required, false);
    assert.deepEqual(resourceIds(await s.readState()), before);
  });

  it('an output-only change applies without approval', async (t) => {
    const s = await baseApplied.applied(t);
    await s.useModule(modules.outputOnly);
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.outcome, 'succeeded');
    assert.equal(run.result!.plan!.hasOutputChanges, true);
    assert.equal(run.result!.plan!.hasResourceChanges, false);
    assert.equal(run.result!.outputs!.region!.value, 'eu-west-1');
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
    const cluster = (await s.readState()).resources.find((r) => r.name === 'cluster')!.instances[0]!.attributes
      .input as { value: { name: string } };
    assert.equal(cluster.value.name, 'demo', 'an input named *.auto.tfvars set no variable');
    assert.ok(!JSON.stringify(await s.readState()).includes('hijacked'));
  });
});

describe('apply: pools', () => {
  it('the approval hash ignores bootstrap_data; a blocked exports change is approved by it', async (t) => {
    const s = await scenario(t, modules.pool, {
      'terraform.tfvars.json': { bootstrap_data: 'boot-1', captf_cluster_outputs: { endpoint: 'https://a:6443' } },
    });
    const first = await s.run('apply', ['--image', IMAGE, '--kind', 'pool']);
    assert.equal(first.exitCode, 0, explain(first));
    assert.notEqual(first.result!.approvalHash, first.result!.inputsHash);

    await s.setInputs({
      'terraform.tfvars.json': { bootstrap_data: 'boot-2', captf_cluster_outputs: { endpoint: 'https://b:6443' } },
    });
    const blocked = await s.run('apply', [
      '--image',
      IMAGE,
      '--kind',
      'pool',
      '--object',
      'workers',
      '--namespace',
      'ns',
    ]);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    assert.match(blocked.result!.approveCommand!, /^kubectl annotate terraformmachinepool workers -n ns /);

    // A pool's approval names its approval hash: its inputs hash approves nothing.
    const byInputsHash = await s.run('apply', [
      '--image',
      IMAGE,
      '--kind',
      'pool',
      '--approved-hash',
      blocked.result!.inputsHash!,
    ]);
    assert.equal(byInputsHash.exitCode, 3, explain(byInputsHash));

    // A bootstrap rotation changes the inputs hash, not the approval hash.
    await s.setInputs({
      'terraform.tfvars.json': { bootstrap_data: 'boot-3', captf_cluster_outputs: { endpoint: 'https://b:6443' } },
    });
    const approved = await s.run('apply', [
      '--image',
      IMAGE,
      '--kind',
      'pool',
      '--approved-hash',
      blocked.result!.approvalHash!,
    ]);
    assert.equal(approved.exitCode, 0, explain(approved));
    assert.equal(approved.result!.approvalHash, blocked.result!.approvalHash);
    assert.notEqual(approved.result!.inputsHash, blocked.result!.inputsHash);
    assert.equal(recordedInputsHash(await s.readState()), approved.result!.inputsHash);
  });
});
