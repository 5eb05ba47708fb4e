// Retention on a ChunkStore: which objects to keep and which to delete.
import { usageError } from '../errors.ts';
import type { ChunkStore } from './store.ts';

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
  const objects = (await store.listObjects()).filter((stored) => stored.name.startsWith(prefix));
  const complete = objects.filter((stored) => stored.complete);
  const keptComplete = new Set(complete.slice(-keep).map((stored) => stored.name));
  const newestComplete = objects.reduce((newest, stored, position) => (stored.complete ? position : newest), -1);

  const doomed = objects.filter(
    (stored, position) =>
      !protect.includes(stored.name) && (stored.complete ? !keptComplete.has(stored.name) : position < newestComplete),
  );
  for (const stored of doomed) await store.deleteObject(stored.name);
  return { deleted: doomed.map((stored) => stored.name) };
}
