// Which ChunkStore holds backups and plan artifacts for this run: a directory when one is given.
import { DirStore, openDirObject } from '../store/dir-store.ts';
import type { ChunkStore } from '../store/store.ts';
import type { RunContext } from './context.ts';

export function backupStore(ctx: RunContext): ChunkStore | undefined {
  return ctx.settings.backups ? new DirStore(ctx.settings.backups) : undefined;
}

export function artifactStore(ctx: RunContext): ChunkStore | undefined {
  return ctx.settings.artifacts ? new DirStore(ctx.settings.artifacts) : undefined;
}

/** One stored object named by a flag (--plan-artifact, --backup): a directory. */
export function openArtifactSource(reference: string): { store: ChunkStore; object: string } {
  return openDirObject(reference);
}
