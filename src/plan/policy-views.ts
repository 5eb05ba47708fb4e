// What a policy rule sees of a plan, and what an evaluation finds. Types only: the ops and the
// classifier import them without loading the CEL library. Rules never see before/after values:
// a view holds addresses, types, actions and counts, nothing a module computes from its inputs.
// contract/sections/policy.md states every field and its CEL type for other languages.
import { COUNTED_KINDS } from '../vocabulary/action-kinds.ts';
import type { ActionCounts } from '../schemas/classification.ts';

/** The classification's kind of a resource change: what its actions mean (a moved or imported entry keeps its kind). */
export const CHANGE_KINDS = COUNTED_KINDS;
export type PolicyChangeKind = (typeof CHANGE_KINDS)[number];

/**
 * One resource change (`on: change`). Optional fields may be absent or null here; a rule sees
 * each one as "" (strings), [] (lists) or false (booleans), so every field always has one CEL type.
 */
export interface PolicyChangeView {
  address: string;
  /** The module address, e.g. `module.net`; absent or "" at the root. */
  module?: string | null;
  /** `managed` or `data`. */
  mode?: string | null;
  type?: string | null;
  name?: string | null;
  /** terraform's provider_name, e.g. `registry.terraform.io/hashicorp/aws`. */
  provider?: string | null;
  /**
   * For a destructive entry its classification action (delete, replace, unknown), so that the
   * deletes counted equal destructiveTotal. A create-forget (`["create","forget"]`, either order) is `forget`.
   */
  kind: PolicyChangeKind;
  /** terraform's list, as it wrote it. */
  actions: readonly string[];
  /** terraform's action_reason. */
  reason?: string | null;
  /** Attribute paths that force a replace; an index step (a number in the plan) is given as its decimal string. */
  replacePaths?: readonly (readonly (string | number)[])[] | null;
  /** The deposed object key, when the entry is a deposed object. */
  deposed?: string | null;
  /** terraform's previous_address, when the entry moved. */
  previousAddress?: string | null;
  /** The parts of previousAddress (plan/address.ts), when the entry moved: where it was is judged like where it is. */
  previousModule?: string | null;
  previousType?: string | null;
  previousName?: string | null;
  moved?: boolean;
  imported?: boolean;
}

/** One provider action (`on: action`): the fields of the classification's `actions[]`. */
export interface PolicyActionView {
  address: string;
  type?: string | null;
  provider?: string | null;
  /** `invoke`, or terraform's event name (`BeforeCreate` … `AfterDestroy`). */
  trigger: string;
  /** The resource whose lifecycle triggers the action; absent or null for an invoked action. */
  triggeringResource?: string | null;
  /** `halt`, `taint` or `continue`; absent or null when terraform gives none. */
  onFailure?: string | null;
  deferred: boolean;
}

export type PolicyTool = 'terraform' | 'opentofu';

/** The plan as a whole (`on: plan`), once, after every change and action. */
export interface PolicyPlanView {
  counts: ActionCounts;
  tool: PolicyTool;
  /** The tool's version, e.g. `1.11.4`; "" when unknown. */
  version: string;
}

/** What an evaluation finds (the schemas in src/schemas/classification.ts state each field). */
export type {
  PolicyApprovalRequired,
  PolicyDenial,
  PolicyFindings as PolicyOutcome,
} from '../schemas/classification.ts';
