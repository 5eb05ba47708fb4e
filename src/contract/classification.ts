// The classification of one plan document: result.plan, and what `classify --json` prints.
// Zod is the single source of truth; the JSON Schema in contract/ is generated from it.
import { z } from 'zod';

/** How a destructive entry destroys: a plain delete, a replace in either order, or an action the classifier does not know. */
export const DestructiveAction = z.enum(['delete', 'replace', 'unknown']);

export const DestructiveChange = z.strictObject({
  address: z.string(),
  deposed: z.string().optional().describe('Deposed object key, when the entry is a deposed object'),
  action: DestructiveAction,
  actions: z.array(z.string()).describe('The planned actions exactly as terraform listed them'),
  reason: z.string().optional().describe("terraform's action_reason"),
  replacePaths: z.array(z.array(z.union([z.string(), z.number()]))).optional(),
  why: z.string().optional().describe('Why the classifier failed closed: for action "unknown", and for every entry at an address the runner reserves (classification.md §1)'),
});
export type DestructiveChange = z.infer<typeof DestructiveChange>;

/** Counts of resource instance changes by kind. A replace counts once, as replace. */
export const ActionCounts = z.strictObject({
  create: z.number().int().nonnegative(),
  update: z.number().int().nonnegative(),
  delete: z.number().int().nonnegative(),
  replace: z.number().int().nonnegative(),
  read: z.number().int().nonnegative(),
  noop: z.number().int().nonnegative(),
  forget: z.number().int().nonnegative(),
  import: z.number().int().nonnegative().describe('Entries with change.importing (counted besides their action)'),
  move: z.number().int().nonnegative().describe('Entries with previous_address, in resource_changes or resource_drift (counted besides their action)'),
  unknown: z.number().int().nonnegative(),
});
export type ActionCounts = z.infer<typeof ActionCounts>;

export const OutputChangeCounts = z.strictObject({
  create: z.number().int().nonnegative(),
  update: z.number().int().nonnegative(),
  delete: z.number().int().nonnegative(),
});

export const DriftEntry = z.strictObject({
  address: z.string(),
  previousAddress: z.string().optional().describe('Where the object was before a move (previous_address): a refresh-only plan reports its moves here, and applying it carries them out'),
  deposed: z.string().optional(),
  actions: z.array(z.string()),
});
export type DriftEntry = z.infer<typeof DriftEntry>;

export const Classification = z.strictObject({
  formatVersion: z.string(),
  terraformVersion: z.string().optional(),
  errored: z.boolean().describe('terraform marked the plan errored: it is never applied'),
  complete: z.boolean(),
  applyable: z.boolean(),
  hasResourceChanges: z.boolean().describe('Any resource entry with an action other than no-op or read (a move or an import counts)'),
  hasOutputChanges: z.boolean(),
  destructive: z.array(DestructiveChange).describe('Destructive entries, at most the limit the caller set'),
  destructiveTotal: z.number().int().nonnegative().describe('How many destructive entries the plan has in all'),
  counts: ActionCounts,
  outputChanges: OutputChangeCounts,
  drift: z.array(DriftEntry).describe('resource_drift entries (changes made outside terraform), at most the limit'),
  driftTotal: z.number().int().nonnegative(),
  failClosed: z.array(z.string()).describe('Why the plan counts as destructive beyond its entries (e.g. an unknown format_version)'),
  sensitiveVariables: z.array(z.string()).describe('Root variables the module declares sensitive'),
});
export type Classification = z.infer<typeof Classification>;

/** A plan is destructive when any entry destroys or the classifier failed closed. */
export const isDestructive = (c: Classification) => c.destructiveTotal > 0 || c.failClosed.length > 0;
