// The classification of one plan document: result.plan, and what `classify --json` prints.
// Zod is the single source of truth; the JSON Schema in contract/ is generated from it. Objects that
// gain members within runner.captf.io/v1 are open (looseObject): a v1 reader ignores members it does not know.
import * as z from './zod.ts';
import { DESTRUCTIVE_KINDS } from '../vocabulary/action-kinds.ts';

/** How a destructive entry destroys: a plain delete, a replace in either order, or an action the classifier does not know. */
export const DestructiveAction = z.enum(DESTRUCTIVE_KINDS);

export const DestructiveChange = z.strictObject({
  address: z.string(),
  previousAddress: z
    .string()
    .optional()
    .describe('Where the object was before a move (previous_address): a moved entry is named by both'),
  deposed: z.string().optional().describe('Deposed object key, when the entry is a deposed object'),
  action: DestructiveAction,
  actions: z.array(z.string()).describe('The planned actions exactly as terraform listed them'),
  reason: z.string().optional().describe("terraform's action_reason"),
  replacePaths: z.array(z.array(z.union([z.string(), z.number()]))).optional(),
  why: z
    .string()
    .optional()
    .describe(
      'Why the classifier failed closed: for action "unknown", and for every entry at an address the runner reserves (classification.md §1)',
    ),
});
export type DestructiveChange = z.infer<typeof DestructiveChange>;

/** Counts of resource instance changes by kind. A replace counts once, as replace. */
export const ActionCounts = z.strictObject({
  create: z.nonNegativeInt(),
  update: z.nonNegativeInt(),
  delete: z.nonNegativeInt(),
  replace: z.nonNegativeInt(),
  read: z.nonNegativeInt(),
  noop: z.nonNegativeInt(),
  forget: z.nonNegativeInt(),
  import: z.nonNegativeInt().describe('Entries with change.importing (counted besides their action)'),
  move: z
    .nonNegativeInt()
    .describe('Entries with previous_address, in resource_changes or resource_drift (counted besides their action)'),
  unknown: z.nonNegativeInt(),
});
export type ActionCounts = z.infer<typeof ActionCounts>;

const OutputChangeCounts = z.strictObject({
  create: z.nonNegativeInt(),
  update: z.nonNegativeInt(),
  delete: z.nonNegativeInt(),
});

/** One entry of resource_changes or resource_drift: which object, and what terraform lists for it. */
export const ResourceEntry = z.strictObject({
  address: z.string(),
  previousAddress: z
    .string()
    .optional()
    .describe(
      'Where the object was before a move (previous_address): a refresh-only plan reports its moves here, and applying it carries them out',
    ),
  deposed: z.string().optional(),
  actions: z.array(z.string()),
});
export type ResourceEntry = z.infer<typeof ResourceEntry>;
/** @alias An entry of resource_drift: the same shape, named for what it lists. */
export const DriftEntry = ResourceEntry;
export type DriftEntry = ResourceEntry;

/** One provider action the plan runs (terraform 1.14+): the runner cannot know what it does. */
export const PlannedAction = z.looseObject({
  address: z
    .string()
    .describe("e.g. action.aws_ec2_stop_instance.maintenance; the entry's position when terraform gave none"),
  type: z.string().nullable(),
  provider: z.string().nullable().describe("terraform's provider_name"),
  trigger: z
    .string()
    .describe(
      'invoke (a person asked for it with -invoke), or the lifecycle event that runs it: BeforeCreate, AfterCreate, BeforeUpdate, AfterUpdate, BeforeDestroy, AfterDestroy; unknown when the runner cannot tell (then failClosed says why)',
    ),
  triggeringResource: z
    .string()
    .nullable()
    .describe('The resource whose event runs it (invoke: the calling resource, when terraform names one)'),
  onFailure: z
    .string()
    .nullable()
    .describe(
      'halt, taint (the next plan replaces the triggering resource) or continue; null when terraform does not say; unknown for a value the runner does not know',
    ),
  deferred: z.boolean().describe('Listed in deferred_action_invocations: terraform could not plan it yet'),
  deferredReason: z.string().nullable(),
});
export type PlannedAction = z.infer<typeof PlannedAction>;

/** One entry of deferred_changes: a change terraform could not plan yet (never applied by this plan, never in destructive). */
export const DeferredChange = z.looseObject({
  address: z.string(),
  action: z
    .string()
    .describe(
      'What terraform would do once it can plan it, named as in counts (create, update, delete, replace, …; unknown for actions the runner does not know)',
    ),
  reason: z.string().nullable().describe("terraform's reason, e.g. resource_config_unknown"),
});
export type DeferredChange = z.infer<typeof DeferredChange>;

const PartialPlan = z.looseObject({
  complete: z.boolean().describe("terraform's complete"),
  deferred: z.array(DeferredChange).describe('deferred_changes, at most the limit'),
  deferredTotal: z.nonNegativeInt(),
});

/** A deny rule that matched (or failed), or a limit crossed: nothing is applied, with or without an approval. */
export const PolicyDenial = z.strictObject({
  rule: z
    .string()
    .describe(
      "The rule's name, or limits.maxDeletes, or limits.planCost / limits.planTime (the evaluation ran out of the plan's cost budget or time limit: no rule's verdict)",
    ),
  address: z
    .string()
    .optional()
    .describe("The change's or action's address; absent for on: plan rules, limits and the plan's bounds"),
  message: z.string().describe("What must change instead: the rule's message, or the runner's words"),
});
export type PolicyDenial = z.infer<typeof PolicyDenial>;

/** A requireApproval rule that matched (or failed): the plan needs the approval hash. */
export const PolicyApprovalRequired = z.strictObject({
  rule: z
    .string()
    .describe(
      "The rule's name, or limits.planCost / limits.planTime (the evaluation ran out where no deny rule is in effect)",
    ),
  address: z.string().optional().describe("Absent for on: plan rules and the plan's bounds"),
  error: z
    .string()
    .optional()
    .describe('Set when the rule could not be evaluated and requires approval because of that'),
});
export type PolicyApprovalRequired = z.infer<typeof PolicyApprovalRequired>;

/** What the rules and limits found in one plan (contract/sections/policy.md). */
export const PolicyFindings = z.looseObject({
  denied: z.array(PolicyDenial).describe('At most the limit; deniedTotal counts all'),
  deniedTotal: z.nonNegativeInt(),
  approvalRequired: z.array(PolicyApprovalRequired).describe('At most the limit; approvalRequiredTotal counts all'),
  approvalRequiredTotal: z.nonNegativeInt(),
  deletes: z.nonNegativeInt().describe('The changes counted against limits.maxDeletes (exactly destructiveTotal)'),
  timedOut: z
    .boolean()
    .describe(
      'The evaluation ran out of its time limit (the last resort: the cost budgets come first): one finding of rule limits.planTime fails closed',
    ),
  cost: z.nonNegativeInt().describe('The cost units the evaluation spent (contract/sections/policy.md §5)'),
  costExceeded: z
    .boolean()
    .describe("The evaluation ran out of the plan's cost budget: one finding of rule limits.planCost fails closed"),
});
export type PolicyFindings = z.infer<typeof PolicyFindings>;

export const PlanPolicy = PolicyFindings.extend({
  effects: z
    .enum(['all', 'deny'])
    .describe('deny: deny rules and limits only (apply --plan-artifact: the approval was given for the plan)'),
});
export type PlanPolicy = z.infer<typeof PlanPolicy>;

export const Classification = z.looseObject({
  gated: z
    .boolean()
    .describe(
      'Applying this plan needs an approval: a destructive entry, a provider action, a failClosed reason, or a policy finding (policy.denied or policy.approvalRequired; plan/gate.ts)',
    ),
  formatVersion: z.string(),
  terraformVersion: z.string().optional(),
  errored: z.boolean().describe('terraform marked the plan errored: it is never applied'),
  complete: z.boolean(),
  applyable: z.boolean(),
  hasResourceChanges: z
    .boolean()
    .describe('Any resource entry with an action other than no-op or read (a move or an import counts)'),
  hasOutputChanges: z.boolean(),
  destructive: z.array(DestructiveChange).describe('Destructive entries, at most the limit the caller set'),
  destructiveTotal: z.nonNegativeInt().describe('How many destructive entries the plan has in all'),
  counts: ActionCounts,
  outputChanges: OutputChangeCounts,
  drift: z.array(DriftEntry).describe('resource_drift entries (changes made outside terraform), at most the limit'),
  driftTotal: z.nonNegativeInt(),
  changes: z
    .array(ResourceEntry)
    .describe(
      "resource_changes entries that change something (not a no-op or a read; a move or an import counts), the runner's record aside, at most the limit",
    ),
  changesTotal: z.nonNegativeInt(),
  record: z
    .strictObject({ address: z.string(), actions: z.array(z.string()) })
    .optional()
    .describe(
      "The runner's own change at its record of the inputs hash (terraform_data.captf_inputs_hash): never counted, but terraform's own counts include it. Absent when the plan keeps it as it is",
    ),
  failClosed: z
    .array(z.string())
    .describe(
      'Why the plan needs an approval beyond its entries and actions: what the runner cannot read (e.g. an unknown format_version, an unknown top-level key holding content, deferred changes)',
    ),
  sensitiveVariables: z.array(z.string()).describe('Root variables the module declares sensitive'),
  actions: z.array(PlannedAction).describe('action_invocations, then deferred_action_invocations, at most the limit'),
  actionsTotal: z.nonNegativeInt().describe('How many provider actions the plan has in all'),
  partial: PartialPlan.optional().describe(
    'Present when terraform says the plan is incomplete (complete false) or deferred changes',
  ),
  policy: PlanPolicy.optional().describe(
    'Present when a policy dir was read (--policy, CAPTF_POLICY, /captf/policy): what its rules and limits found',
  ),
});
export type Classification = z.infer<typeof Classification>;
