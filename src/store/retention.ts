// Retention on a ChunkStore: which objects to keep and which to delete. The rule is stated once
// (doomedObjects); a store that can apply it in one go (one statement, one listing) does so.
import { usageError } from '../errors.ts';
import type { ChunkStore, PruneRequest, StoredObject } from './store.ts';

export interface PruneOptions {
  /** How many complete objects to keep (the newest); at least 1. */
  keep: number;
  /** Only objects whose names start with it take part (a store may hold several families). */
  prefix?: string;
  /** Never deleted, whatever their age: pass the object just written. */
  protect?: readonly string[];
}

/**
 * Keeps the `keep` newest complete objects (in the store's oldest-first order) and deletes older
 * complete ones, and partial ones older than the newest complete one. Partial objects newer than
 * that may be writes in progress and stay.
 */
export async function pruneObjects(store: ChunkStore, options: PruneOptions): Promise<{ deleted: string[] }> {
  const { keep, prefix = '', protect = [] } = options;
  if (!Number.isInteger(keep) || keep < 1) {
    throw usageError('InvalidRetention', `cannot keep ${keep} objects: keep at least 1 (the newest complete one)`);
  }
  const request: PruneRequest = { keep, prefix, protect };
  if (store.prune) return { deleted: await store.prune(request) };
  const doomed = doomedObjects(await store.listObjects(), request);
  for (const name of doomed) await store.deleteObject(name);
  return { deleted: doomed };
}

/** The names retention deletes from `objects` (oldest first, as a store lists them), oldest first. */
export function doomedObjects(objects: readonly StoredObject[], { keep, prefix, protect }: PruneRequest): string[] {
  const family = objects.filter((stored) => stored.name.startsWith(prefix));
  const keptComplete = new Set(
    family
      .filter((stored) => stored.complete)
      .slice(-keep)
      .map((stored) => stored.name),
  );
  const newestComplete = family.reduce((newest, stored, position) => (stored.complete ? position : newest), -1);
  return family
    .filter(
      (stored, position) =>
        !protect.includes(stored.name) &&
        (stored.complete ? !keptComplete.has(stored.name) : position < newestComplete),
    )
    .map((stored) => stored.name);
}
