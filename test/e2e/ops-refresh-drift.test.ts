// refresh and drift, end to end: the real terraform, real modules, local state. Drift is made by
// editing the state behind terraform's back (terraform_data never drifts on its own), so a plan
// shows the corrective change a remediation apply would make.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { modules, resourceIds, type TerraformState } from '../support/tf-modules.ts';
import { explain, recordedInputsHash, type RunnerRun, type Scenario } from '../support/runner.ts';
// Every test starts from the base module applied with the canary as admin_token: applied once per
// file, each test on a copy of that state.
import { applied, CANARY, IMAGE } from './apply.support.ts';

const OLD_SECRET = 'CANARY-drift-old-Hv8';

/** Edits one resource's attributes in the local state file and bumps the serial, as an outside writer would. */
async function editState(
  s: Scenario,
  name: string,
  edit: (attributes: Record<string, unknown>) => void,
): Promise<Buffer> {
  const state = JSON.parse(await readFile(s.state, 'utf8')) as TerraformState;
  const resource = state.resources.find((r) => !r.module && r.name === name);
  assert.ok(resource, name);
  edit(resource.instances[0]!.attributes);
  state.serial += 1;
  await writeFile(s.state, JSON.stringify(state, null, 2));
  return readFile(s.state);
}

const attr = (value: unknown, type: unknown = 'string') => ({ value, type });

const assertNoCanary = (run: RunnerRun, ...values: string[]) => {
  for (const value of [CANARY, ...values])
    assert.ok(
      !run.allBytes.includes(value),
      `a sensitive value appears in something the runner wrote (${run.result?.op})`,
    );
};

describe('refresh', () => {
  it('reads every output (sensitive ones without value) and reports the serial before and after', async (t) => {
    const s = await applied(t);
    // A new root output: the refresh-only apply writes it to the state, so the serial moves.
    await s.useModule(modules.outputOnly);
    const before = await s.readState();
    const run = await s.run('refresh', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'succeeded');
    assert.equal(r.reason, 'RefreshSucceeded');
    const after = await s.readState();
    assert.deepEqual(r.state, { serialBefore: before.serial, serialAfter: after.serial, lineage: before.lineage });
    assert.ok(after.serial > before.serial, 'the refresh wrote the state');
    assert.deepEqual(resourceIds(after), resourceIds(before), 'a refresh creates and replaces nothing');

    assert.deepEqual(Object.keys(r.outputs!).sort(), ['admin_token', 'cluster_id', 'node_ids', 'region']);
    assert.deepEqual(r.outputs!.region, { sensitive: false, known: true, type: 'string', value: 'eu-west-1' });
    assert.equal(after.outputs.region!.value, 'eu-west-1');
    assert.equal(r.outputs!.cluster_id!.value, resourceIds(after)['terraform_data.cluster']);
    assert.deepEqual(r.outputs!.admin_token, { sensitive: true, known: true, type: 'string' });
    assert.equal(recordedInputsHash(after), recordedInputsHash(before));
    // The applied inputs and the reference the apply ran (the Job runs its pinned digest): the hash the apply recorded.
    assert.equal(r.inputsHash, r.stateInputsHash);
    assert.deepEqual(r.notices, []);
    assertNoCanary(run);
  });

  it('with other inputs mounted, leaves the recorded inputs hash exactly as it was', async (t) => {
    const s = await applied(t);
    const before = await s.readState();
    const recorded = recordedInputsHash(before)!;
    await s.useModule(modules.outputOnly); // forces a state write, so the hash survives a rewrite
    await s.setInputs({ 'terraform.tfvars.json': { admin_token: OLD_SECRET, cluster_name: 'other' } });
    const run = await s.run('refresh', ['--image', 'registry.example/captf-module:9.9.9']);
    assert.equal(run.exitCode, 0, explain(run));
    const after = await s.readState();
    assert.ok(after.serial > before.serial);
    assert.notEqual(run.result!.inputsHash, recorded, 'the mounted inputs differ');
    assert.equal(recordedInputsHash(after), recorded);
    assert.equal(run.result!.stateInputsHash, recorded);
    const cluster = (state: TerraformState) =>
      state.resources.find((res) => res.name === 'cluster')!.instances[0]!.attributes;
    assert.deepEqual(cluster(after), cluster(before), 'the other inputs were not applied');
    assertNoCanary(run, OLD_SECRET);
  });
});

describe('refresh that carries out a moved block', () => {
  it('counts and lists the move it applied (terraform_data.network became terraform_data.vpc)', async (t) => {
    const s = await applied(t);
    const networkId = resourceIds(await s.readState())['terraform_data.network'];
    await s.useModule(modules.moved);
    const run = await s.run('refresh', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.reason, 'RefreshSucceeded');
    assert.equal(r.plan!.counts.move, 1, JSON.stringify(r.plan!.counts));
    assert.deepEqual(
      r.plan!.drift.filter((d) => d.previousAddress),
      [{ address: 'terraform_data.vpc', previousAddress: 'terraform_data.network', actions: ['no-op'] }],
    );
    assert.match(r.message, /^Refreshed: 1 moved \(terraform_data\.network → terraform_data\.vpc\); /);
    assert.match(run.stdout, /plan: .*1 to move/, 'the summary counts it too');
    const ids = resourceIds(await s.readState());
    assert.equal(ids['terraform_data.vpc'], networkId, 'the refresh moved the object in the state');
    assert.equal(ids['terraform_data.network'], undefined);
  });
});

describe('drift', () => {
  it('no drift: found false, exit 0, nothing applied', async (t) => {
    const s = await applied(t);
    const bytes = await readFile(s.state);
    const run = await s.run('drift', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'succeeded');
    assert.equal(r.reason, 'NoDrift');
    assert.deepEqual(r.drift, {
      found: false,
      outputsOnly: false,
      resourceDrift: [],
      resourceDriftTotal: 0,
      inputsDiffer: [],
      inputsDifferTotal: 0,
      remediationDestructive: false,
    });
    assert.equal(r.applied, false);
    assert.equal(r.mayHaveChanged, false);
    assert.deepEqual(await readFile(s.state), bytes, 'drift never writes the state');
    assertNoCanary(run);
    // The reference the apply ran as --image: the hash the state records, which a controller compares.
    assert.equal(r.inputsHash, r.stateInputsHash);
    assert.deepEqual(r.notices, []);

    // The digest pinned from it is another reference, so another hash: never passed as --image, and said when it is.
    const pinned = await s.run('drift', [
      '--image',
      `registry.example/captf-module@sha256:${'0123456789abcdef'.repeat(4)}`,
    ]);
    assert.equal(pinned.exitCode, 0, explain(pinned));
    assert.equal(pinned.result!.reason, 'NoDrift', 'the record is never a difference');
    assert.notEqual(pinned.result!.inputsHash, pinned.result!.stateInputsHash);
    assert.deepEqual(
      pinned.result!.notices!.map((n) => n.code),
      ['StateRecordsOtherInputs'],
    );
    assert.match(
      pinned.result!.notices![0]!.message,
      /passes the inputs of the last successful apply and the image reference that apply ran as --image, not the digest/,
    );
  });

  it('new inputs alone are not drift: the recorded inputs hash is never a difference', async (t) => {
    const s = await applied(t);
    const bytes = await readFile(s.state);
    const recorded = recordedInputsHash(await s.readState());
    const run = await s.run('drift', ['--image', 'registry.example/captf-module:2.0.0']);
    assert.equal(run.exitCode, 0, explain(run));
    assert.notEqual(run.result!.inputsHash, recorded);
    assert.equal(run.result!.drift!.found, false);
    assert.equal(run.result!.plan!.counts.update, 0);
    assert.doesNotMatch(run.result!.planText!, /captf_inputs_hash will be updated/);
    assert.equal(run.result!.stateInputsHash, recorded);
    assert.deepEqual(await readFile(s.state), bytes);
  });

  it("a change behind terraform's back: drift found, an in-place remediation", async (t) => {
    const s = await applied(t);
    const recorded = recordedInputsHash(await s.readState());
    const bytes = await editState(s, 'network', (a) => {
      a.input = attr('10.9.0.0/16');
    });
    const serial = (await s.readState()).serial;
    const run = await s.run('drift', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.reason, 'DriftFound');
    assert.equal(r.drift!.found, true);
    assert.equal(r.drift!.outputsOnly, false);
    assert.equal(r.drift!.remediationDestructive, false);
    // terraform_data reads nothing back: terraform reports no change outside it, and the edited value is
    // where the state and the inputs differ. That alone is drift found (a remediation apply changes it).
    assert.equal(r.drift!.resourceDriftTotal, 0);
    assert.deepEqual(
      r.drift!.inputsDiffer.map((c) => [c.address, c.actions]),
      [['terraform_data.network', ['update']]],
    );
    assert.equal(r.plan!.counts.update, 1, 'only the edited resource; never the inputs-hash resource');
    assert.equal(r.plan!.destructiveTotal, 0);
    assert.match(r.planText!, /# terraform_data\.network will be updated in-place/);
    assert.match(r.message, /would make these changes: 0 to create, 1 to update/);
    assert.deepEqual(await readFile(s.state), bytes, 'nothing applied');
    assert.deepEqual(r.state, { serialBefore: serial, serialAfter: serial, lineage: (await s.readState()).lineage });
    assert.equal(recordedInputsHash(await s.readState()), recorded);
    assert.equal(r.stateInputsHash, recorded);
    assertNoCanary(run);
  });

  it('a remediation that would replace: remediationDestructive true', async (t) => {
    const s = await applied(t);
    const bytes = await editState(s, 'cluster', (a) => {
      a.triggers_replace = attr('v0');
    });
    const run = await s.run('drift', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.drift!.found, true);
    assert.equal(r.drift!.remediationDestructive, true);
    assert.deepEqual(
      r.plan!.destructive.map((d) => [d.address, d.action]),
      [['terraform_data.cluster', 'replace']],
    );
    assert.match(r.message, /it needs an approval: it deletes or replaces: terraform_data.cluster \(replace\)/);
    assert.deepEqual(await readFile(s.state), bytes, 'nothing applied');
  });

  it('output-only differences are reported as outputsOnly, not as drift', async (t) => {
    const s = await applied(t);
    const bytes = await readFile(s.state);
    await s.useModule(modules.outputOnly);
    const run = await s.run('drift', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.drift!.found, false);
    assert.equal(run.result!.drift!.outputsOnly, true);
    assert.equal(run.result!.reason, 'NoDrift');
    assert.match(run.result!.message, /only root outputs differ/);
    assert.deepEqual(await readFile(s.state), bytes);
  });

  it('a drifted secret: neither the value in the state nor the mounted one is written anywhere', async (t) => {
    const s = await applied(t);
    // The state now records another secret in `input`; `output` (derived, unmarked) still holds the canary.
    await editState(s, 'credentials', (a) => {
      a.input = attr(OLD_SECRET);
    });
    const run = await s.run('drift', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.drift!.found, true);
    assert.match(run.result!.planText!, /# terraform_data\.credentials will be updated in-place/);
    assertNoCanary(run, OLD_SECRET);
  });
});
