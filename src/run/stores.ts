// Which ChunkStore holds backups and plan artifacts for this run: a directory when one is given, else
// Secrets in a cluster; backups are never skipped, so outside a cluster they default to the out dir.
import { join } from 'node:path';
import { usageError } from '../errors.ts';
import { DirStore, openDirObject } from '../store/dir-store.ts';
import type { ChunkStore } from '../store/store.ts';
import type { ArtifactRef } from '../schemas/result.ts';
import type { RunContext } from './context.ts';

export function backupStore(ctx: RunContext): ChunkStore {
  const dir = backupDir(ctx);
  return dir ? new DirStore(dir) : ctx.cluster!.store('backup');
}

/** The directory backups go to, or undefined when they go to Secrets (in a cluster without --backups). */
export function backupDir(ctx: RunContext): string | undefined {
  if (ctx.settings.backups) return ctx.settings.backups;
  return ctx.cluster ? undefined : join(ctx.settings.out, DEFAULT_BACKUPS_DIR);
}

/** Where backups go without --backups outside a cluster: under the out dir. */
const DEFAULT_BACKUPS_DIR = 'backups';

export function artifactStore(ctx: RunContext): ChunkStore | undefined {
  if (ctx.settings.artifacts) return new DirStore(ctx.settings.artifacts);
  return ctx.cluster?.store('plan');
}

/**
 * What the result says of a stored object, `ref` included: the reference --plan-artifact, --backup
 * and captf.io/restore-state take, ready to pass (a directory store's `<dir>/<object>`, a Secret
 * store's `secret:<namespace>/<prefix>/<object>`).
 */
export function artifactRefOf(store: ChunkStore, object: string, manifest: { sha256: string; chunkCount: number; totalBytes: number }): ArtifactRef {
  return { location: store.location, object, ref: `${store.location.replace(/\/+$/, '')}/${object}`, sha256: manifest.sha256, chunks: manifest.chunkCount, bytes: manifest.totalBytes };
}

/** One stored object named by a flag (--plan-artifact, --backup): a directory, or `secret:…` in a cluster. */
export function openArtifactSource(ctx: RunContext, reference: string, artifactKind: 'plan' | 'backup'): { store: ChunkStore; object: string } {
  if (!reference.startsWith('secret:')) return openDirObject(reference);
  if (!ctx.cluster) throw usageError('ArtifactReferenceInvalid', `"${reference}" names Secrets, but the runner is not in a cluster: pass --job-name and --job-uid, or a directory`);
  return ctx.cluster.reference(reference, artifactKind);
}
