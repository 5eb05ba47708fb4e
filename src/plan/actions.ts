// What terraform's planned actions mean, in one place (as hashicorp/terraform-json's action.go):
// the action strings, the kind a list of them reads as, which kinds destroy an object, and how a
// destructive entry or a provider action is named in words. Pure.
import type { ActionCounts } from '../schemas/classification.ts';
import { shown } from './values.ts';
import type { ActionKind, CountedKind, DestructiveKind } from '../vocabulary/action-kinds.ts';

/** The action strings terraform writes in `change.actions`. Anything else is unknown to the runner. */
const KNOWN_ACTIONS = ['no-op', 'create', 'read', 'update', 'delete', 'forget'] as const;
export type Action = (typeof KNOWN_ACTIONS)[number];

/** A plan's counts before its first entry: every field of `counts` 0, in the classification's order. */
export const noCounts = (): ActionCounts => ({
  create: 0,
  update: 0,
  delete: 0,
  replace: 0,
  read: 0,
  noop: 0,
  forget: 0,
  import: 0,
  move: 0,
  unknown: 0,
});
/** What one entry's actions mean, or why the classifier cannot tell. */
export type ActionsReading = { kind: ActionKind; why?: undefined } | { kind: 'unknown'; why: string };

const SINGLE_ACTION_KINDS: Readonly<Record<Action, CountedKind>> = {
  'no-op': 'noop',
  create: 'create',
  read: 'read',
  update: 'update',
  delete: 'delete',
  forget: 'forget',
};

/** Reads `change.actions`. Anything but the lists terraform documents is unknown, so it fails closed. */
export function readActions(actions: unknown): ActionsReading {
  if (actions === undefined) return { kind: 'unknown', why: 'change.actions is missing' };
  if (!Array.isArray(actions) || !actions.every((a) => typeof a === 'string')) {
    return { kind: 'unknown', why: 'change.actions is not a list of strings' };
  }
  const unknownAction = actions.find((a) => !(KNOWN_ACTIONS as readonly string[]).includes(a));
  if (unknownAction !== undefined) return { kind: 'unknown', why: `unknown action ${JSON.stringify(unknownAction)}` };
  if (actions.length === 1) return { kind: SINGLE_ACTION_KINDS[actions[0] as Action] };
  const pair = actions.length === 2 ? [...actions].sort().join(',') : undefined;
  if (pair === 'create,delete') return { kind: 'replace' };
  // No delete: the old object stays where it is, only terraform's state forgets it.
  if (pair === 'create,forget') return { kind: 'createForget' };
  // e.g. [], ["delete","delete"] or ["delete","forget"]: not a list the runner knows.
  return { kind: 'unknown', why: `unrecognised combination of actions ${JSON.stringify(actions)}` };
}

/** What each kind adds to `counts`: a create-forget counts as a create and a forget, like terraform's summary. */
export const countedAs = (kind: ActionKind): CountedKind[] => (kind === 'createForget' ? ['create', 'forget'] : [kind]);

/** Every other kind of ActionKind: a forget (with or without a create) leaves the object where it is, only the state forgets it. */
const KEEPING_KINDS: ReadonlySet<string> = new Set([
  'create',
  'update',
  'read',
  'noop',
  'forget',
  'createForget',
] satisfies Exclude<ActionKind, DestructiveKind>[]);

/**
 * The kind destroys an object (DESTRUCTIVE_KINDS); forget, import and move do not. A kind this
 * runner does not know counts as destructive too: what it cannot read, it does not let pass.
 */
export const isDestructive = (kind: string): kind is DestructiveKind => !KEEPING_KINDS.has(kind);

/** The kind changes a resource: anything but a no-op, and a data source read, which changes no resource. */
export const changesResource = (kind: ActionKind): boolean => kind !== 'noop' && kind !== 'read';

/** A kind in words, as `counts` names kinds (`create-forget` for a replace that keeps the old object). */
export const kindName = (kind: ActionKind): string => (kind === 'createForget' ? 'create-forget' : kind);

/** The actions as the contract lists them: strings kept, anything else shown as JSON. */
export const listedActions = (actions: unknown): string[] => (Array.isArray(actions) ? actions.map(shown) : []);

/**
 * `address (deposed key) (action)`: the fields that identify a destructive entry; a provider action's
 * trigger follows its action (`action invoke`), a policy finding's rule follows `policy`, and a moved
 * entry says what it was (`terraform_data.archive (replace; was terraform_data.db)`).
 */
export const changeText = (c: {
  address: string;
  previousAddress?: string;
  deposed?: string;
  action: string;
  trigger?: string;
  rule?: string;
}): string => {
  const was = wasText(c);
  return `${c.address}${c.deposed ? ` (deposed ${c.deposed})` : ''} (${c.action}${c.trigger ? ` ${c.trigger}` : ''}${c.rule ? ` ${c.rule}` : ''}${was ? `; ${was}` : ''})`;
};

/** What a moved entry was, `was <previous address>`, wherever an entry is named; "" when it did not move. */
export const wasText = (c: { previousAddress?: string }): string =>
  c.previousAddress ? `was ${c.previousAddress}` : '';

/** `address (action trigger)`: a provider action, as every message, log line and summary names it. */
export const actionText = (a: { address: string; trigger: string }): string =>
  changeText({ address: a.address, action: 'action', trigger: a.trigger });
