// destroy, end to end: the real terraform, real modules, local state. Never gated; a destroy that
// fails half way leaves the state as terraform left it, and the next one continues from there.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { access, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modules, resourceIds, type FileTree } from '../support/tf-modules.ts';
import { explain, recordedInputsHash, scenario } from '../support/runner.ts';
// The base module applied once per file (its admin_token the canary); each test destroys a copy of that state.
import { applied, assertNoCanary, CANARY, IMAGE } from './apply.support.ts';

/** The base module plus terraform_data.guarded, whose destroy-time provisioner runs `command`. */
const withGuarded = (command: string): FileTree => ({
  ...modules.base,
  'main.tf': `${modules.base['main.tf']}
resource "terraform_data" "guarded" {
  input = "guarded"

  provisioner "local-exec" {
    when    = destroy
    command = ${JSON.stringify(command)}
  }
}
`,
});
const failingDestroy = withGuarded('echo refusing to be destroyed on purpose >&2; exit 1');
const fixedDestroy = withGuarded('true');

describe('destroy', () => {
  it('destroys everything, never gated, the classification recorded and a backup taken first', async (t) => {
    const s = await applied(t);
    const before = await s.readState();
    const backups = join(s.dir, 'backups');
    const run = await s.run('destroy', ['--image', IMAGE, '--backups', backups]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'succeeded');
    assert.equal(r.reason, 'DestroySucceeded');
    assert.equal(r.applied, true);
    assert.equal(r.approval, undefined, 'no approval asked for');
    assert.equal(
      r.plan!.counts.delete,
      Object.keys(resourceIds(before)).length - 1,
      "every resource but the runner's own",
    );
    assert.ok(r.plan!.destructive.some((d) => d.address === 'terraform_data.cluster' && d.action === 'delete'));
    assert.ok(!r.plan!.destructive.some((d) => d.address === 'terraform_data.captf_inputs_hash'));
    assert.match(run.stdout, /# terraform_data\.credentials will be destroyed/);

    const after = await s.readState();
    assert.deepEqual(after.resources, [], 'the state holds no resources');
    assert.deepEqual(after.outputs, {});
    assert.equal(after.lineage, before.lineage);
    assert.deepEqual(r.state, { serialBefore: before.serial, serialAfter: after.serial, lineage: before.lineage });

    // The backup is of the state as it was before the destroy.
    const [object] = await readdir(backups);
    assert.equal(r.backup!.object, object);
    const manifest = JSON.parse(await readFile(join(backups, object!, 'manifest.json'), 'utf8'));
    assert.equal(manifest.serial, before.serial);
    assert.equal(manifest.lineage, before.lineage);
    assert.equal(manifest.op, 'destroy');
    assertNoCanary(run);

    // Once everything is gone, another destroy has nothing to do.
    const again = await s.run('destroy', ['--image', IMAGE]);
    assert.equal(again.exitCode, 0, explain(again));
    assert.equal(again.result!.outcome, 'noChanges');
    assert.equal(again.result!.reason, 'DestroySucceeded');
    assert.equal(again.result!.applied, false);
    assert.equal((await s.readState()).serial, after.serial);
  });

  it('no state (--new-state: a run told it may find none): ends noChanges/NoStateFound at once, never DestroySucceeded; writes no state', async (t) => {
    const s = await scenario(t, modules.base, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const run = await s.run('destroy', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'noChanges');
    assert.equal(r.reason, 'NoStateFound', 'a controller must tell it from a destroy that destroyed');
    assert.match(
      r.message,
      /^Nothing was destroyed: the backend holds no state\. If the object has infrastructure, this run was pointed at another place than its state/,
    );
    assert.equal(r.applied, false);
    assert.deepEqual(r.state, { serialBefore: null, serialAfter: null, lineage: null });
    assert.equal(r.steps.find((step) => step.name === 'plan')?.status, 'skipped');
    assert.ok(!r.steps.some((step) => step.name === 'apply'));
    await assert.rejects(access(s.state), 'no state file was created');
  });

  it('fails half way (DestroyFailed, exit 1, the resource stays), then a second destroy finishes', async (t) => {
    const s = await scenario(t, failingDestroy, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const first = await s.run('apply', ['--image', IMAGE]);
    assert.equal(first.exitCode, 0, explain(first));
    const beforeState = await s.readState();
    const before = resourceIds(beforeState);
    assert.ok(before['terraform_data.guarded']);

    const failed = await s.run('destroy', ['--image', IMAGE]);
    assert.equal(failed.exitCode, 1, explain(failed));
    const r = failed.result!;
    assert.equal(r.outcome, 'failed');
    assert.equal(r.reason, 'DestroyFailed');
    assert.equal(r.error!.step, 'apply');
    assert.equal(r.mayHaveChanged, true);
    assert.match(r.message, /next destroy continues/);
    const partial = await s.readState();
    const left = resourceIds(partial);
    assert.equal(
      left['terraform_data.guarded'],
      before['terraform_data.guarded'],
      'the resource whose destroy failed is still in the state',
    );
    assert.ok(Object.keys(left).length < Object.keys(before).length, 'the rest was destroyed');
    assert.equal(r.state!.serialAfter, partial.serial);
    // terraform deletes the record first; the destroy did not succeed, so the runner put it back as it was.
    assert.match(failed.stdout, /terraform_data\.captf_inputs_hash: Destruction complete/);
    assert.ok(recordedInputsHash(beforeState));
    assert.equal(recordedInputsHash(partial), recordedInputsHash(beforeState));
    assert.equal(r.stateInputsHash, recordedInputsHash(beforeState));
    assert.equal(r.steps.find((step) => step.name === 'record set back')?.status, 'ok', JSON.stringify(r.steps));

    // The destroy-time provisioner is read from the configuration: fixed, the next destroy continues.
    await s.useModule(fixedDestroy);
    const finished = await s.run('destroy', ['--image', IMAGE]);
    assert.equal(finished.exitCode, 0, explain(finished));
    assert.equal(finished.result!.reason, 'DestroySucceeded');
    assert.equal(
      finished.result!.plan!.counts.delete,
      Object.keys(left).length - 1,
      "every resource left but the runner's record",
    );
    assert.deepEqual((await s.readState()).resources, []);
    assertNoCanary(failed);
    assertNoCanary(finished);
  });

  it('a secret only the state still holds (inputs without it) is written nowhere', async (t) => {
    const s = await applied(t);
    await s.setInputs({});
    const run = await s.run('destroy', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    // terraform prints the derived, unmarked `output` of terraform_data.credentials: the runner masks it.
    assert.match(run.stdout, /# terraform_data\.credentials will be destroyed/);
    assert.deepEqual((await s.readState()).resources, []);
    assertNoCanary(run);
  });
});
