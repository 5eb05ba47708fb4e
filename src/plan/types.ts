// The plan document `terraform show -json` prints, typed after hashicorp/terraform-json (plan.go)
// and terraform's internal/command/jsonplan (plan.go, action_invocations.go): the fields the
// runner reads, as terraform writes them. The streaming reader (stream.ts) selects exactly these
// fields, and the classifier (classify.ts) reads them; since nothing guarantees a document's shape,
// both see them as Unchecked (values.ts): the same fields, any JSON value in each, checked before use.
//
// Every field is optional because older format versions and OpenTofu lack many of them (format 0.x
// has no `errored`, `complete` or `applyable`; OpenTofu has no `complete`, `applyable`,
// `deferred_changes` or actions). A top-level key outside PLAN_TOP_LEVEL_KEYS that holds content fails closed.
import type { Action } from './actions.ts';

/** `change` of a resource_changes / resource_drift entry. Values (before, after, ...) are never read. */
export interface Change {
  actions?: Action[];
  /** Present (an object) when the entry imports an existing object. */
  importing?: { id?: string; identity?: unknown } | null;
  /** Attribute paths that force a replace. */
  replace_paths?: (string | number)[][];
  /** The object before the change: the classifier reads only its `id` (an import of an object the plan forgets elsewhere is its move, classify.ts). */
  before?: unknown;
}

/** One entry of `resource_changes` or `resource_drift`. */
export interface ResourceChange {
  address?: string;
  /** The module address, absent at the root. */
  module_address?: string;
  /** `managed` or `data`. */
  mode?: string;
  type?: string;
  name?: string;
  provider_name?: string;
  /** Set when the resource moved (`moved` block or refactoring). */
  previous_address?: string;
  /** Deposed object key: the entry is a deposed object of `address`, not its current one. */
  deposed?: string;
  change?: Change;
  /** Why terraform chose the action, e.g. `replace_because_cannot_update`, `delete_because_count_index`. */
  action_reason?: string;
}

/** One value of `output_changes`. */
export interface OutputChange {
  actions?: Action[];
}

/** `lifecycle_action_trigger` of an action invocation: a resource's lifecycle event runs the action (terraform 1.14+). */
export interface LifecycleActionTrigger {
  triggering_resource_address?: string;
  /** BeforeCreate, AfterCreate, BeforeUpdate, AfterUpdate; terraform 1.16 adds BeforeDestroy, AfterDestroy. */
  action_trigger_event?: string;
  /** terraform 1.16: ActionOnFailureHalt, ActionOnFailureTaint or ActionOnFailureContinue. */
  on_failure?: string;
}

/** `invoke_action_trigger`: a person asked for the action with `-invoke`. */
export interface InvokeActionTrigger {
  /** terraform 1.16. */
  calling_resource_address?: string;
}

/** One entry of `action_invocations` (terraform 1.14+). `config_values` may hold secrets: never read. */
export interface ActionInvocation {
  address?: string;
  type?: string;
  provider_name?: string;
  lifecycle_action_trigger?: LifecycleActionTrigger;
  invoke_action_trigger?: InvokeActionTrigger;
}

/** One entry of `deferred_action_invocations`. */
export interface DeferredActionInvocation {
  reason?: string;
  action_invocation?: ActionInvocation;
}

/** The resource change of a `deferred_changes` entry: its address and actions are read. */
export interface DeferredResource {
  address?: string;
  change?: Pick<Change, 'actions'>;
}

/** One entry of `deferred_changes`: a change terraform could not plan yet. */
export interface DeferredResourceChange {
  reason?: string;
  resource_change?: DeferredResource;
}

/** A root module variable declaration in `configuration.root_module.variables`. */
export interface VariableDeclaration {
  sensitive?: boolean;
}

/** A resource declared in `configuration.root_module.resources`. */
export interface ConfiguredResource {
  address?: string;
  mode?: 'managed' | 'data';
}

/** `configuration.root_module`: what the root module declares (module_calls: their names, and for the masker what they pass to sensitive variables). */
export interface RootModule {
  variables?: Record<string, VariableDeclaration>;
  resources?: ConfiguredResource[];
  module_calls?: Record<string, object>;
}

/** `configuration`: the module as terraform read it. */
export interface Configuration {
  root_module?: RootModule;
}

/** The fields of a plan the runner reads; every other top-level key of PLAN_TOP_LEVEL_KEYS is skipped unread. */
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
  configuration?: Configuration;
}

/** The header fields of a plan: everything but its lists. */
export const PLAN_HEADER_FIELDS = [
  'format_version',
  'terraform_version',
  'errored',
  'complete',
  'applyable',
] as const satisfies readonly (keyof Plan)[];
export type PlanHeader = Pick<Plan, (typeof PLAN_HEADER_FIELDS)[number]>;

/** The plan document sections the classifier reads and the JSON type each must have. */
export const PLAN_SECTIONS = {
  resource_changes: 'array',
  resource_drift: 'array',
  deferred_changes: 'array',
  deferred_action_invocations: 'array',
  output_changes: 'object',
  action_invocations: 'array',
} as const satisfies Partial<Record<keyof Plan, 'array' | 'object'>>;
export type PlanSection = keyof typeof PLAN_SECTIONS;

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
] satisfies (
  | keyof Plan
  | 'variables'
  | 'planned_values'
  | 'prior_state'
  | 'relevant_attributes'
  | 'checks'
  | 'timestamp'
)[]);
