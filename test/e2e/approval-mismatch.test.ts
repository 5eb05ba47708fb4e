// A given --approved-hash that does not match says why (result.warnings, result.notices, the
// summary) and approves nothing: real terraform, local state, the state checked afterwards.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import { modules, resourceIds } from '../support/tf-modules.ts';
import { explain, type RunnerRun } from '../support/runner.ts';
import { IMAGE } from './apply.support.ts';
import { firstApplyOnce } from './first-apply.support.ts';
import { sharedSetup } from '../support/suite-setup.ts';

const noticeOf = (run: RunnerRun) => {
  const notices = run.result!.notices ?? [];
  assert.equal(notices.length, 1, JSON.stringify(notices));
  const [notice] = notices;
  assert.ok(run.result!.warnings.includes(notice!.message), 'the notice is a warning too');
  assert.ok(run.stdout.includes(`warning: ${notice!.message}`), `the summary says why:\n${run.stdout}`);
  return notice!;
};

// The base module's first apply, with a malformed approval (a plan that creates needs none): made
// once per file; one test asserts its run, and every test starts from a copy of the state it left.
const base = firstApplyOnce(modules.base, {}, ['--image', IMAGE, '--approved-hash', ' sha256:abc']);
// Then the blocked apply of modules.deleteByRemoval, the same for two tests: made once. One test
// asserts its run; the other approves it on a copy of its state and its out dir (where the runner
// keeps the blocked run's record, which the approved apply compares with).
const blockedOnce = sharedSetup(async (suite) => {
  const s = await base.applied(suite);
  await s.useModule(modules.deleteByRemoval);
  return { s, blocked: await s.run('apply', ['--image', IMAGE]) };
});

describe('apply: an approval that does not match says why', () => {
  it('the plan hash, an upper-case or prefixed approval hash, the recorded inputs, an older block: each named, nothing applied', async (t) => {
    const s = await base.applied(t);
    const { run: first } = await base.first();
    const appliedIds = resourceIds(await s.readState());
    const recorded = first.result!.stateInputsHash!;
    assert.equal(recorded, first.result!.inputsHash);

    await s.useModule(modules.deleteByRemoval);
    await s.setInputs({ cluster_name: 'two' });
    const firstBlock = await s.run('apply', ['--image', IMAGE]);
    assert.equal(firstBlock.exitCode, 3, explain(firstBlock));
    const olderApproval = firstBlock.result!.approvalHash!;
    assert.deepEqual(firstBlock.result!.notices, [], 'no approval given: nothing to explain');

    await s.setInputs({ cluster_name: 'three' });
    // A hash that is nothing of this object's comes first: its blocked run gives the approval hash and
    // plan hash the other cases are made from.
    const mismatched = await s.run('apply', ['--image', IMAGE, '--approved-hash', 'f'.repeat(64)]);
    const { approvalHash, planHash } = mismatched.result!;
    assert.notEqual(approvalHash, olderApproval);
    const assertNamed = (run: RunnerRun, code: string, why: RegExp) => {
      assert.equal(run.exitCode, 3, `${code}: still blocked\n${explain(run)}`);
      assert.deepEqual(run.result!.approval, { given: true, matched: false, required: true });
      const notice = noticeOf(run);
      assert.equal(notice.code, code);
      assert.match(notice.message, why);
      assert.ok(notice.message.includes(`pass exactly the approval hash ${approvalHash}`), notice.message);
    };
    assertNamed(mismatched, 'ApprovalMismatch', /not this run's approval hash/);

    const cases: [string, string, RegExp][] = [
      [planHash!, 'ApprovalIsPlanHash', /a plan hash \(planHash/],
      [approvalHash!.toUpperCase(), 'ApprovalMalformed', /upper-case letters.*written another way/],
      [`sha256:${approvalHash}`, 'ApprovalMalformed', /a "sha256:" prefix/],
      [`${approvalHash}\n`, 'ApprovalMalformed', /a newline or whitespace around it/],
      [recorded, 'ApprovalOfOtherInputs', /the inputs hash the state records/],
      [
        olderApproval,
        'ApprovalOfOtherInputs',
        new RegExp(`a run blocked at ${firstBlock.result!.finishedAt.replace(/\./g, '\\.')} for other inputs`),
      ],
    ];
    for (const [given, code, why] of cases)
      assertNamed(await s.run('apply', ['--image', IMAGE, '--approved-hash', given]), code, why);
    assert.deepEqual(resourceIds(await s.readState()), appliedIds, 'nothing was applied');
  });

  it('a malformed approval of a plan that needs none is named too; the exact one applies', async (t) => {
    const s = await base.applied(t);
    const { run } = await base.first();
    assert.equal(noticeOf(run).code, 'ApprovalMalformed');
    await s.useModule(modules.deleteByRemoval);
    const { s: where, blocked } = await blockedOnce();
    await cp(where.out, s.out, { recursive: true });
    const approved = await s.run('apply', ['--image', IMAGE, '--approved-hash', blocked.result!.approvalHash!]);
    assert.equal(approved.exitCode, 0, explain(approved));
    assert.deepEqual(approved.result!.notices, []);
    assert.deepEqual(approved.result!.warnings, []);
    const approval = approved.result!.approval!;
    assert.equal(approval.matched, true);
    assert.ok(approval.blockedRun!.location.startsWith(`${s.out}/`), 'compared with the blocked run recorded here');
    assert.equal(resourceIds(await s.readState())['terraform_data.network'], undefined);
  });

  it('a local block (no --object) prints the rerun command with --approved-hash once; approveCommand keeps the kubectl form', async (t) => {
    const { s, blocked } = await blockedOnce();
    assert.equal(blocked.exitCode, 3, explain(blocked));
    const hash = blocked.result!.approvalHash!;
    assert.match(blocked.result!.approveCommand!, /^kubectl annotate terraformcluster <name> -n <namespace> /);
    const rerun = `captf-runner apply --module ${s.module} --inputs ${s.inputs} --state ${s.state} --new-state --out ${s.out} --termination-log ${s.termination} --log-format json --image ${IMAGE} --approved-hash ${hash}`;
    assert.equal(blocked.stdout.split(rerun).length - 1, 1, blocked.stdout);
    assert.doesNotMatch(blocked.stdout, /kubectl/);
    assert.match(blocked.stdout, /^changed: nothing/m);

    const own = await base.applied(t);
    await own.useModule(modules.deleteByRemoval);
    const withObject = await own.run('apply', ['--image', IMAGE, '--object', 'demo', '--namespace', 'team-a']);
    assert.equal(withObject.stdout.split(withObject.result!.approveCommand!).length - 1, 1, withObject.stdout);
    assert.doesNotMatch(withObject.stdout, /run again with the approval/);
  });
});
