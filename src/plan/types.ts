// The parts of `terraform show -json` plan documents the runner reads, typed after
// hashicorp/terraform-json (plan.go, action.go). Documents are parsed leniently: unknown fields
// are ignored, and every field is optional here because older format versions lack many of them
// (format 0.x has no `errored`, `complete` or `applyable`). The classifier checks what it relies on.

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

export interface Plan {
  format_version?: string;
  terraform_version?: string;
  errored?: boolean;
  complete?: boolean;
  applyable?: boolean;
  resource_changes?: ResourceChange[];
  resource_drift?: ResourceChange[];
  output_changes?: Record<string, OutputChange>;
  configuration?: { root_module?: { variables?: Record<string, VariableDeclaration> } };
}

/** The header fields of a plan: everything but its lists. */
export type PlanHeader = Pick<Plan, 'format_version' | 'terraform_version' | 'errored' | 'complete' | 'applyable'>;
