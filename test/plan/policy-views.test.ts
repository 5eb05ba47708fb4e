import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PolicyEvaluator } from '../../src/policy/evaluate.ts';
import {
  CHANGE_KINDS,
  type PolicyActionView,
  type PolicyChangeView,
  type PolicyPlanView,
} from '../../src/plan/policy-views.ts';
import { actionView, changeView, oneRule, planView } from '../policy/policies.support.ts';
import { noCounts } from '../../src/plan/actions.ts';

/** Whether a deny rule `on: scope` with `match` matches the view (and did not fail: a failure would deny too, so it is told apart). */
function matches(
  scope: 'change' | 'action' | 'plan',
  match: string,
  view: PolicyChangeView | PolicyActionView | PolicyPlanView,
): boolean {
  const evaluator = new PolicyEvaluator(
    oneRule(`- name: r\n  on: ${scope}\n  match: ${JSON.stringify(match)}\n  effect: deny\n  message: '"matched"'\n`),
  );
  if (scope === 'change') evaluator.change(view as PolicyChangeView);
  if (scope === 'action') evaluator.action(view as PolicyActionView);
  const outcome = evaluator.plan(scope === 'plan' ? (view as PolicyPlanView) : planView());
  assert.ok(
    outcome.denied.every((d) => d.message === 'matched'),
    `the rule failed: ${JSON.stringify(outcome.denied)}`,
  );
  return outcome.deniedTotal > 0;
}

const FULL_CHANGE: PolicyChangeView = {
  address: 'module.db["eu"].aws_db_instance.main[0]',
  module: 'module.db["eu"]',
  mode: 'managed',
  type: 'aws_db_instance',
  name: 'main',
  provider: 'registry.terraform.io/hashicorp/aws',
  kind: 'replace',
  actions: ['create', 'delete'],
  reason: 'replace_because_cannot_update',
  replacePaths: [['engine'], ['tags', 'a b'], ['block', 0]],
  deposed: '0a1b2c3d',
  previousAddress: 'module.legacy.aws_rds_instance.old[0]',
  previousModule: 'module.legacy',
  previousType: 'aws_rds_instance',
  previousName: 'old',
  moved: true,
  imported: true,
};

describe('policy views: every field of a change is readable in CEL', () => {
  const cases: [string, string][] = [
    ['address', 'change.address == "module.db[\\"eu\\"].aws_db_instance.main[0]"'],
    ['module', 'change.module == "module.db[\\"eu\\"]"'],
    ['mode', 'change.mode == "managed"'],
    ['type', 'change.type == "aws_db_instance"'],
    ['name', 'change.name == "main"'],
    ['provider', 'change.provider.endsWith("/hashicorp/aws")'],
    ['kind', 'change.kind == "replace"'],
    ['actions', 'change.actions == ["create", "delete"]'],
    ['reason', 'change.reason == "replace_because_cannot_update"'],
    ['replacePaths', 'change.replacePaths == [["engine"], ["tags", "a b"], ["block", "0"]]'],
    ['deposed', 'change.deposed == "0a1b2c3d"'],
    ['previousAddress', 'change.previousAddress.endsWith(".old[0]")'],
    ['previousModule', 'change.previousModule == "module.legacy"'],
    ['previousType', 'change.previousType == "aws_rds_instance"'],
    ['previousName', 'change.previousName == "old"'],
    [
      'addresses',
      'change.addresses == ["module.db[\\"eu\\"].aws_db_instance.main[0]", "module.legacy.aws_rds_instance.old[0]"]',
    ],
    ['modules', 'change.modules == ["module.db[\\"eu\\"]", "module.legacy"]'],
    ['types', 'change.types == ["aws_db_instance", "aws_rds_instance"]'],
    ['names', 'change.names == ["main", "old"]'],
    ['moved', 'change.moved == true'],
    ['imported', 'change.imported'],
  ];
  for (const [field, match] of cases) {
    it(`change.${field}`, () => {
      assert.equal(matches('change', match, FULL_CHANGE), true);
      const other: PolicyChangeView = { address: 'terraform_data.x', kind: 'create', actions: ['create'] };
      assert.equal(matches('change', match, other), false);
    });
  }

  it('what a change goes by: where it is and, when it moved, where it was, each once', () => {
    const renamed = changeView('archive', 'replace', {
      moved: true,
      previousAddress: 'terraform_data.db',
      previousModule: '',
      previousType: 'terraform_data',
      previousName: 'db',
    });
    assert.equal(
      matches(
        'change',
        'change.names == ["archive", "db"] && change.modules == [""] && change.types == ["terraform_data"]',
        renamed,
      ),
      true,
    );
    assert.equal(
      matches('change', 'change.addresses == ["terraform_data.archive", "terraform_data.db"]', renamed),
      true,
    );
    const stayed = changeView('db', 'replace');
    assert.equal(
      matches(
        'change',
        'change.names == ["db"] && change.addresses == ["terraform_data.db"] && change.modules == [""]',
        stayed,
      ),
      true,
    );
  });

  it('every kind of the classification reaches the rule as its name', () => {
    for (const kind of CHANGE_KINDS)
      assert.equal(matches('change', `change.kind == "${kind}"`, changeView('x', kind)), true, kind);
  });

  it('absent or null optional fields read as "", [] and false: one type per field, never null', () => {
    const bare: PolicyChangeView = { address: 'terraform_data.x', kind: 'delete', actions: ['delete'] };
    const nulls: PolicyChangeView = {
      ...bare,
      module: null,
      mode: null,
      type: null,
      name: null,
      provider: null,
      reason: null,
      replacePaths: null,
      deposed: null,
      previousAddress: null,
      previousModule: null,
      previousType: null,
      previousName: null,
    };
    const match = [
      'change.module == ""',
      'change.mode == ""',
      'change.type == ""',
      'change.name == ""',
      'change.provider == ""',
      'change.reason == ""',
      'change.replacePaths == []',
      'change.deposed == ""',
      'change.previousAddress == ""',
      'change.previousModule == "" && change.previousType == "" && change.previousName == ""',
      'change.names == [""] && change.addresses == ["terraform_data.x"]',
      'change.moved == false',
      'change.imported == false',
      'type(change.deposed) == string',
      'type(change.moved) == bool',
    ].join(' && ');
    assert.equal(matches('change', match, bare), true);
    assert.equal(matches('change', match, nulls), true);
  });

  it('binds only the documented fields: anything else the caller passes is invisible', () => {
    const withValues = { ...changeView('x', 'update'), before: { password: 'hunter2' }, after: {} } as PolicyChangeView;
    assert.equal(matches('change', 'size(change) == 21', withValues), true);
    assert.equal(matches('change', 'change.all(k, k != "before" && k != "after")', withValues), true);
  });
});

describe('policy views: every field of an action is readable in CEL', () => {
  const full = actionView('module.m.action.aws_ec2_stop_instance.stop[0]', {
    type: 'aws_ec2_stop_instance',
    trigger: 'AfterUpdate',
    triggeringResource: 'module.m.aws_instance.web[0]',
    onFailure: 'taint',
    deferred: true,
  });
  const cases: [string, string][] = [
    ['address', 'action.address == "module.m.action.aws_ec2_stop_instance.stop[0]"'],
    ['type', 'action.type == "aws_ec2_stop_instance"'],
    ['provider', 'action.provider == "registry.terraform.io/hashicorp/aws"'],
    ['trigger', 'action.trigger == "AfterUpdate"'],
    ['triggeringResource', 'action.triggeringResource == "module.m.aws_instance.web[0]"'],
    ['onFailure', 'action.onFailure == "taint"'],
    ['deferred', 'action.deferred'],
  ];
  for (const [field, match] of cases) {
    it(`action.${field}`, () => {
      assert.equal(matches('action', match, full), true);
      assert.equal(matches('action', match, { address: 'action.x.y', trigger: 'invoke', deferred: false }), false);
    });
  }

  it('an invoked action has triggeringResource "" and, without one, onFailure ""', () => {
    assert.equal(
      matches(
        'action',
        'action.triggeringResource == "" && action.onFailure == "" && action.type == "" && action.provider == ""',
        { address: 'action.x.y', trigger: 'invoke', triggeringResource: null, onFailure: null, deferred: false },
      ),
      true,
    );
  });
});

describe('policy views: every field of the plan is readable in CEL', () => {
  it('plan.counts.<kind> is a CEL int for each of the classification counts', () => {
    const fields = Object.keys(noCounts()) as (keyof ReturnType<typeof noCounts>)[];
    for (const [i, field] of fields.entries()) {
      const counts = { ...noCounts(), [field]: i + 1 };
      assert.equal(
        matches(
          'plan',
          `plan.counts.${field} == ${i + 1} && plan.counts.${field} + 1 == ${i + 2} && type(plan.counts.${field}) == int`,
          planView({ counts }),
        ),
        true,
        field,
      );
      assert.equal(matches('plan', `plan.counts.${field} == ${i + 1}`, planView()), false, field);
    }
  });

  it('plan.tool and plan.version', () => {
    assert.equal(
      matches(
        'plan',
        'plan.tool == "opentofu" && plan.version == "1.10.0"',
        planView({ tool: 'opentofu', version: '1.10.0' }),
      ),
      true,
    );
    assert.equal(matches('plan', 'plan.tool == "opentofu"', planView()), false);
    assert.equal(matches('plan', 'plan.version == ""', planView({ version: '' })), true);
  });

  it('a plan rule runs once, also when the plan has no change at all', () => {
    const evaluator = new PolicyEvaluator(
      oneRule(`- name: r\n  on: plan\n  match: "true"\n  effect: requireApproval\n`),
    );
    assert.deepEqual(evaluator.plan(planView()).approvalRequired, [{ rule: 'r' }]);
  });
});

describe('policy views: the strings extension, as Kubernetes offers it', () => {
  it('lowerAscii, split, indexOf and matches (RE2) are available', () => {
    assert.equal(
      matches(
        'change',
        'change.name.lowerAscii() == "dbmain" && change.address.split(".")[0] == "terraform_data" && change.name.indexOf("M") == 2 && change.name.matches("^db[A-Z]")',
        changeView('dbMain', 'delete'),
      ),
      true,
    );
  });
});
