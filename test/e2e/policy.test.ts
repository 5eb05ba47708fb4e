// Plan policies end to end (contract/sections/policy.md): the built runner, the real terraform,
// local state, and the policy file of the contract's example verbatim. Every refusal is checked on
// the state afterwards: byte for byte unchanged.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runProcess } from '../support/exec.ts';
import type { Result } from '../../src/schemas/result.ts';
import { resourceIds, testTerraformEnv, type FileTree } from '../support/tf-modules.ts';
import { ISSUE_EXAMPLE, POLICY_HEADER } from '../policy/policies.support.ts';
import { explain, RUNNER, runRunner, scenario, type RunnerRun, type Scenario } from '../support/runner.ts';
import { stateOnce } from './state-once.support.ts';
import { sharedSetup } from '../support/suite-setup.ts';

const IMAGE = 'registry.example/captf-module:1.0.0';
/** The inputs of an IAM update: terraform_data.iam_role's input changes, the rule iam-needs-review of the issue's policy matches. */
const IAM_V2 = { 'terraform.tfvars.json': { iam_policy: 'v2' } };

/** terraform_data.db1 (a "database"), terraform_data.iam_role (its input from var.iam_policy), terraform_data.node[0..var.nodes-1]. */
function policyModule({ db = true, nodes = 0 }: { db?: boolean; nodes?: number } = {}): FileTree {
  return {
    'main.tf': `variable "iam_policy" {
  type    = string
  default = "v1"
}

${db ? 'resource "terraform_data" "db1" {\n  input = "orders"\n}\n' : ''}
resource "terraform_data" "iam_role" {
  input = var.iam_policy
}

resource "terraform_data" "node" {
  count = ${nodes}
  input = "node-\${count.index}"
}
`,
  };
}

/** A policy dir in the scenario holding `files`. */
async function policyDir(
  s: Scenario,
  files: Record<string, string> = { 'policy.yaml': ISSUE_EXAMPLE },
  name = 'policy',
): Promise<string> {
  const dir = join(s.dir, name);
  await mkdir(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  return dir;
}

/** The module with each node count the tests start from, applied by the runner once for the file (no policy: creates match nothing anyway). */
const appliedStates = Object.fromEntries(
  ([0, 6] as const).map((nodes) => [
    nodes,
    stateOnce(async (suite) => {
      const s = await scenario(suite, policyModule({ nodes }));
      const run = await s.run('apply', ['--image', IMAGE]);
      assert.equal(run.exitCode, 0, explain(run));
      return s;
    }),
  ]),
) as Record<0 | 6, (into: Scenario) => Promise<void>>;

/** The module applied, in a scenario of the test's own, and the issue's policy dir. */
async function applied(t: TestContext, nodes: 0 | 6 = 0): Promise<{ s: Scenario; policy: string }> {
  const s = await scenario(t, policyModule({ nodes }));
  await appliedStates[nodes](s);
  return { s, policy: await policyDir(s) };
}

const termination = async (s: Scenario) =>
  JSON.parse(await readFile(s.termination, 'utf8')) as Record<string, unknown> & { policy?: Record<string, unknown> };

/** A denial as the contract says: invalid, PolicyDenied, exit 8 (its own: neither a block nor a broken module), never a block, nothing applied. */
async function assertDenied(
  s: Scenario,
  run: RunnerRun,
  stateBefore: Buffer,
  denied: { rule: string; address?: string; message: string | RegExp }[],
): Promise<Result> {
  assert.equal(run.exitCode, 8, explain(run));
  const r = run.result!;
  assert.equal(r.outcome, 'invalid');
  assert.equal(r.reason, 'PolicyDenied');
  assert.equal(r.error!.kind, 'policy');
  assert.equal(r.applied, false);
  assert.equal(r.annotations['captf.io/destructive-plan-blocked'], undefined, 'a denial is not a block');
  assert.equal(r.approveCommand, undefined, 'nothing to approve');
  assert.equal(r.plan!.policy!.deniedTotal, denied.length);
  r.plan!.policy!.denied.forEach((d, i) => {
    assert.equal(d.rule, denied[i]!.rule);
    assert.equal(d.address, denied[i]!.address);
    if (typeof denied[i]!.message === 'string') assert.equal(d.message, denied[i]!.message);
    else assert.match(d.message, denied[i]!.message);
    assert.ok(r.message.includes(d.message), 'the message says what must change');
  });
  assert.equal(r.plan!.gated, true, 'a denial sets gated');
  assert.ok(!r.steps.some((step) => step.name === 'apply' && step.status !== 'skipped'), 'no apply step ran');
  assert.equal(r.error?.step, 'decide', 'the denial fails the step decide');
  assert.match(run.stdout, /denied by the policy \(\d+: no approval can pass it\):/);
  const term = await termination(s);
  assert.equal(term.reason, 'PolicyDenied');
  assert.deepEqual(
    (term.policy!.denied as { rule: string }[]).map((d) => d.rule),
    denied.map((d) => d.rule),
  );
  assert.deepEqual(await readFile(s.state), stateBefore, 'the state is untouched');
  return r;
}

describe('policy: deny', () => {
  it('the contract example denies deleting a database: exit 4, nothing applied, with and without an approval; CAPTF_POLICY names the dir as --policy does', async (t) => {
    const { s, policy } = await applied(t);
    await s.useModule(policyModule({ db: false }));
    const before = await readFile(s.state);
    const denial = {
      rule: 'protect-databases',
      address: 'terraform_data.db1',
      message: 'databases are never deleted by the runner: terraform_data.db1',
    };
    const run = await s.run('apply', ['--image', IMAGE, '--policy', policy]);
    const r = await assertDenied(s, run, before, [denial]);
    assert.equal(r.plan!.destructiveTotal, 1);
    assert.ok(
      r.steps.some((step) => step.name === 'policy' && step.status === 'ok'),
      'the policy step ran',
    );

    // The approval hash of this very plan, the dir named by CAPTF_POLICY: still denied, nothing applied
    // (were the variable ignored, the approval would apply the delete).
    const approved = await s.run('apply', ['--image', IMAGE, '--approved-hash', r.approvalHash!], {
      CAPTF_POLICY: policy,
    });
    await assertDenied(s, approved, before, [denial]);
    assert.ok(resourceIds(await s.readState())['terraform_data.db1'], 'the database is still there');
  });

  it('limits.maxDeletes: 6 deletes of 5 allowed are denied, even approved', async (t) => {
    const { s, policy } = await applied(t, 6);
    await s.useModule(policyModule({ nodes: 0 }));
    const before = await readFile(s.state);
    const limit = { rule: 'limits.maxDeletes', message: /the plan deletes 6 objects .* allows at most 5 in one run/ };
    const run = await s.run('apply', ['--image', IMAGE, '--policy', policy]);
    const r = await assertDenied(s, run, before, [limit]);
    assert.equal(r.plan!.policy!.deletes, 6);
    const approved = await s.run('apply', ['--image', IMAGE, '--policy', policy, '--approved-hash', r.approvalHash!]);
    await assertDenied(s, approved, before, [limit]);
    assert.equal(
      Object.keys(resourceIds(await s.readState())).filter((a) => a.startsWith('terraform_data.node')).length,
      6,
    );
  });
});

describe('policy: requireApproval', () => {
  /**
   * The IAM update blocked by the issue's policy over the applied module, once for the describe: the
   * run, its termination log, and the state before and after it. A block changes no state: what it
   * leaves is the applied state and the record of what it showed (the out dir's backups).
   */
  const iamBlock = sharedSetup(async (suite) => {
    const { s, policy } = await applied(suite);
    await s.setInputs(IAM_V2);
    const before = await readFile(s.state);
    const blocked = await s.run('apply', ['--image', IMAGE, '--policy', policy]);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    return { out: s.out, blocked, termination: await termination(s), before, after: await readFile(s.state) };
  });
  /** The applied module with the IAM update's inputs, and a copy of the block's record: the block as if it had run in the test's scenario. */
  async function blockedOnIam(t: TestContext) {
    const { s, policy } = await applied(t);
    await s.setInputs(IAM_V2);
    const block = await iamBlock();
    await cp(join(block.out, 'backups'), join(s.out, 'backups'), { recursive: true });
    return { s, policy, ...block };
  }

  it('an IAM update is blocked though nothing is destructive, then applied with the approval', async (t) => {
    const { s, policy, blocked, termination, before, after } = await blockedOnIam(t);
    const b = blocked.result!;
    assert.equal(b.reason, 'DestructivePlanBlocked');
    assert.equal(b.plan!.destructiveTotal, 0);
    assert.equal(b.plan!.gated, true);
    assert.deepEqual(b.plan!.policy!.approvalRequired, [
      { rule: 'iam-needs-review', address: 'terraform_data.iam_role' },
    ]);
    assert.equal(b.annotations['captf.io/destructive-plan-blocked'], b.approvalHash);
    assert.match(b.message, /policy rules require an approval: iam-needs-review at terraform_data\.iam_role/);
    assert.match(
      blocked.stdout,
      /the policy requires an approval \(1\):\n {2}iam-needs-review at terraform_data\.iam_role/,
    );
    assert.deepEqual(termination.policy!.approvalRequired, [
      { rule: 'iam-needs-review', address: 'terraform_data.iam_role' },
    ]);
    assert.deepEqual(after, before, 'nothing applied');

    const approved = await s.run('apply', ['--image', IMAGE, '--policy', policy, '--approved-hash', b.approvalHash!]);
    assert.equal(approved.exitCode, 0, explain(approved));
    const a = approved.result!;
    assert.equal(a.outcome, 'succeeded');
    // The blocked run listed the finding: the approval covered nothing unseen.
    assert.deepEqual(
      { ...a.approval, blockedRun: undefined },
      { given: true, matched: true, required: true, unreviewed: [], unreviewedTotal: 0, blockedRun: undefined },
    );
    const iam = (await s.readState()).resources.find((resource) => resource.name === 'iam_role')!;
    assert.deepEqual(iam.instances[0]!.attributes.input, { value: 'v2', type: 'string' });
  });

  it('a finding the blocked run did not list counts in approval.unreviewed', async (t) => {
    const { s, blocked } = await blockedOnIam(t);
    const hash = blocked.result!.approvalHash!;
    // The policy changes after the block (the inputs do not): a second rule now requires approval.
    const widened = await policyDir(
      s,
      {
        'policy.yaml': ISSUE_EXAMPLE,
        'review.yaml': `${POLICY_HEADER}rules:\n- name: all-updates\n  match: change.kind == "update"\n  effect: requireApproval\n`,
      },
      'policy2',
    );
    const run = await s.run('apply', ['--image', IMAGE, '--policy', widened, '--approved-hash', hash]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.deepEqual(run.result!.approval!.unreviewed, [
      { address: 'terraform_data.iam_role', action: 'policy', rule: 'all-updates' },
    ]);
    assert.match(run.stdout, /terraform_data\.iam_role \(policy all-updates\)/);
  });

  it('an approval of other inputs approves nothing: blocked again, nothing applied', async (t) => {
    const { s, policy, blocked, before } = await blockedOnIam(t);
    // The IAM policy changes again after the block: the approval was given for v2, not v3.
    await s.setInputs({ 'terraform.tfvars.json': { iam_policy: 'v3' } });
    const run = await s.run('apply', [
      '--image',
      IMAGE,
      '--policy',
      policy,
      '--approved-hash',
      blocked.result!.approvalHash!,
    ]);
    assert.equal(run.exitCode, 3, explain(run));
    const r = run.result!;
    assert.equal(r.reason, 'DestructivePlanBlocked');
    assert.equal(r.approval!.matched, false);
    assert.notEqual(r.approvalHash, blocked.result!.approvalHash);
    assert.deepEqual(r.plan!.policy!.approvalRequired, [
      { rule: 'iam-needs-review', address: 'terraform_data.iam_role' },
    ]);
    assert.deepEqual(await readFile(s.state), before, 'nothing applied');
  });

  it('with --guard off a match is a warning: applied without an approval', async (t) => {
    const { s, policy } = await applied(t);
    await s.setInputs(IAM_V2);
    const run = await s.run('apply', ['--image', IMAGE, '--kind', 'machine', '--guard', 'off', '--policy', policy]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.plan!.gated, true);
    assert.ok(
      run.result!.warnings.some((w) =>
        w.includes(
          'applied without an approval (--guard off): policy rules require an approval: iam-needs-review at terraform_data.iam_role',
        ),
      ),
      JSON.stringify(run.result!.warnings),
    );
    const iam = (await s.readState()).resources.find((resource) => resource.name === 'iam_role')!;
    assert.deepEqual(iam.instances[0]!.attributes.input, { value: 'v2', type: 'string' });
  });
});

describe('policy: a broken policy dir', () => {
  const BROKEN = {
    'policy.yaml': `${POLICY_HEADER}rules:\n- name: typo\n  match: change.nmae == "db"\n  effect: deny\n`,
  };

  for (const op of ['apply', 'plan', 'drift'] as const) {
    it(`${op}: ImageInvalid, exit 4, file and rule named, nothing planned`, async (t) => {
      const { s } = await applied(t);
      const broken = await policyDir(s, BROKEN, 'broken');
      const before = await readFile(s.state);
      const run = await s.run(op, [
        '--image',
        IMAGE,
        '--policy',
        broken,
        ...(op === 'plan' ? ['--artifacts', join(s.dir, 'artifacts')] : []),
      ]);
      assert.equal(run.exitCode, 4, explain(run));
      const r = run.result!;
      assert.equal(r.reason, 'ImageInvalid');
      assert.equal(r.error!.step, 'policy');
      assert.match(r.message, /policy\.yaml rule "typo": match: .*"nmae"/);
      assert.deepEqual(
        (r.error!.detail!.problems as { file: string; rule: string }[]).map((p) => [p.file, p.rule]),
        [[join(broken, 'policy.yaml'), 'typo']],
      );
      assert.deepEqual(
        r.steps.map((step) => step.name),
        ['policy'],
        'nothing ran after the policy',
      );
      assert.deepEqual(await readFile(s.state), before);
    });
  }

  it('a --policy dir that does not exist is refused, not ignored', async (t) => {
    const { s } = await applied(t);
    const run = await s.run('apply', ['--image', IMAGE, '--policy', join(s.dir, 'nowhere')]);
    assert.equal(run.exitCode, 4, explain(run));
    assert.match(run.result!.message, /the policy dir \S+ does not exist/);
    assert.doesNotMatch(run.stdout, /remove the dir/);
    assert.match(run.stdout, /^next: fix --policy \(it names what is wrong above\), then run again$/m);
  });
});

describe('policy: destroy never reads it', () => {
  it('destroys what the policy would deny, with a broken policy dir and a denying one', async (t) => {
    for (const files of [{ 'policy.yaml': 'apiVersion: nope\n' }, { 'policy.yaml': ISSUE_EXAMPLE }]) {
      const { s } = await applied(t, 6);
      const dir = await policyDir(s, files, 'destroy-policy');
      const run = await s.run('destroy', ['--image', IMAGE, '--policy', dir]);
      assert.equal(run.exitCode, 0, explain(run));
      assert.equal(run.result!.plan!.policy, undefined, 'not judged');
      assert.ok(!run.result!.steps.some((step) => step.name === 'policy'));
      assert.deepEqual(resourceIds(await s.readState()), {}, 'everything destroyed, the database too');
    }
  });
});

describe('policy: plan (Manual) and apply --plan-artifact', () => {
  it('plan denied: exit 4 and no artifact', async (t) => {
    const { s, policy } = await applied(t);
    await s.useModule(policyModule({ db: false }));
    const artifacts = join(s.dir, 'artifacts');
    const before = await readFile(s.state);
    const run = await s.run('plan', ['--image', IMAGE, '--policy', policy, '--artifacts', artifacts]);
    const r = await assertDenied(s, run, before, [
      { rule: 'protect-databases', address: 'terraform_data.db1', message: /terraform_data\.db1/ },
    ]);
    assert.equal(r.planArtifact, undefined);
    assert.deepEqual(
      (await readdir(artifacts).catch(() => [])).filter((name) => name.startsWith('plan-')),
      [],
      'no artifact created',
    );
  });

  it('apply --plan-artifact re-evaluates deny rules and limits only', async (t) => {
    const { s, policy } = await applied(t);
    await s.useModule(policyModule({ db: false }));
    await s.setInputs(IAM_V2);
    const artifacts = join(s.dir, 'artifacts');
    // Planned without the policy (an earlier image, say): an artifact that deletes the database and updates IAM.
    const plan = await s.run('plan', ['--image', IMAGE, '--artifacts', artifacts]);
    assert.equal(plan.exitCode, 0, explain(plan));
    const ref = plan.result!.planArtifact!;
    const before = await readFile(s.state);
    const run = await s.run('apply', [
      '--image',
      IMAGE,
      '--policy',
      policy,
      '--plan-artifact',
      join(ref.location, ref.object),
      '--approved-plan-hash',
      plan.result!.planHash!,
    ]);
    const r = await assertDenied(s, run, before, [
      { rule: 'protect-databases', address: 'terraform_data.db1', message: /terraform_data\.db1/ },
    ]);
    assert.equal(r.plan!.policy!.effects, 'deny');
    assert.deepEqual(
      r.plan!.policy!.approvalRequired,
      [],
      'requireApproval rules are not evaluated: the approval was given for the plan',
    );
  });
});

describe('policy: the policy dir changed between the plan and apply --plan-artifact', () => {
  const FROZEN = `${POLICY_HEADER}rules:\n- name: iam-frozen\n  match: change.addresses.exists(a, a.startsWith("terraform_data.iam"))\n  effect: deny\n  message: '"IAM is frozen: " + change.address'\n`;
  const REVIEW_ALL = `${POLICY_HEADER}rules:\n- name: review-all\n  match: "true"\n  effect: requireApproval\n`;

  it('the deny rules and limits of the policy at apply time judge the artifact; its new requireApproval rules do not', async (t) => {
    const { s, policy } = await applied(t);
    await s.setInputs(IAM_V2);
    const artifacts = join(s.dir, 'artifacts');
    // Planned under the contract example: the IAM update needs an approval, which a Manual plan's hash is.
    const plan = await s.run('plan', ['--image', IMAGE, '--policy', policy, '--artifacts', artifacts]);
    assert.equal(plan.exitCode, 0, explain(plan));
    assert.deepEqual(plan.result!.plan!.policy!.approvalRequired, [
      { rule: 'iam-needs-review', address: 'terraform_data.iam_role' },
    ]);
    const ref = plan.result!.planArtifact!;
    const applyWith = (dir: string) =>
      s.run('apply', [
        '--image',
        IMAGE,
        '--policy',
        dir,
        '--plan-artifact',
        join(ref.location, ref.object),
        '--approved-plan-hash',
        plan.result!.planHash!,
      ]);
    const before = await readFile(s.state);

    // The image's policy now freezes IAM: denied at apply, nothing applied.
    const frozen = await applyWith(
      await policyDir(s, { 'policy.yaml': ISSUE_EXAMPLE, 'frozen.yaml': FROZEN }, 'policy-frozen'),
    );
    const r = await assertDenied(s, frozen, before, [
      { rule: 'iam-frozen', address: 'terraform_data.iam_role', message: 'IAM is frozen: terraform_data.iam_role' },
    ]);
    assert.equal(r.plan!.policy!.effects, 'deny');

    // The image's policy now wants every change reviewed: not evaluated (the approval was given for this plan), applied.
    const reviewAll = await applyWith(
      await policyDir(s, { 'policy.yaml': ISSUE_EXAMPLE, 'review.yaml': REVIEW_ALL }, 'policy-review'),
    );
    assert.equal(reviewAll.exitCode, 0, explain(reviewAll));
    assert.deepEqual(reviewAll.result!.plan!.policy!.approvalRequired, []);
    const iam = (await s.readState()).resources.find((resource) => resource.name === 'iam_role')!;
    assert.deepEqual(iam.instances[0]!.attributes.input, { value: 'v2', type: 'string' });
  });
});

describe('policy: drift and classify judge the same way', () => {
  it('drift reports the denial and sets gated, exit 0', async (t) => {
    const { s, policy } = await applied(t);
    await s.useModule(policyModule({ db: false }));
    const run = await s.run('drift', ['--image', IMAGE, '--policy', policy]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.reason, 'DriftFound');
    assert.equal(r.drift!.remediationDestructive, true);
    assert.deepEqual(
      r.plan!.policy!.denied.map((d) => d.address),
      ['terraform_data.db1'],
    );
    assert.match(
      r.message,
      /The policy denies a remediation apply, and no approval passes that: protect-databases at terraform_data\.db1/,
    );
  });

  it('classify --policy: the findings in the classification, gated; --detailed-exitcode 8 for a denial, 3 for a plan that needs an approval; a broken policy exits 4', async (t) => {
    const { s, policy } = await applied(t);
    const document = {
      format_version: '1.2',
      terraform_version: '1.11.4',
      resource_changes: [
        {
          address: 'terraform_data.iam_role',
          mode: 'managed',
          type: 'terraform_data',
          name: 'iam_role',
          provider_name: 'terraform.io/builtin/terraform',
          change: { actions: ['update'] },
        },
      ],
    };
    const file = join(s.dir, 'plan.json');
    await writeFile(file, JSON.stringify(document));
    const plain = await runRunner(['classify', file, '--json']);
    assert.equal(plain.exitCode, 0, plain.stderr);
    assert.equal(JSON.parse(plain.stdout).gated, false, 'an update alone is not gated');
    const judged = await runRunner(['classify', file, '--json', '--policy', policy]);
    assert.equal(judged.exitCode, 0, judged.stderr);
    const plan = JSON.parse(judged.stdout);
    assert.equal(plan.gated, true);
    assert.deepEqual(plan.policy.approvalRequired, [{ rule: 'iam-needs-review', address: 'terraform_data.iam_role' }]);
    const text = await runRunner(['classify', file, '--policy', policy]);
    assert.match(
      text.stdout,
      /^gated .*\n {2}needs an approval: policy rule iam-needs-review at terraform_data\.iam_role$/,
    );
    assert.equal(
      (await runRunner(['classify', file, '--policy', policy, '--detailed-exitcode'])).exitCode,
      3,
      'needs an approval: 3',
    );
    const deleting = join(s.dir, 'deleting.json');
    await writeFile(
      deleting,
      JSON.stringify({
        ...document,
        resource_changes: [
          {
            ...document.resource_changes[0]!,
            address: 'terraform_data.db1',
            name: 'db1',
            change: { actions: ['delete'] },
          },
        ],
      }),
    );
    const denied = await runRunner(['classify', deleting, '--policy', policy, '--detailed-exitcode']);
    assert.equal(
      denied.exitCode,
      8,
      `denied by the policy: 8, told apart from needing an approval: ${denied.stdout}${denied.stderr}`,
    );
    assert.match(denied.stdout, /denied by the policy: protect-databases/);
    assert.equal(
      (await runRunner(['classify', deleting, '--policy', policy])).exitCode,
      0,
      'without --detailed-exitcode: 0',
    );
    const broken = await policyDir(s, { 'p.yaml': 'apiVersion: policy.captf.io/v1\n' }, 'broken');
    const refused = await runRunner(['classify', file, '--policy', broken]);
    assert.equal(refused.exitCode, 4);
    assert.match(refused.stderr, /p\.yaml: .*rules, limits or both/);
  });

  it('contract check --policy: the check named policy', async (t) => {
    const { s, policy } = await applied(t);
    const check = (dir: string) =>
      runRunner(['contract', 'check', '--root', s.dir, '--module', '/module', '--policy', `/${dir}`, '--json']);
    const good = JSON.parse((await check('policy')).stdout);
    const row = good.checks.find((c: { name: string }) => c.name === 'policy');
    assert.equal(row.status, 'pass');
    assert.equal(
      row.message,
      `${policy}: 1 file, 2 rules, at most 5 deletes per plan (${join(policy, 'policy.yaml')})`,
    );
    await policyDir(
      s,
      { 'p.yaml': `${POLICY_HEADER}rules:\n- name: bad\n  match: plan.counts.delete > 0\n  effect: deny\n` },
      'broken',
    );
    const bad = await check('broken');
    assert.equal(bad.exitCode, 4);
    const failed = JSON.parse(bad.stdout).checks.find((c: { name: string }) => c.name === 'policy');
    assert.equal(failed.status, 'fail');
    assert.match(failed.message, /p\.yaml rule "bad": match: unknown name "plan"/);
    assert.match(failed.fix, /policy dir/);
  });
});

describe('policy: without a policy dir nothing of it loads', () => {
  it('an apply runs with the policy chunk gone from the bundle (an IAM update, not gated without the policy); with --policy it needs it', async (t) => {
    const { s, policy } = await applied(t);
    await s.setInputs(IAM_V2);
    const bundle = join(s.dir, 'dist');
    await cp(dirname(RUNNER), bundle, { recursive: true });
    const chunks = join(bundle, 'chunks');
    const policyChunks: string[] = [];
    for (const name of await readdir(chunks))
      if ((await readFile(join(chunks, name), 'utf8')).includes('policy.captf.io/v1')) policyChunks.push(name);
    assert.equal(policyChunks.length, 1, `one chunk holds the policy module: ${policyChunks.join(', ')}`);
    await rm(join(chunks, policyChunks[0]!));
    const run = (extra: string[]) =>
      runProcess(
        process.execPath,
        [join(bundle, 'captf-runner.mjs'), ...s.runArgs('apply', ['--image', IMAGE, ...extra])],
        {
          env: testTerraformEnv(),
        },
      );
    const plain = await run([]);
    assert.equal(plain.exitCode, 0, `without the policy an update is not gated\n${plain.stderr.slice(-2000)}`);
    const iam = (await s.readState()).resources.find((resource) => resource.name === 'iam_role')!;
    assert.deepEqual(iam.instances[0]!.attributes.input, { value: 'v2', type: 'string' }, 'applied');
    const withPolicy = await run(['--policy', policy]);
    assert.notEqual(withPolicy.exitCode, 0, 'the policy step imports the chunk');
    assert.match(withPolicy.stderr + withPolicy.stdout, /policy-[A-Z0-9]+\.mjs/);
  });
});
