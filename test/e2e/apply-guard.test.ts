// The guarded apply's guard, end to end with the real terraform: a destructive plan is blocked
// without approval and applied with it; what is not destructive applies. Every test checks the state.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { modules, resourceIds } from '../support/tf-modules.ts';
import { applied, assertNoCanary, IMAGE } from './apply-support.ts';
import { explain, recordedInputsHash } from './runner.ts';

describe('apply: the guard', () => {
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
