// The guarded apply's guard, end to end with the real terraform: a destructive plan is blocked
// without approval and applied with it; what is not destructive applies. Every test checks the state.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { modules, resourceIds } from '../support/tf-modules.ts';
import { applied, assertNoCanary, IMAGE } from './apply.support.ts';
import { edited, NETWORK_BLOCK } from './module-edits.support.ts';
import { explain, recordedInputsHash, type RunnerRun } from '../support/runner.ts';
import { conditionMessageOf } from '../../src/controller-model/actions.ts';

const OBJECT = ['--object', 'demo', '--namespace', 'team-a'];
const escaped = (address: string) => address.replace(/[[\]."]/g, '\\$&');

/** A block as the contract says: exit 3, nothing applied, the annotation and command of the approval, no secret in anything written. */
function assertBlocked(run: RunnerRun) {
  assert.equal(run.exitCode, 3, explain(run));
  const r = run.result!;
  assert.deepEqual(
    [r.outcome, r.reason, r.error?.kind, r.applied],
    ['blocked', 'DestructivePlanBlocked', 'blocked', false],
  );
  assert.equal(r.annotations['captf.io/destructive-plan-blocked'], r.approvalHash);
  assert.equal(
    r.approveCommand,
    `kubectl annotate terraformcluster demo -n team-a captf.io/approve-destructive-plan=${r.approvalHash} --overwrite`,
  );
  assert.match(r.message, /Nothing was applied/);
  // The condition the controller sets gives the hash and the command to approve it (the-destructive-plan-guard.md).
  const condition = conditionMessageOf(r);
  assert.ok(condition.startsWith(r.message), condition);
  assert.ok(condition.includes(`approval hash ${r.approvalHash}`), condition);
  assert.ok(condition.endsWith(` To approve: ${r.approveCommand}`), condition);
  assertNoCanary(run);
}

describe('apply: the guard', () => {
  // Each kind of destructive change the classifier tells apart, several in one plan: the block lists
  // each one (a kind not classified destructive is missing from plan.destructive and the message).
  // A plan of one kind alone blocks too: the replace below, and approval-unreviewed's delete by removal.
  const everyDelete = [
    [NETWORK_BLOCK, ''],
    ['count = 3', 'count = 1'],
    ['toset(["a","b"])', 'toset(["a"])'],
    ['module "addon" {\n  source = "./modules/addon"\n}\n', ''],
  ] as const;
  it('replace (create, delete) and every kind of delete in one plan: blocked without approval, each listed, nothing applied', async (t) => {
    const s = await applied(t);
    const before = await s.readState();
    await s.useModule(edited(modules.replaceCreateBeforeDestroy, ...everyDelete));
    const run = await s.run('apply', ['--image', IMAGE, ...OBJECT]);
    assertBlocked(run);
    const r = run.result!;
    for (const [address, action] of [
      ['terraform_data.cluster', 'replace'], // create, delete
      ['terraform_data.network', 'delete'], // by removal
      ['terraform_data.replica[2]', 'delete'], // by count
      ['terraform_data.node["b"]', 'delete'], // by for_each key
      ['module.addon.terraform_data.this', 'delete'], // by a removed module call
    ] as const) {
      assert.ok(
        r.plan!.destructive.some((d) => d.address === address && d.action === action),
        `${address} (${action}): ${JSON.stringify(r.plan!.destructive)}`,
      );
      assert.match(r.message, new RegExp(`${escaped(address)} \\(${action}\\)`));
      assert.match(run.stdout, new RegExp(escaped(address)));
    }
    assert.equal(r.plan!.destructiveTotal, 6, 'and replica[1]');
    const after = await s.readState();
    assert.equal(after.serial, before.serial, 'the state must be untouched');
    assert.deepEqual(resourceIds(after), resourceIds(before));
  });

  it('replace (delete, create): blocked without approval, nothing applied; then approved by the inputs hash, the replace is applied', async (t) => {
    const s = await applied(t);
    const before = await s.readState();
    await s.useModule(modules.replace);
    const blocked = await s.run('apply', ['--image', IMAGE, ...OBJECT]);
    assertBlocked(blocked);
    assert.deepEqual(
      blocked.result!.plan!.destructive.map((d) => [d.address, d.action]),
      [['terraform_data.cluster', 'replace']],
    );
    assert.match(blocked.result!.message, /terraform_data\.cluster \(replace\)/);
    assert.match(blocked.stdout, /terraform_data\.cluster/);
    const unchanged = await s.readState();
    assert.equal(unchanged.serial, before.serial, 'the state must be untouched');
    assert.deepEqual(resourceIds(unchanged), resourceIds(before));

    const approvedRun = await s.run('apply', [
      '--image',
      IMAGE,
      ...OBJECT,
      '--approved-hash',
      blocked.result!.approvalHash!,
    ]);
    assert.equal(approvedRun.exitCode, 0, explain(approvedRun));
    assert.equal(approvedRun.result!.outcome, 'succeeded');
    const { blockedRun, ...approval } = approvedRun.result!.approval!;
    assert.deepEqual(approval, { given: true, matched: true, required: true, unreviewed: [], unreviewedTotal: 0 });
    assert.equal(blockedRun?.finishedAt, blocked.result!.finishedAt);
    const after = await s.readState();
    assert.notEqual(resourceIds(after)['terraform_data.cluster'], resourceIds(before)['terraform_data.cluster']);
    assert.equal(resourceIds(after)['terraform_data.network'], resourceIds(before)['terraform_data.network']);
    assert.equal(recordedInputsHash(after), approvedRun.result!.inputsHash);
  });

  it('an approval of another hash approves nothing and is not an error', async (t) => {
    const s = await applied(t);
    await s.useModule(modules.replace);
    // A well-formed hash of nothing (ApprovalMismatch), a malformed one (ApprovalMalformed), none.
    for (const other of ['f'.repeat(64), 'not-a-hash', '']) {
      const run = await s.run('apply', ['--image', IMAGE, '--approved-hash', other]);
      assert.equal(run.exitCode, 3, explain(run));
      assert.equal(run.result!.reason, 'DestructivePlanBlocked');
      assert.equal(run.result!.approval!.matched, false);
      if (other !== '') assert.match(run.stderr, /approves nothing/);
    }
  });

  it('forget, move and import are not destructive', async (t) => {
    // One plan that forgets terraform_data.network, moves terraform_data.credentials and imports terraform_data.imported.
    const s = await applied(t);
    await s.useModule(
      edited(
        modules.importBlock,
        [NETWORK_BLOCK, 'removed {\n  from = terraform_data.network\n  lifecycle {\n    destroy = false\n  }\n}\n'],
        [
          'resource "terraform_data" "credentials" {',
          'moved {\n  from = terraform_data.credentials\n  to   = terraform_data.token\n}\n\nresource "terraform_data" "token" {',
        ],
      ),
    );
    const before = resourceIds(await s.readState());
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.outcome, 'succeeded');
    for (const counter of ['forget', 'move', 'import'] as const)
      assert.equal(run.result!.plan!.counts[counter], 1, counter);
    assert.equal(run.result!.plan!.destructiveTotal, 0);
    const ids = resourceIds(await s.readState());
    assert.equal(ids['terraform_data.network'], undefined, 'forgotten');
    assert.equal(ids['terraform_data.token'], before['terraform_data.credentials'], 'moved, the same object');
    assert.equal(ids['terraform_data.credentials'], undefined);
    assert.equal(ids['terraform_data.imported'], 'imported-id-123');
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
});
