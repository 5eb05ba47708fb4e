// One plan judged by a policy, without terraform: the views the classifier hands the evaluator
// (the reference classifier and the streaming reader alike), `gated` counting the findings, and
// the findings in the termination message and the summary.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { classifyPlan, type ClassifyOptions } from '../../src/plan/classify.ts';
import { classifyPlanStream } from '../../src/plan/stream.ts';
import { classifiedChanges, needsApproval } from '../../src/plan/gate.ts';
import { deniedText, gateCauses } from '../../src/guard/decide.ts';
import { planJudgement } from '../../src/policy/judge.ts';
import type { PolicyChangeView } from '../../src/plan/policy-views.ts';
import { compactResult } from '../../src/output/termination.ts';
import { humanSummary } from '../../src/output/summary.ts';
import { Masker } from '../../src/masking/mask.ts';
import type { Result } from '../../src/schemas/result.ts';
import { runnerClassifyOptions } from '../../src/plan/runner-options.ts';
import { resourceChange, INPUTS_HASH_ADDRESS, planDocument } from '../plan/plans.support.ts';
import { compiled, ISSUE_EXAMPLE, oneRule } from './policies.support.ts';
import { resultOf } from '../output/results.support.ts';

const DOCUMENT = planDocument({
  resource_changes: [
    resourceChange(
      'module.data["eu"].terraform_data.db1',
      ['delete', 'create'],
      { module_address: 'module.data["eu"]', action_reason: 'replace_because_cannot_update' },
      { replace_paths: [['input'], ['block', 0]] },
    ),
    resourceChange('terraform_data.kept', ['create', 'forget']),
    resourceChange(
      'terraform_data.moved',
      ['no-op'],
      { previous_address: 'terraform_data.old' },
      { importing: { id: 'x' } },
    ),
    resourceChange('terraform_data.old_copy', ['delete'], { deposed: '00000001' }),
    resourceChange(INPUTS_HASH_ADDRESS, ['update']),
    resourceChange(`${INPUTS_HASH_ADDRESS}[0]`, ['create']),
    'not an object',
  ],
});

async function views(
  options: ClassifyOptions = {},
): Promise<{ reference: PolicyChangeView[]; streamed: PolicyChangeView[] }> {
  const reference: PolicyChangeView[] = [];
  const streamed: PolicyChangeView[] = [];
  classifyPlan(DOCUMENT, runnerClassifyOptions({ ...options, onChange: (view) => reference.push(view) }));
  await classifyPlanStream(
    Readable.from([Buffer.from(JSON.stringify(DOCUMENT))]),
    runnerClassifyOptions({ ...options, onChange: (view) => streamed.push(view) }),
  );
  return { reference, streamed };
}

describe('policy: what the classifier hands the evaluator', () => {
  it("every counted entry as a rule sees it, never the runner's own; the stream and the reference agree", async () => {
    const { reference, streamed } = await views();
    assert.deepEqual(streamed, reference);
    assert.deepEqual(reference, [
      {
        address: 'module.data["eu"].terraform_data.db1',
        module: 'module.data["eu"]',
        mode: 'managed',
        type: 'terraform_data',
        name: 'db1',
        provider: 'terraform.io/builtin/terraform',
        kind: 'replace',
        actions: ['delete', 'create'],
        reason: 'replace_because_cannot_update',
        replacePaths: [['input'], ['block', 0]],
        deposed: null,
        previousAddress: null,
        previousModule: null,
        previousType: null,
        previousName: null,
        moved: false,
        imported: false,
      },
      {
        address: 'terraform_data.kept',
        module: null,
        mode: 'managed',
        type: 'terraform_data',
        name: 'kept',
        provider: 'terraform.io/builtin/terraform',
        kind: 'forget',
        actions: ['create', 'forget'],
        reason: null,
        replacePaths: null,
        deposed: null,
        previousAddress: null,
        previousModule: null,
        previousType: null,
        previousName: null,
        moved: false,
        imported: false,
      },
      {
        address: 'terraform_data.moved',
        module: null,
        mode: 'managed',
        type: 'terraform_data',
        name: 'moved',
        provider: 'terraform.io/builtin/terraform',
        kind: 'noop',
        actions: ['no-op'],
        reason: null,
        replacePaths: null,
        deposed: null,
        previousAddress: 'terraform_data.old',
        previousModule: '',
        previousType: 'terraform_data',
        previousName: 'old',
        moved: true,
        imported: true,
      },
      {
        address: 'terraform_data.old_copy',
        module: null,
        mode: 'managed',
        type: 'terraform_data',
        name: 'old_copy',
        provider: 'terraform.io/builtin/terraform',
        kind: 'delete',
        actions: ['delete'],
        reason: null,
        replacePaths: null,
        deposed: '00000001',
        previousAddress: null,
        previousModule: null,
        previousType: null,
        previousName: null,
        moved: false,
        imported: false,
      },
      // An instance of the runner's record is not the runner's own: destructive and unknown, so a policy sees it too.
      {
        address: `${INPUTS_HASH_ADDRESS}[0]`,
        module: null,
        mode: 'managed',
        type: 'terraform_data',
        name: 'captf_inputs_hash',
        provider: 'terraform.io/builtin/terraform',
        kind: 'unknown',
        actions: ['create'],
        reason: null,
        replacePaths: null,
        deposed: null,
        previousAddress: null,
        previousModule: null,
        previousType: null,
        previousName: null,
        moved: false,
        imported: false,
      },
      { address: 'resource_changes[6]', kind: 'unknown', actions: [] },
    ]);
  });

  it('limits.maxDeletes counts exactly destructiveTotal', async () => {
    const judgement = planJudgement(compiled('apiVersion: policy.captf.io/v1\nlimits:\n  maxDeletes: 3\n'), {
      tool: 'terraform',
    });
    const classified = classifyPlan(DOCUMENT, runnerClassifyOptions({ onChange: judgement.onChange }));
    const judged = await judgement.judge(classified);
    assert.equal(classified.destructiveTotal, 4);
    assert.equal(judged.policy!.deletes, 4);
    assert.deepEqual(
      judged.policy!.denied.map((d) => d.rule),
      ['limits.maxDeletes'],
    );
  });
});

describe('policy: the judgement and the gate', () => {
  const update = planDocument({
    resource_changes: [
      resourceChange('terraform_data.iam_role', ['update']),
      resourceChange('terraform_data.web', ['no-op']),
    ],
  });

  async function judged(policyText: string, document = update, effects?: 'deny') {
    const judgement = planJudgement(compiled(policyText), { tool: 'opentofu', ...(effects && { effects }) });
    return judgement.judge(classifyPlan(document, { onChange: judgement.onChange, onAction: judgement.onAction }));
  }

  it('a requireApproval finding gates a plan that destroys nothing; without it the plan is not gated', async () => {
    const ungated = classifyPlan(update);
    assert.equal(ungated.gated, false);
    const plan = await judged(ISSUE_EXAMPLE.replace('terraform_data.iam', 'terraform_data.iam_'));
    assert.equal(plan.gated, true);
    assert.deepEqual(plan.policy, {
      effects: 'all',
      denied: [],
      deniedTotal: 0,
      approvalRequired: [{ rule: 'iam-needs-review', address: 'terraform_data.iam_role' }],
      approvalRequiredTotal: 1,
      deletes: 0,
      timedOut: false,
      cost: plan.policy?.cost,
      costExceeded: false,
    });
    assert.ok(plan.policy!.cost > 0);
    assert.deepEqual(gateCauses(plan), [
      'policy rules require an approval: iam-needs-review at terraform_data.iam_role',
    ]);
  });

  it('a denial gates too, its words say what must change, and it is no cause an approval passes', async () => {
    const plan = await judged(
      'apiVersion: policy.captf.io/v1\nrules:\n- name: no-iam\n  match: change.name == "iam_role"\n  effect: deny\n  message: \'"IAM is managed elsewhere: remove " + change.address\'\n',
    );
    assert.equal(plan.gated, true);
    assert.equal(
      deniedText(plan.policy!),
      'no-iam at terraform_data.iam_role: IAM is managed elsewhere: remove terraform_data.iam_role',
    );
    assert.deepEqual(gateCauses(plan), []);
  });

  it('a finding is not a change: a rule matching a no-op leaves a plan of no changes without changes', async () => {
    const noop = planDocument({ resource_changes: [resourceChange('terraform_data.web', ['no-op'])] });
    const judgedNoop = await judged(
      'apiVersion: policy.captf.io/v1\nrules:\n- name: all\n  match: "true"\n  effect: requireApproval\n',
      noop,
    );
    assert.equal(needsApproval(judgedNoop), true);
    assert.equal(classifiedChanges(judgedNoop), false);
  });

  it("plan rules see the tool given and the plan's terraform_version; effects deny skips requireApproval rules", async () => {
    const both =
      'apiVersion: policy.captf.io/v1\nrules:\n- name: tofu-only\n  on: plan\n  match: plan.tool == "opentofu" && plan.version == "1.11.4"\n  effect: deny\n- name: review\n  match: "true"\n  effect: requireApproval\n';
    const all = await judged(both);
    assert.deepEqual([all.policy!.denied.map((d) => d.rule), all.policy!.approvalRequiredTotal], [['tofu-only'], 2]);
    const denyOnly = await judged(both, update, 'deny');
    assert.deepEqual(
      [denyOnly.policy!.effects, denyOnly.policy!.denied.map((d) => d.rule), denyOnly.policy!.approvalRequiredTotal],
      ['deny', ['tofu-only'], 0],
    );
  });

  it('every requireApproval finding is told, also past the list limit (what an approval covered)', async () => {
    const many = planDocument({
      resource_changes: Array.from({ length: 120 }, (_, i) => resourceChange(`terraform_data.n${i}`, ['update'])),
    });
    const told: string[] = [];
    const judgement = planJudgement(oneRule('- name: all\n  match: "true"\n  effect: requireApproval\n'), {
      tool: 'terraform',
      onApprovalRequired: (f) => told.push(f.address!),
    });
    const result = await judgement.judge(classifyPlan(many, { onChange: judgement.onChange }));
    assert.equal(result.policy!.approvalRequired.length, 100);
    assert.equal(result.policy!.approvalRequiredTotal, 120);
    assert.equal(told.length, 120);
  });
});

describe('policy: the findings in the termination message and the summary', () => {
  const denied = async (count: number): Promise<Result> => {
    const judgement = planJudgement(
      oneRule(
        '- name: no-deletes\n  match: change.kind == "delete"\n  effect: deny\n  message: \'"keep " + change.address + "; remove the removal from the module"\'\n',
      ),
      { tool: 'terraform' },
    );
    const document = planDocument({
      resource_changes: Array.from({ length: count }, (_, i) =>
        resourceChange(`terraform_data.resource_with_a_long_name_${i}`, ['delete']),
      ),
    });
    const judgedPlan = await judgement.judge(classifyPlan(document, { onChange: judgement.onChange, limit: 1000 }));
    return resultOf({
      outcome: 'invalid',
      reason: 'PolicyDenied',
      message: 'm'.repeat(5000),
      exitCode: 8,
      plan: judgedPlan,
    });
  };

  it('the termination message carries the first denials with their words and the totals, within 4096 bytes', async () => {
    for (const count of [1, 400]) {
      const text = compactResult(await denied(count), new Masker());
      assert.ok(Buffer.byteLength(text) <= 4096, `${Buffer.byteLength(text)} bytes`);
      const policy = JSON.parse(text).policy;
      assert.equal(policy.deniedTotal, count);
      assert.deepEqual(policy.denied[0], {
        rule: 'no-deletes',
        address: 'terraform_data.resource_with_a_long_name_0',
        message: 'keep terraform_data.resource_with_a_long_name_0; remove the removal from the module',
      });
      assert.ok(policy.denied.length <= 5);
    }
    const judgedLess = { ...(await denied(1)), plan: classifyPlan(planDocument()) };
    assert.equal(JSON.parse(compactResult(judgedLess, new Masker())).policy, undefined, 'no policy: no policy member');
  });

  it('the summary lists each denial and finding', async () => {
    const summary = humanSummary(await denied(2));
    assert.match(
      summary,
      /denied by the policy \(2: no approval can pass it\):\n {2}no-deletes at terraform_data\.resource_with_a_long_name_0: keep /,
    );
  });
});

describe('policy: an evaluation that can be stopped', () => {
  // A rule evaluated in no time: the slices end by the clock the judgement is given (10 ms a reading),
  // so what is yielded when does not depend on how fast the machine evaluates.
  const every = oneRule('- name: every\n  match: "true"\n  effect: deny\n');
  const changes = planDocument({
    resource_changes: Array.from({ length: 12 }, (_, i) => resourceChange(`terraform_data.n${i}`, ['create'])),
  });
  // Each change costs this rule its whole budget (a million units) unless its time runs out first.
  const slow = oneRule(
    '- name: slow\n  match: change.name.split("").exists(c, change.address.contains(c + "#"))\n  effect: deny\n',
  );
  const longNames = planDocument({
    resource_changes: Array.from({ length: 12 }, (_, i) =>
      resourceChange(`terraform_data.${'n'.repeat(6000)}${i}`, ['create']),
    ),
  });

  it('yields to the event loop while it evaluates: a timer set before it runs before it ends', async () => {
    let ticked = false;
    const seen: boolean[] = [];
    setTimeout(() => (ticked = true), 0);
    let t = 0;
    const judgement = planJudgement(every, {
      tool: 'terraform',
      now: () => (t += 10),
      stopRequested: () => (seen.push(ticked), false),
    });
    const judgedPlan = await judgement.judge(classifyPlan(changes, { onChange: judgement.onChange }));
    assert.equal(judgedPlan.policy!.deniedTotal, 12);
    assert.ok(
      seen.indexOf(true) > 0 && seen.indexOf(true) < seen.length - 1,
      'the timer ran in the middle of the evaluation',
    );
  });

  it('the time the event loop runs while it yields is not spent (the evaluator is told it paused): only the rules are timed', async () => {
    let t = 0;
    let turns = 0;
    let done = false;
    // Each turn of the event loop moves the clock a second: the stream's I/O, other handles.
    const turn = () => {
      if (done) return;
      t += 1000;
      turns += 1;
      setImmediate(turn);
    };
    setImmediate(turn);
    // Three rules a change: the judgement pauses between rules of one change, not only between changes.
    const three = oneRule(['a', 'b', 'c'].map((name) => `- name: ${name}\n  match: "true"\n  effect: deny\n`).join(''));
    const judgement = planJudgement(three, { tool: 'terraform', timeLimitMs: 1000, now: () => (t += 10) });
    try {
      const judgedPlan = await judgement.judge(classifyPlan(changes, { onChange: judgement.onChange }));
      assert.equal(judgedPlan.policy!.timedOut, false, 'the turns are not evaluation time');
      assert.ok(turns >= 5, `the evaluation yielded to the event loop (${turns} turns)`);
      assert.equal(judgedPlan.policy!.deniedTotal, 36);
    } finally {
      done = true;
    }
  });

  it('says once, as the first rule evaluation starts, that the evaluation began (the log line a stop can be timed by)', async () => {
    const starts: number[] = [];
    let asked = 0;
    const judgement = planJudgement(every, {
      tool: 'terraform',
      stopRequested: () => (asked++, false),
      onEvaluationStart: () => starts.push(asked),
    });
    await judgement.judge(classifyPlan(changes, { onChange: judgement.onChange }));
    assert.deepEqual(starts, [1], 'once, after the first stop check and before any rule ran');
  });

  it('a stop heard after a rule that ran out of the time limit counts that rule: never "stopped after 0 rule evaluations"', async () => {
    let asked = 0;
    let t = 0;
    // the first rule's evaluation runs out of the time limit (the clock moves 10 ms a reading), and the stop is heard after it
    const judgement = planJudgement(slow, {
      tool: 'terraform',
      timeLimitMs: 5,
      now: () => (t += 10),
      stopRequested: () => ++asked > 1,
    });
    await assert.rejects(judgement.judge(classifyPlan(longNames, { onChange: judgement.onChange })), {
      kind: 'interrupted',
      message:
        'the policy evaluation was stopped after 1 rule evaluations, before it judged the whole plan: no verdict, nothing applied',
    });
  });

  it('a stop request ends it at the next rule: no verdict (an interruption naming the policy evaluation), never a pass', async () => {
    let asked = 0;
    const judgement = planJudgement(every, { tool: 'terraform', stopRequested: () => ++asked > 3 });
    await assert.rejects(judgement.judge(classifyPlan(changes, { onChange: judgement.onChange })), {
      kind: 'interrupted',
      message:
        'the policy evaluation was stopped after 2 rule evaluations, before it judged the whole plan: no verdict, nothing applied',
    });
  });
});
