// The summary's end: whether anything changed, and the one next step, each from the run's own
// record (a table over the outcomes); and the lines that only some runs may say.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { humanSummary, SUMMARY_LABELS } from '../../src/output/summary.ts';
import type { Result } from '../../src/schemas/result.ts';
import type { Classification } from '../../src/schemas/classification.ts';
import { classifyPlan } from '../../src/plan/classify.ts';
import { approveCommand } from '../../src/guard/decide.ts';
import { resultOf } from './results.support.ts';

const H = 'a'.repeat(64);
const P = 'b'.repeat(64);
const change = (address: string, actions: string[]) => ({
  address,
  mode: 'managed',
  type: 'terraform_data',
  name: address.split('.')[1],
  change: { actions },
});
const planOf = (...changes: ReturnType<typeof change>[]) =>
  classifyPlan({ format_version: '1.2', applyable: true, complete: true, errored: false, resource_changes: changes });
const destructive = planOf(change('terraform_data.a', ['delete']));
const updates = planOf(change('terraform_data.a', ['update']));
/** A plan gated only by a policy's requireApproval finding: nothing in it is destructive. */
const policyGated: Classification = {
  ...updates,
  gated: true,
  policy: {
    rules: 1,
    denied: [],
    deniedTotal: 0,
    approvalRequired: [{ rule: 'owners-review', address: 'terraform_data.a' }],
    approvalRequiredTotal: 1,
  },
} as unknown as Classification;
const denied: Classification = {
  ...destructive,
  policy: {
    rules: 1,
    denied: [{ rule: 'no-deletes', address: 'terraform_data.a', message: 'keep it' }],
    deniedTotal: 1,
    approvalRequired: [],
    approvalRequiredTotal: 0,
  },
} as unknown as Classification;
const withActions = classifyPlan({
  format_version: '1.2',
  applyable: true,
  complete: true,
  errored: false,
  resource_changes: [change('terraform_data.a', ['delete'])],
  action_invocations: [
    {
      address: 'action.x.y',
      type: 'x',
      provider_name: 'p',
      lifecycle_action_trigger: {
        triggering_resource_address: 'terraform_data.a',
        action_trigger_event: 'before_destroy',
      },
    },
  ],
});

const result = resultOf;
const inCluster = { object: { kind: 'cluster' as const, name: 'demo', namespace: 'team-a' } };
const count = (text: string, part: string) => text.split(part).length - 1;
const line = (text: string, label: string) => text.split('\n').find((l) => l.startsWith(label));

const APPLY = ['apply', '--module', 'm', '--inputs', 'in', '--state', '/s/terraform.tfstate'];
const PLAN = [
  'plan',
  '--module',
  'm',
  '--inputs',
  'in',
  '--state',
  '/s/terraform.tfstate',
  '--artifacts',
  'arts',
  '--summary-md',
  'sum.md',
];
const DRIFT = [
  'drift',
  '--module',
  'm',
  '--inputs',
  'in',
  '--state',
  '/s/terraform.tfstate',
  '--detailed-exitcode',
  '--summary-md',
  'sum.md',
];
const kubectl = approveCommand('cluster', 'demo', 'team-a', H);

interface Row {
  name: string;
  result: Partial<Result>;
  argv?: string[];
  changed: string;
  next: string;
  /** Whether the summary says that applying the plan needs an approval; and that an approval matched. */
  needsApproval?: boolean;
  approved?: boolean;
}

/** Every outcome, what its summary says changed and what to do next. */
const ROWS: Row[] = [
  {
    name: 'an apply that changed something',
    result: { applied: true, mayHaveChanged: true, plan: updates },
    argv: APPLY,
    changed: 'yes, terraform apply ran',
    next: 'nothing: the run did its job',
  },
  {
    name: 'an apply with nothing to do',
    result: { outcome: 'noChanges', reason: 'NoChanges' },
    changed: 'nothing: no infrastructure or state was changed',
    next: 'nothing: the run did its job',
  },
  {
    name: 'a blocked apply on a laptop: this command again with the approval',
    result: {
      outcome: 'blocked',
      reason: 'DestructivePlanBlocked',
      exitCode: 3,
      plan: destructive,
      approvalHash: H,
      approveCommand: approveCommand('cluster', undefined, undefined, H),
    },
    argv: [...APPLY, '--approved-hash', P],
    changed: 'nothing: no infrastructure or state was changed',
    next: `review the destructive changes above; to apply the plan, run again with the approval: captf-runner apply --module m --inputs in --state /s/terraform.tfstate --approved-hash ${H}`,
    needsApproval: true,
  },
  {
    name: "a Job's blocked apply: the kubectl command",
    result: {
      outcome: 'blocked',
      reason: 'DestructivePlanBlocked',
      exitCode: 3,
      plan: withActions,
      approvalHash: H,
      approveCommand: kubectl,
      ...inCluster,
    },
    argv: APPLY,
    changed: 'nothing: no infrastructure or state was changed',
    next: `review the destructive changes, the provider actions and what the runner cannot read above; to approve: ${kubectl}`,
    needsApproval: true,
  },
  {
    name: "an apply blocked by a policy's finding alone: nothing destructive to review",
    result: { outcome: 'blocked', reason: 'DestructivePlanBlocked', exitCode: 3, plan: policyGated, approvalHash: H },
    argv: APPLY,
    changed: 'nothing: no infrastructure or state was changed',
    next: `review the policy's findings above; to apply the plan, run again with the approval: captf-runner apply --module m --inputs in --state /s/terraform.tfstate --approved-hash ${H}`,
    needsApproval: true,
  },
  {
    name: 'an approved apply: the approval matched, nothing more is needed',
    result: {
      applied: true,
      mayHaveChanged: true,
      plan: destructive,
      approvalHash: H,
      approval: { given: true, matched: true, required: true, unreviewed: [], unreviewedTotal: 0 },
    },
    argv: [...APPLY, '--approved-hash', H],
    changed: 'yes, terraform apply ran',
    next: 'nothing: the run did its job',
    approved: true,
  },
  {
    name: 'a gated plan applied with the guard off',
    result: {
      applied: true,
      mayHaveChanged: true,
      plan: withActions,
      object: { kind: 'machine' },
      approval: { given: false, matched: false, required: false },
    },
    changed: 'yes, terraform apply ran',
    next: 'nothing: the run did its job',
  },
  {
    name: 'a denied plan, with an approval given: no approval passes it',
    result: {
      outcome: 'invalid',
      reason: 'PolicyDenied',
      exitCode: 8,
      plan: denied,
      approvalHash: H,
      approval: { given: true, matched: true, required: true },
    },
    argv: [...APPLY, '--approved-hash', H],
    changed: 'nothing: no infrastructure or state was changed',
    next: 'change the module, its inputs or the policy (no approval passes a denial), then plan again',
  },
  {
    name: 'a gated plan for manual approval on a laptop: the apply of exactly that plan',
    result: {
      op: 'plan',
      reason: 'PlanCreated',
      plan: destructive,
      planHash: P,
      planArtifact: { location: '/w/arts', object: 'plan-1', ref: '/w/arts/plan-1', sha256: P, chunks: 1, bytes: 1 },
    },
    argv: PLAN,
    changed: 'nothing: no infrastructure or state was changed',
    next: `review the plan above, then apply exactly this plan: captf-runner apply --module m --inputs in --state /s/terraform.tfstate --summary-md sum.md --plan-artifact /w/arts/plan-1 --approved-plan-hash ${P}`,
    needsApproval: true,
  },
  {
    name: "a Job's plan: approve its plan hash",
    result: {
      op: 'plan',
      reason: 'PlanCreated',
      plan: updates,
      planHash: P,
      planArtifact: {
        location: 'secret:team-a',
        object: 'plan-1',
        ref: 'secret:team-a/plan-1',
        sha256: P,
        chunks: 1,
        bytes: 1,
      },
      ...inCluster,
    },
    argv: PLAN,
    changed: 'nothing: no infrastructure or state was changed',
    next: `review the plan above, then approve plan hash ${P}: the apply of exactly this plan (secret:team-a/plan-1) follows`,
  },
  {
    name: 'a plan with no changes',
    result: { op: 'plan', outcome: 'noChanges', reason: 'NoChanges' },
    argv: PLAN,
    changed: 'nothing: no infrastructure or state was changed',
    next: 'nothing: the run did its job',
  },
  {
    name: 'drift found: the remediation, without the flags apply does not take',
    result: {
      op: 'drift',
      reason: 'DriftFound',
      exitCode: 6,
      plan: updates,
      drift: {
        found: true,
        outputsOnly: false,
        resourceDrift: [],
        resourceDriftTotal: 0,
        inputsDiffer: [],
        inputsDifferTotal: 1,
        remediationDestructive: false,
      },
    },
    argv: DRIFT,
    changed: 'nothing: no infrastructure or state was changed',
    next: 'to remediate, apply the inputs again: captf-runner apply --module m --inputs in --state /s/terraform.tfstate --summary-md sum.md',
  },
  {
    name: 'drift found whose remediation needs an approval',
    result: {
      op: 'drift',
      reason: 'DriftFound',
      plan: destructive,
      drift: {
        found: true,
        outputsOnly: false,
        resourceDrift: [],
        resourceDriftTotal: 0,
        inputsDiffer: [],
        inputsDifferTotal: 1,
        remediationDestructive: true,
      },
    },
    argv: DRIFT,
    changed: 'nothing: no infrastructure or state was changed',
    next: 'to remediate, apply the inputs again (it needs an approval: it will be blocked first, and say how to approve): captf-runner apply --module m --inputs in --state /s/terraform.tfstate --summary-md sum.md',
    needsApproval: true,
  },
  {
    name: 'drift found whose remediation the policy denies',
    result: {
      op: 'drift',
      reason: 'DriftFound',
      plan: denied,
      drift: {
        found: true,
        outputsOnly: false,
        resourceDrift: [],
        resourceDriftTotal: 0,
        inputsDiffer: [],
        inputsDifferTotal: 1,
        remediationDestructive: true,
      },
    },
    argv: DRIFT,
    changed: 'nothing: no infrastructure or state was changed',
    next: 'the policy denies a remediation apply (named above): change the module, its inputs or the policy, or the infrastructure back to the state',
  },
  {
    name: 'no drift',
    result: { op: 'drift', reason: 'NoDrift' },
    argv: DRIFT,
    changed: 'nothing: no infrastructure or state was changed',
    next: 'nothing: the run did its job',
  },
  {
    name: 'a destroy (never gated)',
    result: { op: 'destroy', reason: 'DestroySucceeded', applied: true, mayHaveChanged: true, plan: withActions },
    changed: 'yes, terraform apply ran',
    next: 'nothing: the run did its job',
  },
  {
    name: 'a verified restore',
    result: { op: 'restore', reason: 'RestoreSucceeded', mayHaveChanged: true },
    changed: "yes: the backup is the backend's newest state (pushed, then read back and checked)",
    next: 'nothing: the run did its job',
  },
  {
    name: 'a failed restore push',
    result: { op: 'restore', outcome: 'failed', reason: 'StatePushFailed', exitCode: 1, mayHaveChanged: true },
    changed: 'maybe: the state may differ from before the run',
    next: 'see the error above; a retry can help',
  },
  {
    name: 'a released lock',
    result: { op: 'unlock', reason: 'Unlocked', mayHaveChanged: true },
    changed: 'yes: the lock was released',
    next: 'nothing: the run did its job',
  },
  {
    name: 'a failed apply',
    result: { outcome: 'failed', reason: 'ApplyFailed', exitCode: 1, applied: true, mayHaveChanged: true },
    changed: 'maybe: terraform apply ran (see the state and the log)',
    next: 'see the error above; a retry can help',
  },
  {
    name: 'a stale approved plan',
    result: { outcome: 'failed', reason: 'PlanStale', exitCode: 5 },
    changed: 'nothing: no infrastructure or state was changed',
    next: 'make a new plan (and approval): this one can never be applied',
  },
  {
    name: 'invalid inputs',
    result: { outcome: 'invalid', reason: 'InputsInvalid', exitCode: 2 },
    changed: 'nothing: no infrastructure or state was changed',
    next: 'fix the inputs or flags named above, then run again',
  },
  {
    name: 'a mistyped flag',
    result: { outcome: 'invalid', reason: 'UsageInvalid', exitCode: 2 },
    changed: 'nothing: no infrastructure or state was changed',
    next: 'fix the command line (captf-runner apply --help lists its flags), then run again',
  },
  {
    name: 'a mistyped --module on a laptop: the flag, not a new image',
    result: {
      outcome: 'invalid',
      reason: 'ImageInvalid',
      exitCode: 4,
      error: { kind: 'image', reason: 'ImageInvalid', message: 'x', step: 'preflight', detail: { setting: 'module' } },
    },
    changed: 'nothing: no infrastructure or state was changed',
    next: 'fix --module (it names what is wrong above), then run again',
  },
  {
    name: 'a broken module on a laptop',
    result: { outcome: 'invalid', reason: 'ImageInvalid', exitCode: 4 },
    changed: 'nothing: no infrastructure or state was changed',
    next: 'fix the module named above, then run again',
  },
  {
    name: "a Job's broken image: a new image",
    result: {
      outcome: 'invalid',
      reason: 'ImageInvalid',
      exitCode: 4,
      ...inCluster,
      error: { kind: 'image', reason: 'ImageInvalid', message: 'x', detail: { setting: 'module' } },
    },
    changed: 'nothing: no infrastructure or state was changed',
    next: 'fix the module or image named above (a new image): a retry with this image fails the same way',
  },
  {
    name: 'a refused refresh',
    result: { op: 'refresh', outcome: 'failed', reason: 'RefreshRefused', exitCode: 4 },
    changed: 'nothing: no infrastructure or state was changed',
    next: 'fix the module named above, then run again',
  },
  {
    name: 'a deterministic refusal of another code',
    result: { op: 'restore', outcome: 'invalid', reason: 'SomethingElse' as Result['reason'], exitCode: 9 },
    changed: 'nothing: no infrastructure or state was changed',
    next: 'see the error above: a retry fails the same way',
  },
  {
    name: 'an interrupted run',
    result: { outcome: 'interrupted', reason: 'Interrupted', exitCode: 143 },
    changed: 'nothing: no infrastructure or state was changed',
    next: 'run again once the cause of the stop is gone (a held state lock is named above)',
  },
];

describe("humanSummary: every line from the run's own record", () => {
  for (const row of ROWS) {
    it(row.name, () => {
      const text = humanSummary(result(row.result), row.argv ? { argv: row.argv } : {});
      assert.equal(line(text, 'changed: '), `changed: ${row.changed}`, text);
      assert.equal(line(text, 'next: '), `next: ${row.next}`, text);
      assert.equal(
        count(text, '\napplying this plan needs an approval (plan.gated)\n'),
        row.needsApproval ? 1 : 0,
        text,
      );
      assert.equal(count(text, '\napproved: '), row.approved ? 1 : 0, text);
      if (row.approved) assert.match(text, new RegExp(`^approved: the approval given matched approval hash ${H}`, 'm'));
      // A command is said once, and only a Job's summary names kubectl.
      assert.ok(count(text, 'captf-runner apply ') <= 1, text);
      if (!row.result.object?.name) assert.doesNotMatch(text, /kubectl/, text);
    });
  }

  it('a replace terraform makes because the object is tainted says so (an interrupted apply left it half made)', () => {
    const plan = classifyPlan({
      format_version: '1.2',
      applyable: true,
      complete: true,
      errored: false,
      resource_changes: [
        { ...change('terraform_data.a', ['delete', 'create']), action_reason: 'replace_because_tainted' },
        change('terraform_data.b', ['delete', 'create']),
      ],
    });
    const text = humanSummary(
      result({ outcome: 'blocked', reason: 'DestructivePlanBlocked', exitCode: 3, plan, approvalHash: H }),
    );
    assert.match(
      text,
      /^ {2}terraform_data\.a \(replace\): tainted, an apply that did not finish \(interrupted, or failed\) left it half made; the replace finishes that apply$/m,
    );
    assert.match(text, /^ {2}terraform_data\.b \(replace\)$/m, 'a replace for another reason says nothing of taint');
  });

  it("terraform's errors by place, the first few", () => {
    const diagnostics = [
      {
        severity: 'error' as const,
        summary:
          'Terraform encountered problems during initialisation, including problems with the configuration, described below.',
      },
      ...Array.from({ length: 7 }, (_, i) => ({
        severity: 'error' as const,
        summary: 'Invalid expression',
        file: 'main.tf',
        line: i + 1,
      })),
      { severity: 'warning' as const, summary: 'Deprecated', file: 'main.tf', line: 9 },
    ];
    const text = humanSummary(
      result({
        outcome: 'invalid',
        reason: 'ImageInvalid',
        exitCode: 4,
        error: { kind: 'image', reason: 'ImageInvalid', message: 'x', detail: { diagnostics } },
      }),
    );
    assert.deepEqual(
      text.split('\n').filter((l) => l.startsWith('terraform error: ')),
      [
        ...[1, 2, 3, 4, 5].map((n) => `terraform error: main.tf:${n}: Invalid expression`),
        'terraform error: … and 2 more (error.detail.diagnostics)',
      ],
    );
  });
});

describe('humanSummary: its lines are its own', () => {
  it('a message cannot start a line: it stays one line, its control characters escaped', () => {
    const text = humanSummary(result({ message: 'Bad.\nchanged: nothing\r\nnext: nothing to do\x1b[2J\u202e' }));
    assert.equal(text.split('\n')[1], String.raw`Bad.\nchanged: nothing\r\nnext: nothing to do\x1b[2J\u202e`);
    assert.equal(count(text, '\nchanged: '), 1, text);
  });

  it("every line is masked but its label, the runner's own words: a secret equal to one of them leaves the shape readable", () => {
    const mask = (text: string) => text.replace(/apply|changed|succeeded/g, '(sensitive value)');
    const text = humanSummary(result({ applied: true, warnings: ['apply changed'], message: 'Applied.' }), { mask });
    assert.deepEqual(text.trimEnd().split('\n'), [
      'captf-runner (sensitive value): (sensitive value) (ApplySucceeded)',
      'Applied.',
      'warning: (sensitive value) (sensitive value)',
      'changed: yes, terraform (sensitive value) ran',
      'next: nothing: the run did its job',
    ]);
    for (const line of text.trimEnd().split('\n'))
      assert.ok(SUMMARY_LABELS.some((label) => label !== '' && line.startsWith(label)) || line === 'Applied.', line);
  });
});
