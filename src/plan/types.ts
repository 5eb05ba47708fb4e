// The parts of `terraform show -json` plan documents the runner reads, typed after
// hashicorp/terraform-json (plan.go, action.go) and terraform's internal/command/jsonplan
// (plan.go, action_invocations.go). Every field is optional here because older format versions and
// OpenTofu lack many of them (format 0.x has no `errored`, `complete` or `applyable`; OpenTofu has
// no `complete`, `applyable`, `deferred_changes` or actions). The classifier checks what it relies
// on, and a top-level key outside PLAN_TOP_LEVEL_KEYS that holds content fails closed.

/** The action strings terraform writes in `change.actions`. Anything else is unknown to the runner. */
export const KNOWN_ACTIONS = ['no-op', 'create', 'read', 'update', 'delete', 'forget'] as const;
export type Action = (typeof KNOWN_ACTIONS)[number];

/** `change` of a resource_changes / resource_drift entry. Values (before, after, ...) are never read. */
export interface Change {
  /** As terraform listed them; typed `unknown[]` because the classifier must survive anything here. */
  actions?: unknown;
  /** Present (an object) when the entry imports an existing object. */
  importing?: { id?: string; identity?: unknown } | null;
  /** Attribute paths that force a replace. */
  replace_paths?: unknown;
}

/** One entry of `resource_changes` or `resource_drift`. */
export interface ResourceChange {
  address?: string;
  /** Set when the resource moved (`moved` block or refactoring). */
  previous_address?: string;
  module_address?: string;
  mode?: 'managed' | 'data';
  type?: string;
  name?: string;
  index?: string | number;
  /** Deposed object key: the entry is a deposed object of `address`, not its current one. */
  deposed?: string;
  change?: Change;
  /** Why terraform chose the action, e.g. `replace_because_cannot_update`, `delete_because_count_index`. */
  action_reason?: string;
}

/** One value of `output_changes`. */
export interface OutputChange {
  actions?: unknown;
}

/** A root module variable declaration in `configuration.root_module.variables`. */
export interface VariableDeclaration {
  sensitive?: boolean;
}

/** `lifecycle_action_trigger` of an action invocation: a resource's lifecycle event runs the action (terraform 1.14+). */
export interface LifecycleActionTrigger {
  triggering_resource_address?: string;
  /** BeforeCreate, AfterCreate, BeforeUpdate, AfterUpdate; terraform 1.16 adds BeforeDestroy, AfterDestroy. */
  action_trigger_event?: string;
  /** terraform 1.16: ActionOnFailureHalt, ActionOnFailureTaint or ActionOnFailureContinue. */
  on_failure?: string;
}

/** One entry of `action_invocations` (terraform 1.14+). `config_values` may hold secrets: never read. */
export interface ActionInvocation {
  address?: string;
  type?: string;
  name?: string;
  provider_name?: string;
  lifecycle_action_trigger?: LifecycleActionTrigger;
  /** Present (an object) when a person asked for the action with `-invoke`; 1.16 adds `calling_resource_address`. */
  invoke_action_trigger?: { calling_resource_address?: string };
}

/** One entry of `deferred_action_invocations`. */
export interface DeferredActionInvocation {
  reason?: string;
  action_invocation?: ActionInvocation;
}

/** One entry of `deferred_changes`: a change terraform could not plan yet. */
export interface DeferredResourceChange {
  reason?: string;
  resource_change?: ResourceChange;
}

export interface Plan {
  format_version?: string;
  terraform_version?: string;
  errored?: boolean;
  complete?: boolean;
  applyable?: boolean;
  resource_changes?: ResourceChange[];
  resource_drift?: ResourceChange[];
  deferred_changes?: DeferredResourceChange[];
  deferred_action_invocations?: DeferredActionInvocation[];
  output_changes?: Record<string, OutputChange>;
  action_invocations?: ActionInvocation[];
  configuration?: { root_module?: { variables?: Record<string, VariableDeclaration> } };
}

/** The header fields of a plan: everything but its lists. */
export type PlanHeader = Pick<Plan, 'format_version' | 'terraform_version' | 'errored' | 'complete' | 'applyable'>;

/**
 * Every top-level key terraform (1.5 to 1.17) and OpenTofu (1.6 to 1.12) are known to write in a
 * plan document, in terraform's order (jsonplan/plan.go, `type plan struct`). A plan does not say
 * which tool wrote it, so this is the union. Any other key that holds content fails closed.
 */
export const PLAN_TOP_LEVEL_KEYS: ReadonlySet<string> = new Set([
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
]);
