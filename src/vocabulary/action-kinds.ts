// The kinds a plan's entries are read as, pure data: what `counts` counts and which kinds destroy an
// object (src/plan/actions.ts reads terraform's action lists as them; the classification's schema
// enumerates them).

/** The kinds `counts` counts entries by (a replace once, as replace; `unknown` for actions the runner cannot read). */
export const COUNTED_KINDS = ['create', 'update', 'delete', 'replace', 'read', 'noop', 'forget', 'unknown'] as const;
export type CountedKind = (typeof COUNTED_KINDS)[number];
/** `createForget`: terraform's replace whose old object is kept (`destroy = false`), in either order. */
export type ActionKind = CountedKind | 'createForget';

/** The kinds that destroy an object: a delete, a replace in either order, and actions the runner cannot read (it fails closed). */
export const DESTRUCTIVE_KINDS = ['delete', 'replace', 'unknown'] as const satisfies readonly ActionKind[];
export type DestructiveKind = (typeof DESTRUCTIVE_KINDS)[number];
