// The backup step: the state as it is, kept in the backup store before an op changes it, and the
// retention that follows. State must never be silently lost.
import type { ArtifactRef } from '../schemas/result.ts';
import { pruneObjects, type PruneOptions } from '../store/retention.ts';
import type { ChunkStore } from '../store/store.ts';
import { sha256Hex } from '../util/sha256.ts';
import { timeStamp } from '../util/stamp.ts';
import { STATE_FILE } from '../workspace/terraform-files.ts';
import type { RunContext } from '../run/context.ts';
import { artifactRefOf, backupStore } from '../run/stores.ts';
import { artifactWriter, stateLineage, type PulledState } from './state.ts';

export interface BackupStepOptions {
  /** The state as it is: what the backup holds. */
  before: PulledState;
  /** The inputs hash the backup names (the run's, or what the state records). */
  inputsHash: string | undefined;
  terraformVersion: string;
  /** Objects retention must not delete besides the new one (the backup a restore reads). */
  keep?: string[];
}

/**
 * Before an op changes anything: the state as it is, packed and verified in the backup store. Not
 * best effort: a backup that cannot be written stops the op before it changes anything.
 */
export async function backupStep(
  ctx: RunContext,
  { before, inputsHash, terraformVersion, keep = [] }: BackupStepOptions,
): Promise<ArtifactRef | undefined> {
  const store = backupStore(ctx);
  const lineage = stateLineage(before);
  if (lineage === null) {
    ctx.skip('backup', 'there is no state yet');
    return undefined;
  }
  return ctx.step(
    'backup',
    async (): Promise<ArtifactRef> => {
      // Named by whose state it is, and retention counts per state: states sharing a store keep their own.
      const family = `backup-${backupOwner(lineage)}-`;
      const object = `${family}${timeStamp()}-s${before.serial}`;
      const { writeArtifact, confirmArtifact } = await artifactWriter();
      const manifest = await writeArtifact(
        store,
        object,
        [{ name: STATE_FILE, path: before.file }],
        {
          kind: 'StateBackup',
          terraformVersion,
          op: ctx.op,
          stateFile: STATE_FILE,
          serial: before.serial!,
          lineage,
          ...(inputsHash ? { inputsHash } : {}),
        },
        { chunkBytes: ctx.settings.chunkBytes, maxBytes: ctx.settings.maxArtifactBytes },
      );
      await pruneQuietly(ctx, store, { keep: ctx.settings.keepBackups, prefix: family, protect: [object, ...keep] });
      await confirmArtifact(
        store,
        manifest,
        'the retention of another run backing up the same state at the same time (--keep-backups), or the store (a trigger or lifecycle rule of its own), removed it. Nothing was changed: a state is never changed without its backup. Run again, and let the store keep what the runner writes',
      );
      return artifactRefOf(store, object, manifest);
    },
    { learned: (backup) => ({ backup }) },
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Whose backup it is, in its name: the state's lineage (a UUID, as terraform and OpenTofu make
 * them), else the first 16 hex digits of its sha256 (a lineage can be any string; a name cannot).
 * Both have a fixed length, so no owner's family of names is a prefix of another's.
 */
function backupOwner(lineage: string): string {
  return UUID.test(lineage) ? lineage : sha256Hex(lineage).slice(0, 16);
}

/** Retention runs after the new object is complete: a failure to delete old ones is a warning, never a failed op. */
export async function pruneQuietly(ctx: RunContext, store: ChunkStore, options: PruneOptions): Promise<void> {
  try {
    const { deleted } = await pruneObjects(store, options);
    if (deleted.length)
      ctx.log.info({ deleted, location: store.location }, `retention: deleted ${deleted.length} older objects`);
  } catch (error) {
    ctx.warn(`could not delete older objects in ${store.location}: ${(error as Error).message}`);
  }
}
