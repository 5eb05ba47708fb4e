// The examples of contract/sections/policy.md are copied by users: each one compiles and does what the section says.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PolicyEvaluator } from '../../src/policy/evaluate.ts';
import type { PolicyActionView, PolicyChangeView, PolicyPlanView } from '../../src/plan/policy-views.ts';
import { actionView, changeView, compiled, ISSUE_EXAMPLE, movedTo, planView } from './policies.support.ts';
import { noCounts } from '../../src/plan/actions.ts';

const section = readFileSync(new URL('../../contract/sections/policy.md', import.meta.url), 'utf8');
const examples = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);

function outcome(
  text: string,
  changes: PolicyChangeView[],
  actions: PolicyActionView[] = [],
  plan: PolicyPlanView = planView(),
) {
  const evaluator = new PolicyEvaluator(compiled({ file: 'policy/example.yaml', text }));
  for (const view of changes) evaluator.change(view);
  for (const view of actions) evaluator.action(view);
  return evaluator.plan(plan);
}

const resource = (type: string, kind: PolicyChangeView['kind'], extra: Partial<PolicyChangeView> = {}) =>
  changeView('main', kind, {
    address: `${type}.main`,
    type,
    provider: 'registry.terraform.io/hashicorp/aws',
    ...extra,
  });

/** The view, renamed within its module and moved into a module, as a `moved` block does. */
const moves = (view: PolicyChangeView): PolicyChangeView[] => [
  movedTo(view, `${view.type}.renamed`),
  movedTo(view, `module.wrap.${view.type}.${view.name}`),
];

describe('contract/sections/policy.md examples', () => {
  it('has the five examples; the first is the issue example verbatim', () => {
    assert.equal(examples.length, 5);
    assert.equal(examples[0], ISSUE_EXAMPLE);
  });

  it('the first example holds through a rename and a move into a module, and warns of nothing', () => {
    const db = changeView('db_main', 'replace');
    const outcomeOf = outcome(examples[0]!, moves(db));
    assert.deepEqual(
      outcomeOf.denied.map((d) => d.address),
      ['terraform_data.renamed', 'module.wrap.terraform_data.db_main'],
    );
    const iam = changeView('iam_role', 'update');
    assert.deepEqual(
      outcome(examples[0]!, moves(iam)).approvalRequired.map((a) => a.address),
      ['terraform_data.renamed', 'module.wrap.terraform_data.iam_role'],
    );
    for (const text of examples) assert.deepEqual(compiled({ file: 'policy/example.yaml', text }).warnings, [], text);
  });

  it('protect every database: a replace or a deposed delete is denied with the message, an update passes', () => {
    const text = examples[1]!;
    const denied = outcome(text, [
      resource('aws_db_instance', 'replace'),
      resource('google_sql_database_instance', 'delete', { deposed: '0a' }),
      resource('aws_rds_cluster', 'unknown'),
      resource('aws_db_instance', 'update'),
      resource('aws_s3_bucket', 'delete'),
    ]).denied;
    assert.deepEqual(
      denied.map((d) => d.address),
      ['aws_db_instance.main', 'google_sql_database_instance.main', 'aws_rds_cluster.main'],
    );
    assert.match(
      denied[0]!.message,
      /^the runner never deletes a database: aws_db_instance\.main would be replaced; change the module/,
    );
    assert.match(denied[1]!.message, /would be deleted;/);
    assert.deepEqual(
      outcome(text, moves(resource('aws_db_instance', 'replace'))).denied.map((d) => d.address),
      ['aws_db_instance.renamed', 'module.wrap.aws_db_instance.main'],
    );
    // terraform moves between types where the provider allows (null_resource to terraform_data): the type it was counts too
    assert.equal(
      outcome(text, [movedTo(resource('aws_rds_cluster', 'delete'), 'aws_rds_cluster_v2.main')]).deniedTotal,
      1,
    );
  });

  it('at most 5 deletes per apply', () => {
    const deletes = (n: number) =>
      Array.from({ length: n }, (_, i) => changeView(`r${i}`, i % 2 ? 'delete' : 'replace'));
    assert.equal(outcome(examples[2]!, deletes(5)).deniedTotal, 0);
    assert.equal(outcome(examples[2]!, deletes(6)).denied[0]!.rule, 'limits.maxDeletes');
  });

  it('IAM changes need approval, reads and no-ops do not', () => {
    const result = outcome(examples[3]!, [
      resource('aws_iam_role', 'update'),
      resource('google_project_iam_member', 'create'),
      resource('google_service_account_key', 'delete'),
      resource('aws_iam_policy_document', 'read'),
      resource('aws_iam_role', 'noop'),
      resource('aws_instance', 'update'),
    ]);
    assert.deepEqual(
      result.approvalRequired.map((a) => a.address),
      ['aws_iam_role.main', 'google_project_iam_member.main', 'google_service_account_key.main'],
    );
    assert.equal(result.deniedTotal, 0);
    assert.equal(outcome(examples[3]!, moves(resource('aws_iam_role', 'update'))).approvalRequiredTotal, 2);
  });

  it('actions on destroy are denied; a plan of more than 50 changes needs review', () => {
    const result = outcome(
      examples[4]!,
      [],
      [
        actionView('action.aws_lambda_invoke.a', { trigger: 'BeforeDestroy', triggeringResource: 'aws_instance.web' }),
        actionView('action.aws_lambda_invoke.b'),
      ],
      planView({ counts: { ...noCounts(), create: 40, delete: 11 } }),
    );
    assert.deepEqual(result.denied, [
      {
        rule: 'no-actions-on-destroy',
        address: 'action.aws_lambda_invoke.a',
        message:
          'provider action action.aws_lambda_invoke.a would run when aws_instance.web is destroyed; remove its action_trigger',
      },
    ]);
    assert.deepEqual(result.approvalRequired, [{ rule: 'large-plans-need-review' }]);
    assert.deepEqual(
      outcome(examples[4]!, [], [], planView({ counts: { ...noCounts(), create: 50 } })).approvalRequired,
      [],
    );
  });
});
