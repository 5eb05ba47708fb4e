// Writes the plan documents of test/fixtures/plans/terraform-1.14+/ and opentofu-1.11+/: neither
// tool can be installed here, so each is a real terraform 1.11.4 document of terraform-1.11/ with
// exactly the changes the newer tool's source makes to it. The source of each change is named next
// to it (file and tag of hashicorp/terraform or opentofu/opentofu); the README of each directory
// lists them too. Keys are inserted where the Go struct that writes them puts them (encoding/json
// writes fields in struct order). Deterministic: run it again and nothing changes.
//
//   npx tsx scripts/generators/gen-newer-plan-fixtures.ts
import { readFileSync, writeFileSync } from 'node:fs';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Doc = { [key: string]: Json };

const PLANS = new URL('../../test/fixtures/plans/', import.meta.url).pathname;
const real = (name: string): Doc =>
  JSON.parse(readFileSync(`${PLANS}terraform-1.11/${name}__plan.json`, 'utf8')) as Doc;
const write = (dir: string, name: string, doc: Doc) =>
  writeFileSync(`${PLANS}${dir}/${name}__plan.json`, JSON.stringify(doc, null, 2) + '\n');

/**
 * terraform's top-level key order, internal/command/jsonplan/plan.go `type plan struct` (v1.14.0 to
 * v1.16.0-rc2): deferred_action_invocations after deferred_changes, action_invocations after output_changes.
 */
const TERRAFORM_ORDER = [
  'format_version',
  'terraform_version',
  'variables',
  'planned_values',
  'resource_drift',
  'resource_changes',
  'deferred_changes',
  'deferred_action_invocations',
  'output_changes',
  'action_invocations',
  'prior_state',
  'configuration',
  'relevant_attributes',
  'checks',
  'timestamp',
  'applyable',
  'complete',
  'errored',
];

function ordered(doc: Doc, order: string[]): Doc {
  const out: Doc = {};
  for (const key of order) if (key in doc) out[key] = doc[key]!;
  for (const key of Object.keys(doc)) if (!(key in out)) throw new Error(`key ${key} has no place in the order`);
  return out;
}

const changes = (doc: Doc) => doc.resource_changes as Doc[];
const entry = (doc: Doc, address: string) => changes(doc).find((c) => c.address === address)!;
const actionsOf = (c: Doc) => (c.change as Doc).actions as string[];

const AWS = 'registry.terraform.io/hashicorp/aws';

/**
 * One action invocation, internal/command/jsonplan/action_invocations.go `ActionInvocation`
 * (v1.14.0): config_values, config_sensitive and config_unknown come before provider_name.
 */
function invocation(type: string, name: string, config: Doc, trigger: Doc): Doc {
  return {
    address: `action.${type}.${name}`,
    type,
    name,
    config_values: config,
    config_sensitive: {},
    config_unknown: {},
    provider_name: AWS,
    ...trigger,
  };
}

/** `LifecycleActionTrigger` (v1.14.0); `on_failure` from v1.16.0-rc2 (configs/actiononfailure_string.go). */
const lifecycle = (resource: string, event: string, onFailure?: string, block = 0, index = 0): Doc => ({
  lifecycle_action_trigger: {
    triggering_resource_address: resource,
    action_trigger_event: event,
    action_trigger_block_index: block,
    actions_list_index: index,
    ...(onFailure === undefined ? {} : { on_failure: onFailure }),
  },
});

/** `InvokeActionTrigger`: `{}` in v1.14.0; v1.16.0-rc2 adds `calling_resource_address`. */
const invoked = (calling?: string): Doc => ({
  invoke_action_trigger: calling === undefined ? {} : { calling_resource_address: calling },
});

/** The action blocks in configuration.root_module.actions, internal/command/jsonconfig/config.go `type action` (v1.14.0). */
function withActionConfig(doc: Doc, actions: Doc[]): Doc {
  const configuration = doc.configuration as Doc;
  const root = configuration.root_module as Doc;
  const declared = [
    ...new Map(
      actions.map((a) => [
        a.address as string,
        { address: a.address, type: a.type, name: a.name, provider_config_key: 'aws' },
      ]),
    ).values(),
  ];
  root.actions = declared.sort((a, b) => String(a.address).localeCompare(String(b.address)));
  configuration.provider_config = {
    aws: { name: 'aws', full_name: AWS },
    ...((configuration.provider_config as Doc | undefined) ?? {}),
  };
  return doc;
}

function terraform(version: string, base: Doc, edit: (doc: Doc) => Doc): Doc {
  return ordered(edit({ ...structuredClone(base), terraform_version: version }), TERRAFORM_ORDER);
}

const STOP = { instance_id: 'i-0123456789abcdef0', force: false };

// ---- terraform 1.14 to 1.16 ----------------------------------------------------------------------

// `terraform plan -invoke=action.aws_ec2_stop_instance.maintenance` over a converged state: every
// resource no-op, one invoked action. terraform 1.14 exits 2 for it (plans/changes_src.go Empty())
// and calls it applyable (terraform/context_plan.go).
write(
  'terraform-1.14+',
  'invoke',
  terraform('1.14.0', real('no-changes'), (doc) => {
    const actions = [invocation('aws_ec2_stop_instance', 'maintenance', STOP, invoked())];
    return withActionConfig({ ...doc, action_invocations: actions, applyable: true }, actions);
  }),
);

// Lifecycle events of a create: an action before and one after terraform_data.cluster is created.
write(
  'terraform-1.14+',
  'create-events',
  terraform('1.14.0', real('create'), (doc) => {
    const actions = [
      invocation(
        'aws_lambda_invoke',
        'announce',
        { function_name: 'announce', payload: '{}' },
        lifecycle('terraform_data.cluster', 'BeforeCreate'),
      ),
      invocation(
        'aws_lambda_invoke',
        'register',
        { function_name: 'register', payload: '{}' },
        lifecycle('terraform_data.cluster', 'AfterCreate', undefined, 0, 1),
      ),
    ];
    return withActionConfig({ ...doc, action_invocations: actions }, actions);
  }),
);

// An in-place update that triggers an action (AfterUpdate), as terraform 1.14 writes it (no on_failure).
write(
  'terraform-1.14+',
  'after-update',
  terraform('1.14.0', real('update'), (doc) => {
    const actions = [
      invocation('aws_ec2_stop_instance', 'maintenance', STOP, lifecycle('terraform_data.cluster', 'AfterUpdate')),
    ];
    return withActionConfig({ ...doc, action_invocations: actions }, actions);
  }),
);

// terraform 1.16: on_failure on lifecycle triggers (Halt), and an invoke naming its calling resource.
write(
  'terraform-1.14+',
  'update-events-1.16',
  terraform('1.16.0', real('update'), (doc) => {
    const actions = [
      invocation('aws_ec2_stop_instance', 'maintenance', STOP, invoked('terraform_data.cluster')),
      invocation(
        'aws_lambda_invoke',
        'drain',
        { function_name: 'drain', payload: '{}' },
        lifecycle('terraform_data.cluster', 'BeforeUpdate', 'ActionOnFailureHalt'),
      ),
    ];
    return withActionConfig({ ...doc, action_invocations: actions }, actions);
  }),
);

// terraform 1.16 destroy events in a destroy plan: one that taints on failure, one that carries on.
write(
  'terraform-1.14+',
  'destroy-events-1.16',
  terraform('1.16.0', real('destroy'), (doc) => {
    const actions = [
      invocation(
        'aws_lambda_invoke',
        'drain',
        { function_name: 'drain', payload: '{}' },
        lifecycle('terraform_data.cluster', 'BeforeDestroy', 'ActionOnFailureTaint'),
      ),
      invocation(
        'aws_lambda_invoke',
        'farewell',
        { function_name: 'farewell', payload: '{}' },
        lifecycle('terraform_data.cluster', 'AfterDestroy', 'ActionOnFailureContinue', 1),
      ),
    ];
    return withActionConfig({ ...doc, action_invocations: actions }, actions);
  }),
);

// Deferral (-allow-deferral, experimental): node["b"]'s change is deferred (jsonplan/resource.go
// `DeferredResourceChange`, reasons in plan.go), and so is the action its creation triggers
// (action_invocations.go `DeferredActionInvocation`); complete is false (terraform/context_plan.go).
write(
  'terraform-1.14+',
  'deferred',
  terraform('1.14.0', real('create'), (doc) => {
    const deferred = entry(doc, 'terraform_data.node["b"]');
    const action = invocation(
      'aws_lambda_invoke',
      'register',
      { function_name: 'register', payload: '{}' },
      lifecycle('terraform_data.node["b"]', 'AfterCreate'),
    );
    return withActionConfig(
      {
        ...doc,
        resource_changes: changes(doc).filter((c) => c !== deferred),
        deferred_changes: [{ reason: 'resource_config_unknown', resource_change: deferred }],
        deferred_action_invocations: [{ reason: 'deferred_prereq', action_invocation: action }],
        complete: false,
      },
      [action],
    );
  }),
);

// terraform 1.16 `lifecycle { destroy = false }` on a replaced resource: ["create","forget"]
// (jsonplan/plan.go actionString, CreateThenForget): the old object is left, not deleted.
write(
  'terraform-1.14+',
  'create-forget-1.16',
  terraform('1.16.0', real('replace'), (doc) => {
    (entry(doc, 'terraform_data.cluster').change as Doc).actions = ['create', 'forget'];
    return doc;
  }),
);

// ---- OpenTofu 1.11 and 1.12 ----------------------------------------------------------------------

/**
 * OpenTofu's top-level keys, internal/command/jsonplan/plan.go `type Plan struct` (v1.11.0, v1.12.0,
 * main): no applyable, complete, deferred_changes or actions.
 */
const OPENTOFU_ORDER = [
  'format_version',
  'terraform_version',
  'variables',
  'planned_values',
  'resource_drift',
  'resource_changes',
  'output_changes',
  'prior_state',
  'configuration',
  'relevant_attributes',
  'checks',
  'timestamp',
  'errored',
];

function opentofu(version: string, base: Doc, edit: (doc: Doc) => Doc = (doc) => doc): Doc {
  const { applyable: _applyable, complete: _complete, ...rest } = structuredClone(base);
  return ordered(edit({ ...rest, terraform_version: version }), OPENTOFU_ORDER);
}

// A first apply: only the missing keys differ from terraform.
write('opentofu-1.11+', 'create', opentofu('1.11.0', real('create')));

// `lifecycle { enabled = false }` (1.11): a delete with a reason terraform does not have
// (plan.go ResourceInstanceDeleteBecauseEnabledFalse, tofu/node_resource_plan_orphan.go).
write(
  'opentofu-1.11+',
  'enabled-false',
  opentofu('1.11.0', real('delete'), (doc) => {
    entry(doc, 'terraform_data.network').action_reason = 'delete_because_enabled_false';
    return doc;
  }),
);

// `lifecycle { destroy = false }` on a replaced resource (1.12; `tofu plan -out` failed on it until
// 1.12.4): ["forget","create"], in this order (plan.go actionString, ForgetThenCreate).
write(
  'opentofu-1.11+',
  'forget-create',
  opentofu('1.12.4', real('replace'), (doc) => {
    (entry(doc, 'terraform_data.cluster').change as Doc).actions = ['forget', 'create'];
    return doc;
  }),
);

// A resource removed from the configuration with `lifecycle { destroy = false }` (1.12): forget, with
// the reason tofu/node_resource_plan_orphan.go gives it.
write(
  'opentofu-1.11+',
  'forget-destroy-false',
  opentofu('1.12.4', real('forget'), (doc) => {
    const forgotten = entry(doc, 'terraform_data.network');
    if (actionsOf(forgotten)[0] !== 'forget')
      throw new Error('the base fixture no longer forgets terraform_data.network');
    forgotten.action_reason = 'forgot_because_lifecycle_destroy_in_config';
    return doc;
  }),
);
