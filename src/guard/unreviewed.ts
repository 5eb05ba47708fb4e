// What an approval covered that the person approving was not shown (pure). An approval names the
// inputs (the approval hash), not a reviewed plan: the plan an approved apply makes can destroy more
// than the blocked run listed, or run provider actions it did not list (the module, the image's
// code or the state changed in between, the inputs did not). The apply still goes ahead as
// approved; this says what it destroys or runs unseen.
import * as z from '../schemas/zod.ts';
import { RESULT_API_VERSION } from '../schemas/result.ts';
import { changeText } from '../plan/actions.ts';

/**
 * One destructive entry, provider action or policy requireApproval finding as a result lists it, the
 * fields that identify it (an action: `action` "action" and its trigger; a finding: "policy" and its rule).
 */
export type ShownChange<A extends string = string> = {
  address: string;
  deposed?: string;
  action: A;
  trigger?: string;
  rule?: string;
};

/** The fields that identify a destructive entry, and nothing else (no reason, paths or why). */
export const shownChange = <A extends string>(c: ShownChange<A>): ShownChange<A> => ({
  address: c.address,
  ...(c.deposed ? { deposed: c.deposed } : {}),
  action: c.action,
  ...(c.trigger !== undefined ? { trigger: c.trigger } : {}),
  ...(c.rule !== undefined ? { rule: c.rule } : {}),
});

/** A provider action as approval.unreviewed lists it: compared by address and trigger. */
export const shownAction = (a: { address: string; trigger: string }): ShownChange<'action'> => ({
  address: a.address,
  action: 'action',
  trigger: a.trigger,
});

/** The address of a finding of an `on: plan` rule, which has none: no resource address is a single word. */
const PLAN_FINDING_ADDRESS = 'plan';

/** A policy requireApproval finding as approval.unreviewed lists it: compared by rule and address. */
export const shownPolicyFinding = (f: { rule: string; address?: string }): ShownChange<'policy'> => ({
  address: f.address ?? PLAN_FINDING_ADDRESS,
  action: 'policy',
  rule: f.rule,
});

/** The blocked run an approval is compared with: what it showed and where it was read. */
export interface BlockedRun {
  /** Where the blocked result was read: a file path or `secret:<namespace>/<name>`. */
  location: string;
  finishedAt: string;
  /** Its planHash: a value a person may paste as the approval by mistake. */
  planHash?: string;
  /** plan.destructive, plan.actions and plan.policy.approvalRequired of the blocked result: what it listed (at most its limit; entries past it were never shown). */
  shown: ShownChange[];
  /** The lineage of the state it planned against (null: no state); absent when its result does not say. */
  lineage?: string | null;
  /** The inputs hash the state recorded when it was blocked (null: none); absent when its result does not say. */
  stateInputsHash?: string | null;
}

/** The default bound of `approval.unreviewed`, as for `plan.destructive`. */
const UNREVIEWED_LIMIT = 100;

/**
 * The parts of a result document this comparison reads, read leniently (extra fields, other actions
 * of a later runner of the same contract): a blocked apply with its destructive list.
 */
const BlockedResultDocument = z.object({
  apiVersion: z.literal(RESULT_API_VERSION),
  op: z.literal('apply'),
  outcome: z.literal('blocked'),
  approvalHash: z.string(),
  object: z.object({ kind: z.string(), name: z.string().optional(), namespace: z.string().optional() }),
  plan: z.object({
    destructive: z.array(z.object({ address: z.string(), deposed: z.string().optional(), action: z.string() })),
    destructiveTotal: z.nonNegativeInt(),
    // A record of a runner before provider actions has none: it showed none.
    actions: z.array(z.object({ address: z.string(), trigger: z.string() })).default([]),
    // Without a policy dir the blocked run found nothing for one to require.
    policy: z
      .object({ approvalRequired: z.array(z.object({ rule: z.string(), address: z.string().optional() })) })
      .optional(),
  }),
  finishedAt: z.string(),
  planHash: z.string().optional(),
  state: z.object({ lineage: z.string().nullable() }).optional(),
  stateInputsHash: z.string().nullable().optional(),
});

export interface BlockedRunWanted {
  approvalHash: string;
  object: { kind: string; name?: string; namespace?: string };
}

/**
 * The blocked run a result document records, when it is a blocked apply of the same object for the
 * same approval hash; `undefined` for anything else (another op, outcome, object or hash, or not a result).
 */
export function readBlockedRun(document: unknown, location: string, wanted: BlockedRunWanted): BlockedRun | undefined {
  const parsed = BlockedResultDocument.safeParse(document);
  if (!parsed.success) return undefined;
  const r = parsed.data;
  if (r.approvalHash !== wanted.approvalHash) return undefined;
  if (r.object.kind !== wanted.object.kind || r.object.name !== wanted.object.name) return undefined;
  if (r.object.namespace && wanted.object.namespace && r.object.namespace !== wanted.object.namespace) return undefined;
  if (Number.isNaN(Date.parse(r.finishedAt))) return undefined;
  return {
    location,
    finishedAt: r.finishedAt,
    ...(r.planHash && { planHash: r.planHash }),
    ...(r.state && { lineage: r.state.lineage || null }),
    ...(r.stateInputsHash !== undefined && { stateInputsHash: r.stateInputsHash }),
    shown: [
      ...r.plan.destructive.map(shownChange),
      ...r.plan.actions.map(shownAction),
      ...(r.plan.policy?.approvalRequired ?? []).map(shownPolicyFinding),
    ],
  };
}

/** How far ahead of this run's clock a blocked run may say it finished (clock skew between nodes). */
export const FUTURE_TOLERANCE_MS = 60_000;

/**
 * The newest of the blocked runs found (by when each finished); ties keep the first given. A run
 * that says it finished more than FUTURE_TOLERANCE_MS after `now` is ignored (a forged record, or a
 * clock far off, must not count as the newest forever) and named in `ignored`, worth a warning.
 */
export function newestBlockedRun(
  runs: readonly BlockedRun[],
  now = Date.now(),
): { newest: BlockedRun | undefined; ignored: string[] } {
  let newest: BlockedRun | undefined;
  const ignored: string[] = [];
  for (const run of runs) {
    const finished = Date.parse(run.finishedAt);
    if (finished > now + FUTURE_TOLERANCE_MS)
      ignored.push(`${run.location} (ignored: it says it finished at ${run.finishedAt}, in the future)`);
    else if (!newest || finished > Date.parse(newest.finishedAt)) newest = run;
  }
  return { newest, ignored };
}

const keyOf = (change: ShownChange) =>
  JSON.stringify([change.address, change.deposed ?? null, change.action, change.trigger ?? null, change.rule ?? null]);

export interface Unreviewed<A extends string = string> {
  /** What the approved plan destroys that the blocked run did not list, in plan order, at most `limit`. */
  unreviewed: ShownChange<A>[];
  /** How many in all. */
  unreviewedTotal: number;
}

/**
 * The approved plan's destructive entries and provider actions the blocked run did not show. An
 * entry is shown only when the blocked run listed the same address, deposed key and action (an
 * action: the same address and trigger): a replace shown that is now a delete was not reviewed, and
 * neither were entries beyond the blocked run's bounded lists (its totals counted them, but nobody
 * saw their addresses). No blocked run at all: every entry is unreviewed. `approved` must be every
 * destructive entry and action of the approved plan.
 * `onUnreviewed` is told every unreviewed entry, also those past `limit`.
 */
export function unreviewedChanges<A extends string>(
  blocked: BlockedRun | undefined,
  approved: Iterable<ShownChange<A>>,
  limit = UNREVIEWED_LIMIT,
  onUnreviewed?: (change: ShownChange<A>) => void,
): Unreviewed<A> {
  const shown = new Set((blocked?.shown ?? []).map(keyOf));
  const unreviewed: ShownChange<A>[] = [];
  let unreviewedTotal = 0;
  for (const change of approved) {
    if (shown.has(keyOf(change))) continue;
    unreviewedTotal += 1;
    onUnreviewed?.(change);
    if (unreviewed.length < limit) unreviewed.push(shownChange(change));
  }
  return { unreviewed, unreviewedTotal };
}

/** `N destructive changes`, or `N destructive changes or provider actions` when the plan runs actions. */
export const countText = (n: number, withActions: boolean) =>
  `${n} destructive change${n === 1 ? '' : 's'}${withActions ? ` or provider action${n === 1 ? '' : 's'}` : ''}`;

/** At most this many entries are named in a warning; the result and the summary list the rest. */
const WARNING_NAMES = 5;

/**
 * Whether the approval was applied once already: the state (before this run) records this run's
 * inputs hash, which it did not when the blocked run was blocked, so an apply of these inputs
 * succeeded since. An approval is consumed by that apply; given again, it approves whatever the
 * module now plans (pure).
 */
export const appliedSinceBlocked = (
  blocked: BlockedRun | undefined,
  inputsHash: string,
  stateInputsHash: string | null,
): boolean =>
  blocked?.stateInputsHash !== undefined && blocked.stateInputsHash !== inputsHash && stateInputsHash === inputsHash;

/**
 * The one warning of an approved apply whose approval covered destructive changes nobody was shown
 * (`found.unreviewedTotal` > 0): the count, the first few, and what they were compared with. With
 * no blocked run found (always worth a warning), it says so and where it looked; `appliedOnce`
 * (appliedSinceBlocked): that the approval was applied once already, and why that covers nothing new.
 */
export function unreviewedWarning(
  approvalHash: string,
  blocked: BlockedRun | undefined,
  found: Unreviewed,
  looked: readonly string[] = [],
  withActions = false,
  appliedOnce = false,
): string {
  const count = countText(found.unreviewedTotal, withActions);
  const named = found.unreviewed.slice(0, WARNING_NAMES).map(changeText).join(', ');
  const listed = Math.min(WARNING_NAMES, found.unreviewed.length);
  const more =
    found.unreviewedTotal > listed ? ` and ${found.unreviewedTotal - listed} more (approval.unreviewed)` : '';
  const why = 'An approval names the inputs, not a reviewed plan: the apply goes ahead as approved.';
  if (!blocked) {
    const notFound = `no blocked run was found for approval hash ${approvalHash} (looked in: ${looked.join('; ') || 'nowhere'}): nothing records what was shown when it was approved`;
    return found.unreviewedTotal === 0
      ? `${notFound}. ${why}`
      : `${notFound}, so all ${count} of this plan count as unreviewed: ${named}${more}. ${why}`;
  }
  const again = appliedOnce
    ? ' It was applied once already: the state records these inputs since an apply after that blocked run, so the module (or the state) changed, not the inputs or the image. An approval is consumed by its apply (the controller removes it, and so does captf-runner local): release a module change under a new --image, which makes new inputs, blocked and approved anew.'
    : '';
  return `the approval of ${approvalHash} covers ${count} that its blocked run (${blocked.location}, finished ${blocked.finishedAt}) did not show: ${named}${more}. ${why}${again}`;
}

/**
 * An approval covers the state its blocked run planned against: an approved apply against a state of
 * another lineage (another object's, after mixed-up backend settings or a restore of the wrong
 * backup; or none) applies a plan nobody was shown for that state. The warning when it does (pure);
 * a blocked run that does not say which state it planned against counts as another.
 */
export function otherStateWarning(
  approvalHash: string,
  blocked: BlockedRun,
  lineage: string | null,
): string | undefined {
  if (blocked.lineage !== undefined && blocked.lineage === lineage) return undefined;
  const planned =
    blocked.lineage === undefined
      ? 'a state it does not name'
      : blocked.lineage === null
        ? 'no state'
        : `the state of lineage ${blocked.lineage}`;
  const now = lineage === null ? 'no state' : `a state of lineage ${lineage}`;
  return (
    `the approval of ${approvalHash} was given for the plan its blocked run (${blocked.location}, finished ${blocked.finishedAt}) made against ${planned}, but the backend now holds ${now}: ` +
    'an approval covers the state its blocked run planned against, so this plan is blocked again. Review it; the approval is withdrawn, and approving the same hash again approves this block'
  );
}

/**
 * No blocked run was found for the approval (its record deleted, its Job and result Secret gone) and
 * no --expect-lineage names the state: the lineage the approval was given for lived only in that
 * record, so nothing says this is the state it was given for (another object's may be in its place).
 * The approval covers nothing destructive: the warning of the block that follows (pure).
 */
export function unknownStateWarning(approvalHash: string, looked: readonly string[] | Error): string {
  const where =
    looked instanceof Error ? `the look-up failed: ${looked.message}` : `looked in: ${looked.join('; ') || 'nowhere'}`;
  return (
    `no blocked run was found for approval hash ${approvalHash} (${where}), and no --expect-lineage names the state: ` +
    'nothing records which state the approval was given for, so it covers nothing destructive and this plan is blocked again. Review it; the approval is withdrawn, and approving the same hash again approves this block'
  );
}
