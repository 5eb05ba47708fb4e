// The views every rule is evaluated over when a policy is compiled: a change of every kind, with
// no optional field and with all of them; an action of every trigger; a plan of each tool. A rule
// that errors on any of them, or gives the wrong type, is refused: without a type checker this is
// how a rule that would fail (and so deny) every run is caught before the first run.
import type { ActionCounts } from '../schemas/classification.ts';
import type { RuleScope } from './schema.ts';
import { ACTION_TRIGGER_EVENTS } from '../plan/action-invocations.ts';
import {
  CHANGE_KINDS,
  type PolicyActionView,
  type PolicyChangeView,
  type PolicyChangeKind,
  type PolicyPlanView,
} from '../plan/policy-views.ts';

export type SyntheticView =
  | { scope: 'change'; what: string; view: PolicyChangeView }
  | { scope: 'action'; what: string; view: PolicyActionView }
  | { scope: 'plan'; what: string; view: PolicyPlanView };

/** terraform's actions for each kind (an unknown kind: an action the runner does not know). */
export const ACTIONS_OF: Readonly<Record<PolicyChangeKind, readonly string[]>> = {
  create: ['create'],
  update: ['update'],
  delete: ['delete'],
  replace: ['delete', 'create'],
  read: ['read'],
  noop: ['no-op'],
  forget: ['forget'],
  unknown: ['frobnicate'],
};

/** An action's every trigger: a person's -invoke, or a lifecycle event (as the classifier reads them). */
const TRIGGERS = ['invoke', ...ACTION_TRIGGER_EVENTS] as const;

function syntheticChanges(): SyntheticView[] {
  return CHANGE_KINDS.flatMap((kind): SyntheticView[] => [
    {
      scope: 'change',
      what: `a ${kind} change at the root with no optional field (module, reason, replacePaths, deposed, previousAddress empty)`,
      view: {
        address: 'terraform_data.example',
        mode: 'managed',
        type: 'terraform_data',
        name: 'example',
        provider: 'terraform.io/builtin/terraform',
        kind,
        actions: ACTIONS_OF[kind],
      },
    },
    {
      scope: 'change',
      what: `a deposed ${kind} change in a module, moved and imported, with a reason and replace paths`,
      view: {
        address: 'module.example["a"].aws_db_instance.example[0]',
        module: 'module.example["a"]',
        mode: kind === 'read' ? 'data' : 'managed',
        type: 'aws_db_instance',
        name: 'example',
        provider: 'registry.terraform.io/hashicorp/aws',
        kind,
        actions: ACTIONS_OF[kind],
        reason: 'replace_because_cannot_update',
        replacePaths: [['engine'], ['tags', 'name'], ['block', 0]],
        deposed: '00000001',
        previousAddress: 'module.old.aws_rds_instance.old[0]',
        previousModule: 'module.old',
        previousType: 'aws_rds_instance',
        previousName: 'old',
        moved: true,
        imported: true,
      },
    },
  ]);
}

function syntheticActions(): SyntheticView[] {
  return TRIGGERS.flatMap((trigger): SyntheticView[] => [
    {
      scope: 'action',
      what: `an action triggered by ${trigger}${trigger === 'invoke' ? ' with no triggering resource' : ''} and no onFailure`,
      view: {
        address: 'action.aws_lambda_invoke.example',
        type: 'aws_lambda_invoke',
        provider: 'registry.terraform.io/hashicorp/aws',
        trigger,
        ...(trigger !== 'invoke' && { triggeringResource: 'aws_instance.web' }),
        deferred: false,
      },
    },
    {
      scope: 'action',
      what: `a deferred action in a module triggered by ${trigger}, onFailure taint`,
      view: {
        address: 'module.m.action.aws_ec2_stop_instance.example[0]',
        type: 'aws_ec2_stop_instance',
        provider: 'registry.terraform.io/hashicorp/aws',
        trigger,
        triggeringResource: 'module.m.aws_instance.web[0]',
        onFailure: 'taint',
        deferred: true,
      },
    },
  ]);
}

const counts = (n: number): ActionCounts => ({
  create: n,
  update: n,
  delete: n,
  replace: n,
  read: n,
  noop: n,
  forget: n,
  import: n,
  move: n,
  unknown: n,
});

function syntheticPlans(): SyntheticView[] {
  return [
    {
      scope: 'plan',
      what: 'a terraform plan with no changes and an unknown version',
      view: { counts: counts(0), tool: 'terraform', version: '' },
    },
    {
      scope: 'plan',
      what: 'a terraform plan with 7 entries of every kind',
      view: { counts: counts(7), tool: 'terraform', version: '1.11.4' },
    },
    {
      scope: 'plan',
      what: 'an OpenTofu plan with 1 entry of every kind',
      view: { counts: counts(1), tool: 'opentofu', version: '1.10.0' },
    },
  ];
}

const SYNTHETIC: Readonly<Record<RuleScope, readonly SyntheticView[]>> = {
  change: syntheticChanges(),
  action: syntheticActions(),
  plan: syntheticPlans(),
};

export const syntheticViews = (scope: RuleScope): readonly SyntheticView[] => SYNTHETIC[scope];
