// What an approval covers (contract.md, the guard): an approval names the inputs, not a reviewed
// plan. When the approved apply destroys what its blocked run did not show (the module changed,
// the inputs did not), it goes ahead as approved and says so: approval.unreviewed, a warning and a
// line in the summary. Real terraform, local state; the in-cluster variant against the fake API.
import { describe, it, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { FakeApiServer, type RbacRule } from '../support/fake-apiserver.ts';
import { modules, resourceIds, type StateInstance } from '../support/tf-modules.ts';
import { edited, NETWORK_BLOCK } from './module-edits.support.ts';
import { explain, type RunnerRun, type Scenario } from '../support/runner.ts';
// The base module applied once per file; each test that starts from it works on a copy of that state.
import { applied } from './apply.support.ts';

const IMAGE = 'registry.example/captf-module:1.0.0';
const OBJECT = ['--object', 'demo', '--namespace', 'team-a'];

/** Deletes terraform_data.network (what the blocked run shows). */
const deletesNetwork = modules.deleteByRemoval;
/** Deletes terraform_data.network and terraform_data.node["b"]: what the approval ends up covering. */
const deletesNetworkAndNodeB = edited(modules.removeForEachKey, [NETWORK_BLOCK, '']);

const recordPath = (s: Scenario, hash: string) => join(s.out, 'backups', `blocked-${hash}.json`);

/**
 * The block of deletesNetwork over the applied base, run once per file (in the first test that asks,
 * on its copy of the state). A block changes no state: what it leaves is the applied state and the
 * record of what it showed in the backups dir. Each test works on its own copy of both (or of the
 * state alone, `withRecord: false`: a block whose record is gone).
 */
let networkBlock: Promise<{ blocked: RunnerRun; record: Buffer }> | undefined;
async function blockedOnNetwork(
  t: TestContext,
  { withRecord }: { withRecord: boolean },
): Promise<{ s: Scenario; blocked: RunnerRun; hash: string }> {
  const s = await applied(t);
  await s.useModule(deletesNetwork);
  networkBlock ??= (async () => {
    const blocked = await s.run('apply', ['--image', IMAGE, ...OBJECT]);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    const hash = blocked.result!.approvalHash!;
    assert.deepEqual(
      blocked.result!.plan!.destructive.map((d) => d.address),
      ['terraform_data.network'],
    );
    // The blocked run's record survives the next run's result.json (the harness deletes result.json before every run).
    assert.ok(existsSync(recordPath(s, hash)), 'the blocked run keeps a record of what it showed');
    const record = await readFile(recordPath(s, hash));
    assert.equal(JSON.parse(record.toString('utf8')).plan.destructiveTotal, 1);
    return { blocked, record };
  })();
  const { blocked, record } = await networkBlock;
  const hash = blocked.result!.approvalHash!;
  if (withRecord) {
    await mkdir(join(s.out, 'backups'), { recursive: true, mode: 0o700 });
    await writeFile(recordPath(s, hash), record, { mode: 0o600 });
  } else await rm(recordPath(s, hash), { force: true });
  return { s, blocked, hash };
}

describe('apply: what an approval covered that was not shown', () => {
  it('the module changed after the block, the inputs did not: applied as approved, the delete nobody saw is listed', async (t) => {
    const { s, blocked, hash } = await blockedOnNetwork(t, { withRecord: true });
    const before = resourceIds(await s.readState());
    const record = recordPath(s, hash);

    await s.useModule(deletesNetworkAndNodeB);
    const run = await s.run('apply', ['--image', IMAGE, ...OBJECT, '--approved-hash', hash]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'succeeded');
    assert.equal(r.approvalHash, hash, 'same inputs, same approval hash');
    assert.deepEqual(r.approval, {
      given: true,
      matched: true,
      required: true,
      unreviewed: [{ address: 'terraform_data.node["b"]', action: 'delete' }],
      unreviewedTotal: 1,
      blockedRun: { location: resolve(record), finishedAt: blocked.result!.finishedAt },
    });
    assert.ok(
      r.warnings.some(
        (w) =>
          w.includes(`the approval of ${hash} covers 1 destructive change that its blocked run`) &&
          w.includes('terraform_data.node["b"] (delete)'),
      ),
      JSON.stringify(r.warnings),
    );
    assert.ok(r.steps.some((step) => step.name === 'approval' && step.status === 'ok'));
    assert.match(
      run.stdout,
      /approved without review \(1: the approval covered them, the blocked run of \S+ did not show\):\n {2}terraform_data\.node\["b"\] \(delete\)/,
    );
    const termination = JSON.parse(await readFile(s.termination, 'utf8'));
    assert.equal(termination.unreviewedTotal, 1);

    // Applied as approved: both are gone, the rest stays.
    const after = resourceIds(await s.readState());
    assert.equal(after['terraform_data.network'], undefined);
    assert.equal(after['terraform_data.node["b"]'], undefined);
    assert.equal(after['terraform_data.cluster'], before['terraform_data.cluster']);
  });

  it('an approval given again after its apply (the module changed, not the inputs or --image): the warning names what nobody was shown and that it was applied once already', async (t) => {
    const s = await applied(t);
    const image = 'registry.example/captf-module:2.0.0'; // new inputs: the state does not record them yet
    await s.useModule(deletesNetwork);
    const blocked = await s.run('apply', ['--image', image, ...OBJECT]);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    const hash = blocked.result!.approvalHash!;
    const approved = await s.run('apply', ['--image', image, ...OBJECT, '--approved-hash', hash]);
    assert.equal(approved.exitCode, 0, explain(approved));
    assert.equal(approved.result!.approval!.unreviewedTotal, 0);
    assert.ok(!approved.result!.warnings.some((w) => /applied once/.test(w)), 'its first apply: nothing to say');

    await s.useModule(deletesNetworkAndNodeB);
    const again = await s.run('apply', ['--image', image, ...OBJECT, '--approved-hash', hash]);
    assert.equal(again.exitCode, 0, explain(again));
    assert.deepEqual(
      again.result!.approval!.unreviewed!.map((c) => c.address),
      ['terraform_data.node["b"]'],
    );
    const warning = again.result!.warnings.find((w) => w.includes('did not show'));
    assert.match(
      warning ?? '',
      /covers 1 destructive change that its blocked run .* did not show: terraform_data\.node\["b"\] \(delete\)\./,
    );
    assert.match(
      warning!,
      /It was applied once already: the state records these inputs since an apply after that blocked run/,
    );
    assert.match(again.stdout, /^warning: .*It was applied once already/m, 'the summary says it too');
    assert.equal(resourceIds(await s.readState())['terraform_data.node["b"]'], undefined, 'applied as approved');
  });

  it('the same destructive set as the blocked run showed: nothing unreviewed, no warning', async (t) => {
    const { s, hash } = await blockedOnNetwork(t, { withRecord: true });
    const run = await s.run('apply', ['--image', IMAGE, ...OBJECT, '--approved-hash', hash]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.deepEqual(run.result!.approval!.unreviewed, []);
    assert.equal(run.result!.approval!.unreviewedTotal, 0);
    assert.ok(run.result!.approval!.blockedRun);
    assert.deepEqual(run.result!.warnings, []);
    assert.doesNotMatch(run.stdout, /without review/);
    assert.equal(resourceIds(await s.readState())['terraform_data.network'], undefined);
  });

  it("the state replaced by another object's (another lineage) between the block and the approval: blocked again, naming both lineages, nothing applied to the other state; approving the same hash again approves that block", async (t) => {
    const { s, blocked, hash } = await blockedOnNetwork(t, { withRecord: true });
    const planned = blocked.result!.state!.lineage!;
    // Another object's state in its place (a restore --force of the wrong backup): the same resources, another lineage.
    const other = '0badc0de-0000-4000-8000-000000000000';
    await writeFile(s.state, JSON.stringify({ ...JSON.parse(await readFile(s.state, 'utf8')), lineage: other }));
    const otherState = await readFile(s.state);

    const run = await s.run('apply', ['--image', IMAGE, ...OBJECT, '--approved-hash', hash]);
    assert.equal(run.exitCode, 3, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'blocked');
    assert.equal(r.reason, 'DestructivePlanBlocked');
    assert.equal(r.applied, false);
    assert.deepEqual(r.approval, { given: true, matched: false, required: true });
    assert.equal(r.annotations['captf.io/destructive-plan-blocked'], hash);
    const notice = r.notices!.find((n) => n.code === 'ApprovalOfOtherState');
    assert.ok(notice, JSON.stringify(r.notices));
    assert.ok(
      notice.message.includes(
        `made against the state of lineage ${planned}, but the backend now holds a state of lineage ${other}`,
      ),
      notice.message,
    );
    assert.ok(r.message.startsWith(notice.message), r.message);
    assert.deepEqual(await readFile(s.state), otherState, 'nothing was applied to the other state');

    // The re-block showed this plan against this state: an approval given after it covers it.
    const again = await s.run('apply', ['--image', IMAGE, ...OBJECT, '--approved-hash', hash]);
    assert.equal(again.exitCode, 0, explain(again));
    assert.deepEqual(again.result!.approval!.unreviewed, []);
    assert.equal(again.result!.approval!.blockedRun!.finishedAt, r.finishedAt);
  });

  it("no blocked run for the hash (its record deleted) and the state swapped for another object's, no --expect-lineage: blocked again, saying why, the state unchanged; approving the same hash again approves that block", async (t) => {
    const { s, hash } = await blockedOnNetwork(t, { withRecord: false });
    // Another object's state in its place: the same resources, another lineage. The lineage the
    // approval was given for lived only in the deleted record.
    const other = '0badc0de-0000-4000-8000-0000000000a6';
    await writeFile(s.state, JSON.stringify({ ...JSON.parse(await readFile(s.state, 'utf8')), lineage: other }));
    const otherState = await readFile(s.state);

    const run = await s.run('apply', ['--image', IMAGE, ...OBJECT, '--approved-hash', hash]);
    assert.equal(run.exitCode, 3, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'blocked');
    assert.equal(r.reason, 'DestructivePlanBlocked');
    assert.equal(r.applied, false);
    assert.deepEqual(r.approval, { given: true, matched: false, required: true });
    const notice = r.notices!.find((n) => n.code === 'ApprovalOfOtherState');
    assert.ok(notice, JSON.stringify(r.notices));
    assert.ok(
      notice.message.startsWith(`no blocked run was found for approval hash ${hash}`) &&
        notice.message.includes('no --expect-lineage names the state') &&
        notice.message.includes('it covers nothing destructive and this plan is blocked again'),
      notice.message,
    );
    assert.ok(r.message.startsWith(notice.message), r.message);
    assert.deepEqual(await readFile(s.state), otherState, 'nothing was applied to the other state');

    // The re-block kept its record, naming this state: an approval given after it covers it.
    const again = await s.run('apply', ['--image', IMAGE, ...OBJECT, '--approved-hash', hash]);
    assert.equal(again.exitCode, 0, explain(again));
    assert.equal(again.result!.approval!.blockedRun!.finishedAt, r.finishedAt);
    assert.equal(resourceIds(await s.readState())['terraform_data.network'], undefined);
  });

  it('no blocked run for the hash (its record is gone) with --expect-lineage: every destructive change is unreviewed, with a warning that says so', async (t) => {
    const { s, hash } = await blockedOnNetwork(t, { withRecord: false });
    await s.useModule(deletesNetworkAndNodeB);
    const lineage = (await s.readState()).lineage;
    const run = await s.run('apply', [
      '--image',
      IMAGE,
      ...OBJECT,
      '--approved-hash',
      hash,
      '--expect-lineage',
      lineage,
    ]);
    assert.equal(run.exitCode, 0, explain(run));
    const approval = run.result!.approval!;
    assert.equal(approval.unreviewedTotal, 2);
    assert.deepEqual(approval.unreviewed!.map((d) => d.address).sort(), [
      'terraform_data.network',
      'terraform_data.node["b"]',
    ]);
    assert.equal(approval.blockedRun, undefined);
    assert.ok(
      run.result!.warnings.some(
        (w) =>
          w.startsWith(`no blocked run was found for approval hash ${hash}`) && w.includes('all 2 destructive changes'),
      ),
      JSON.stringify(run.result!.warnings),
    );
    assert.match(
      run.stdout,
      /approved without review \(2: the approval covered them, no blocked run was found to show them\)/,
    );
  });

  it('an approval not needed (no destructive change) or not given says nothing about review', async (t) => {
    const s = await applied(t);
    await s.useModule(modules.update);
    const run = await s.run('apply', ['--image', IMAGE, ...OBJECT]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.deepEqual(run.result!.approval, { given: false, matched: false, required: false });
    assert.ok(!run.result!.steps.some((step) => step.name === 'approval'));
  });

  it('past the 100 listed entries: what the blocked run counted but did not list was not shown either', async (t) => {
    // The state an apply of count = 130 leaves: the applied base's replica[0] written for each index
    // (terraform's own state file, its lineage kept, a new serial). What terraform plans and applies from it is real.
    const s = await applied(t);
    const state = await s.readState();
    const replica = state.resources.find((r) => r.name === 'replica')!;
    const template = JSON.stringify(replica.instances[0]!);
    replica.instances = Array.from({ length: 130 }, (_, index) => {
      const instance = JSON.parse(template) as StateInstance;
      instance.index_key = index;
      instance.attributes.id = randomUUID();
      instance.attributes.input = { value: `replica-${index}`, type: 'string' };
      instance.attributes.output = { value: `replica-${index}`, type: 'string' };
      return instance;
    });
    await writeFile(s.state, JSON.stringify({ ...state, serial: state.serial + 1 }, null, 2));
    await s.useModule(edited(modules.base, ['count = 3', 'count = 0']));
    const blocked = await s.run('apply', ['--image', IMAGE, ...OBJECT]);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    assert.equal(blocked.result!.plan!.destructiveTotal, 130);
    assert.equal(blocked.result!.plan!.destructive.length, 100);
    const run = await s.run('apply', ['--image', IMAGE, ...OBJECT, '--approved-hash', blocked.result!.approvalHash!]);
    assert.equal(run.exitCode, 0, explain(run));
    const approval = run.result!.approval!;
    assert.equal(approval.unreviewedTotal, 30);
    const shown = new Set(blocked.result!.plan!.destructive.map((d) => d.address));
    assert.equal(approval.unreviewed!.length, 30);
    assert.ok(
      approval.unreviewed!.every((d) => !shown.has(d.address) && /^terraform_data\.replica\[\d+\]$/.test(d.address)),
    );
    // Named from the show -json stream (every destructive entry, past the 100 listed): the comparison did not fail closed.
    assert.ok(!run.result!.warnings.some((w) => w.includes('could not')), JSON.stringify(run.result!.warnings));
    // The log marks each unreviewed entry.
    assert.equal(run.stderr.match(/approved without review: terraform_data\.replica\[\d+\] \(delete\)/g)?.length, 30);
    assert.equal((await s.readState()).resources.filter((r) => r.name === 'replica').length, 0);
  });
});

describe('apply in a cluster: what an approval covered that was not shown', () => {
  const NS = 'team-a';
  let api: FakeApiServer;
  let roleRules: RbacRule[];
  before(async () => {
    api = await FakeApiServer.start({ serviceAccount: { namespace: NS, name: 'captf-runner' } });
    const [, role] = parseAllDocuments(
      await readFile(resolve(import.meta.dirname, '../../runner/role.example.yaml'), 'utf8'),
    ).map((doc) => doc.toJS());
    roleRules = role.rules;
  });
  after(() => api.stop());

  /** A Job's arguments, run under the example Role made for that Job (its own name in resourceNames). */
  async function job(s: Scenario, name: string, object = 'demo') {
    api.addJob(NS, name);
    api.rbac = roleRules.map((rule) => ({
      ...rule,
      namespaces: [NS],
      ...(rule.resourceNames && { resourceNames: [name] }),
    }));
    const sa = await api.writeServiceAccountDir(join(s.dir, 'sa'));
    return {
      args: [
        '--job-name',
        name,
        '--job-uid',
        api.job(NS, name)!.metadata.uid!,
        '--service-account-dir',
        sa,
        '--namespace',
        NS,
        '--object',
        object,
      ],
      env: api.env,
    };
  }

  it("compares with the blocked Job's result Secret, under the example Role", async (t) => {
    t.after(() => {
      api.rbac = undefined;
    });
    const s = await applied(t);
    await s.useModule(deletesNetwork);
    const blockedJob = await job(s, 'apply-2');
    const blocked = await s.run('apply', ['--image', IMAGE, ...blockedJob.args], blockedJob.env);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    const hash = blocked.result!.approvalHash!;
    assert.ok(
      !existsSync(join(s.out, 'backups')),
      'in a cluster the result Secret is the record: nothing is written to the out dir',
    );
    assert.equal(api.secret(NS, 'apply-2-result')!.metadata.annotations!['captf.io/approval-hash'], hash);

    await s.useModule(deletesNetworkAndNodeB);
    const approvedJob = await job(s, 'apply-3');
    const run = await s.run('apply', ['--image', IMAGE, ...approvedJob.args, '--approved-hash', hash], approvedJob.env);
    assert.equal(run.exitCode, 0, explain(run));
    assert.ok(
      api.requests.every((r) => r.status !== 403),
      'the example Role allows every call',
    );
    const approval = run.result!.approval!;
    assert.deepEqual(approval.unreviewed, [{ address: 'terraform_data.node["b"]', action: 'delete' }]);
    assert.equal(approval.unreviewedTotal, 1);
    assert.deepEqual(approval.blockedRun, {
      location: `secret:${NS}/apply-2-result`,
      finishedAt: blocked.result!.finishedAt,
    });
    // The approved Job's own result Secret carries it too.
    const stored = JSON.parse(
      Buffer.from(api.secret(NS, 'apply-3-result')!.data['result.json'], 'base64').toString('utf8'),
    );
    assert.equal(stored.approval.unreviewedTotal, 1);
  });

  it('the blocked Job is gone (and its result Secret with it), with --expect-lineage: every destructive change is unreviewed', async (t) => {
    // The approval hash of the file's block of the same inputs (local, so no Secret of it was ever
    // written: the API as it is once a blocked Job's Secret is gone), for another object than the
    // first test's: its blocked Job (same inputs, so the same hash) is not this object's blocked run.
    const { s, hash } = await blockedOnNetwork(t, { withRecord: false });
    t.after(() => {
      api.rbac = undefined;
    });
    const approvedJob = await job(s, 'apply-b3', 'other');
    const lineage = ['--expect-lineage', (await s.readState()).lineage];
    const run = await s.run(
      'apply',
      ['--image', IMAGE, ...approvedJob.args, '--approved-hash', hash, ...lineage],
      approvedJob.env,
    );
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.approval!.matched, true);
    assert.equal(run.result!.approval!.unreviewedTotal, 1);
    assert.ok(
      run.result!.warnings.some(
        (w) =>
          w.startsWith('no blocked run was found') &&
          w.includes(`the result Secrets of blocked Jobs in namespace ${NS}`),
      ),
      JSON.stringify(run.result!.warnings),
    );
  });
});
