// A machine pool's lifecycle on a laptop (src/local/README.md, "Machine pools"): the built runner, the
// real terraform, a pool-like module of terraform_data in a temp dir. A change of the cluster's
// exports is guarded; a guarded apply that fails part way, or is interrupted after its apply started,
// leaves the pool partly applied, and then every apply is guarded until one succeeds: undoing the
// partial change waits for its approval instead of replacing or deleting what the apply built. Each
// stage checks the state file.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  readLocalState,
  resourceIds,
  taintedAddresses,
  tempDir,
  testTerraformEnv,
  writeTree,
  type TerraformState,
} from '../support/tf-modules.ts';
import { fileLines, startInBackground, until } from '../support/exec.ts';
import { RUNNER } from '../support/runner.ts';
import { assertPrinted, explainPrinted, local } from './local.support.ts';

/**
 * A pool's two nodes are replaced when the cluster's endpoint changes; the second one's creation fails
 * for the endpoint e1 (its local-exec exits 1), so an apply of e1 replaces node[0] and leaves node[1]
 * tainted. A rotation of bootstrap_data replaces the join config alone.
 */
const POOL_MODULE = {
  'main.tf': `
variable "captf_cluster_outputs" {
  type = object({ endpoint = string })
}

variable "bootstrap_data" {
  type = string
}

resource "terraform_data" "node" {
  count            = 2
  triggers_replace = var.captf_cluster_outputs.endpoint
  provisioner "local-exec" {
    command = count.index == 1 && var.captf_cluster_outputs.endpoint == "e1" ? "exit 1" : "true"
  }
}

resource "terraform_data" "join_config" {
  triggers_replace = var.bootstrap_data
}
`,
};

/**
 * A pool whose node follows the cluster's endpoint (updated in place) and which adds two extras for the
 * endpoint e1, the second one slow: its local-exec appends to `marker`, then sleeps until stopped.
 */
const slowExtrasModule = (marker: string) => ({
  'main.tf': `
variable "captf_cluster_outputs" {
  type = object({ endpoint = string })
}

variable "bootstrap_data" {
  type = string
}

resource "terraform_data" "node" {
  input = var.captf_cluster_outputs.endpoint
}

resource "terraform_data" "extra" {
  count = var.captf_cluster_outputs.endpoint == "e1" ? 2 : 0
  provisioner "local-exec" {
    command = count.index == 1 ? "echo started >> ${marker} && exec sleep 120" : "true"
  }
}
`,
});

/** The endpoint each node was created for. */
function nodeEndpoints(state: TerraformState): string[] {
  const nodes = state.resources.find((resource) => resource.name === 'node');
  return (nodes?.instances ?? []).map(
    (instance) => (instance.attributes.triggers_replace as { value: string } | undefined)?.value ?? '',
  );
}

const exportsOf = (endpoint: string) => `captf_cluster_outputs={"endpoint":"${endpoint}"}`;

describe('local: a machine pool', () => {
  it('a guarded apply of changed exports that fails part way leaves the pool partly applied: the revert is guarded and blocked, not applied, until approved', async (t) => {
    const cwd = await tempDir(t, 'captf-local-pool-');
    const objectDir = join(cwd, '.captf-local');
    const readState = () => readLocalState(join(objectDir, 'state', 'terraform.tfstate'));
    const resultOf = async (run: string) =>
      JSON.parse(await readFile(join(objectDir, 'runs', run, 'result.json'), 'utf8')) as {
        approvalHash: string;
        applied: boolean;
        mayHaveChanged: boolean;
      };
    const guardOf = async (run: string) =>
      (JSON.parse(await readFile(join(objectDir, 'runs', run, 'run.json'), 'utf8')) as { guard?: string }).guard;
    const annotations = async () =>
      JSON.parse(await readFile(join(objectDir, 'object.json'), 'utf8')).metadata.annotations as Record<string, string>;
    await writeTree(join(cwd, 'module'), POOL_MODULE);
    assertPrinted(
      await local(cwd, 'init', '--module', 'module', '--image', 'example/pool:1.0.0', '--kind', 'pool'),
      /^created pool module in \.captf-local/m,
    );
    assertPrinted(await local(cwd, 'set', exportsOf('e0')));
    assertPrinted(await local(cwd, 'set', 'bootstrap_data=boot-1'));

    // The first apply is not guarded.
    assertPrinted(
      await local(cwd, 'reconcile'),
      /^ {2}guard off: the pool's first apply$/m,
      /^run 0001-apply: succeeded \(ApplySucceeded\)$/m,
    );
    const first = await readState();
    assert.deepEqual(nodeEndpoints(first), ['e0', 'e0']);

    // The cluster's endpoint changes: the apply is guarded, its plan replaces both nodes, blocked.
    assertPrinted(await local(cwd, 'set', exportsOf('e1')));
    const blocked = await local(cwd, 'reconcile');
    assert.equal(blocked.exitCode, 3, explainPrinted(blocked));
    assert.match(
      blocked.stdout,
      /^ {2}guard on: captf_cluster_outputs differ from those of the last successful apply$/m,
    );
    assert.match(blocked.stdout, /^run 0002-apply: blocked \(DestructivePlanBlocked\)$/m);
    assert.equal((await readState()).serial, first.serial, 'a blocked apply leaves the state untouched');

    // Approved, the apply replaces node[0] and fails creating node[1]: the state holds part of the change.
    assertPrinted(await local(cwd, 'approve'), /^approved: captf\.io\/approve-destructive-plan=/m);
    const failed = await local(cwd, 'reconcile');
    assert.equal(failed.exitCode, 1, explainPrinted(failed));
    assert.match(failed.stdout, /^run 0003-apply: failed \(ApplyFailed\)$/m, explainPrinted(failed));
    assert.equal(await guardOf('0003-apply'), 'on', 'the run records the guard it ran with');
    const failedResult = await resultOf('0003-apply');
    assert.equal(failedResult.mayHaveChanged, true);
    assert.equal(
      (await annotations())['captf.io/approve-destructive-plan'],
      failedResult.approvalHash,
      'a failed apply consumes no approval',
    );
    const partial = await readState();
    assert.deepEqual(nodeEndpoints(partial), ['e1', 'e1']);
    assert.deepEqual(taintedAddresses(partial), ['terraform_data.node[1]']);
    assert.notEqual(resourceIds(partial)['terraform_data.node[0]'], resourceIds(first)['terraform_data.node[0]']);
    assertPrinted(
      await local(cwd, 'status'),
      /^ {2}partly applied: by run 0003-apply: every apply is guarded until one succeeds$/m,
    );
    const statusJson = await local(cwd, 'status', '--json');
    assertPrinted(statusJson);
    assert.equal(JSON.parse(statusJson.stdout).partlyAppliedBy, '0003-apply');

    // The author takes the change back. The exports equal those of the last successful apply, but
    // the pool is partly applied: the apply is guarded, and its plan (node[0] replaced back to e0) is blocked.
    assertPrinted(await local(cwd, 'set', exportsOf('e0')));
    const reverted = await local(cwd, 'reconcile');
    assert.equal(reverted.exitCode, 3, `the revert is blocked, not applied\n${explainPrinted(reverted)}`);
    for (const pattern of [
      /^approval removed: captf\.io\/approve-destructive-plan=[0-9a-f]{64} \(run 0003-apply\) was for a change of captf_cluster_outputs that was withdrawn: the exports are back to those of the last successful apply; if it comes back, it needs a fresh approval$/m,
      /^decision: apply \(LastApplyFailed\)/m,
      /^ {2}guard on: run 0003-apply may have applied part of its change \(it did not succeed after its apply started\); every apply is guarded until one succeeds$/m,
      /^run 0004-apply: blocked \(DestructivePlanBlocked\)$/m,
      /^ {2}destructive: terraform_data\.node\[0\] \(replace\)$/m,
    ])
      assert.match(reverted.stdout, pattern, explainPrinted(reverted));
    assert.deepEqual(await annotations(), {}, 'the approval of the withdrawn change is removed');
    const afterRevert = await readState();
    assert.equal(afterRevert.serial, partial.serial, 'the blocked revert leaves the state untouched');
    assert.deepEqual(resourceIds(afterRevert), resourceIds(partial));
    assert.deepEqual(nodeEndpoints(afterRevert), ['e1', 'e1']);

    // A rotation while partly applied is guarded by its own approval hash: it waits with the blocked revert.
    assertPrinted(await local(cwd, 'set', 'bootstrap_data=boot-2'));
    assertPrinted(await local(cwd, 'reconcile'), /^decision: wait \(DestructivePlanApprovalPending\)/m);
    assert.equal((await readState()).serial, partial.serial);

    // Approved, the revert applies; the pool is whole again, and its next rotation is not guarded.
    assertPrinted(await local(cwd, 'approve'), /the apply blocked in run 0004-apply/);
    assertPrinted(
      await local(cwd, 'reconcile'),
      /^ {2}guard on: run 0003-apply may have applied part of its change/m,
      /^run 0005-apply: succeeded \(ApplySucceeded\)$/m,
    );
    const whole = await readState();
    assert.deepEqual(nodeEndpoints(whole), ['e0', 'e0']);
    assert.deepEqual(taintedAddresses(whole), []);
    assertPrinted(await local(cwd, 'status'), /^ {2}partly applied: no$/m);
    assert.equal(JSON.parse((await local(cwd, 'status', '--json')).stdout).partlyAppliedBy, null);
    assertPrinted(await local(cwd, 'set', 'bootstrap_data=boot-3'));
    assertPrinted(
      await local(cwd, 'reconcile'),
      /^ {2}guard off: captf_cluster_outputs are those of the last successful apply$/m,
      /^run 0006-apply: succeeded \(ApplySucceeded\)$/m,
    );
    const rotated = await readState();
    assert.notEqual(
      resourceIds(rotated)['terraform_data.join_config'],
      resourceIds(whole)['terraform_data.join_config'],
    );
    assert.equal(await guardOf('0006-apply'), 'off');
  });

  it('an apply of changed exports interrupted after its apply started (a Ctrl-C) leaves the pool partly applied: the revert is blocked, not applied', async (t) => {
    const cwd = await tempDir(t, 'captf-local-pool-');
    const objectDir = join(cwd, '.captf-local');
    const readState = () => readLocalState(join(objectDir, 'state', 'terraform.tfstate'));
    const marker = join(cwd, 'slow-extra-started');
    await writeTree(join(cwd, 'module'), slowExtrasModule(marker));
    assertPrinted(await local(cwd, 'init', '--module', 'module', '--image', 'example/pool:1.0.0', '--kind', 'pool'));
    assertPrinted(await local(cwd, 'set', exportsOf('e0')));
    assertPrinted(await local(cwd, 'set', 'bootstrap_data=boot-1'));
    assertPrinted(await local(cwd, 'reconcile'), /^run 0001-apply: succeeded \(ApplySucceeded\)$/m);

    // The change of the exports only creates and updates: guarded, it applies without an approval.
    // A Ctrl-C (SIGINT to the terminal's process group) while the second extra is being created.
    assertPrinted(await local(cwd, 'set', exportsOf('e1')));
    const { child, exited } = await startInBackground(process.execPath, [RUNNER, 'local', 'reconcile'], {
      cwd,
      env: testTerraformEnv(),
      mark: 'run 0002-apply: captf-runner apply',
      killAfterMs: 180_000,
    });
    await until('the slow extra started', () => fileLines(marker).length > 0, 120_000);
    process.kill(-child.pid!, 'SIGINT');
    const interrupted = await exited;
    assert.notEqual(interrupted.exitCode, 0, interrupted.stdout);
    assert.match(interrupted.stdout, /^ {2}guard on: captf_cluster_outputs differ/m, interrupted.stdout);
    assert.match(interrupted.stdout, /^run 0002-apply: interrupted \(/m, interrupted.stdout);
    const result = JSON.parse(await readFile(join(objectDir, 'runs', '0002-apply', 'result.json'), 'utf8'));
    assert.equal(result.mayHaveChanged, true);
    const partial = await readState();
    assert.ok(resourceIds(partial)['terraform_data.extra[0]'], 'the first extra was created');

    // Taken back: the plan deletes what the interrupted apply created, and waits for an approval.
    assertPrinted(await local(cwd, 'set', exportsOf('e0')));
    const reverted = await local(cwd, 'reconcile');
    assert.equal(reverted.exitCode, 3, `the revert is blocked, not applied\n${explainPrinted(reverted)}`);
    for (const pattern of [
      /^ {2}guard on: run 0002-apply may have applied part of its change/m,
      /^run 0003-apply: blocked \(DestructivePlanBlocked\)$/m,
      /^ {2}destructive: terraform_data\.extra\[0\] \(delete\)$/m,
    ])
      assert.match(reverted.stdout, pattern, explainPrinted(reverted));
    const afterRevert = await readState();
    assert.equal(afterRevert.serial, partial.serial, 'the blocked revert leaves the state untouched');
    assert.deepEqual(resourceIds(afterRevert), resourceIds(partial));
  });
});
