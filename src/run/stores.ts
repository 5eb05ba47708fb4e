// Which store holds this run's backups, plan artifacts and blocked records, in this order: a
// directory given for the kind (--backups, --artifacts), else the --store (PostgreSQL, S3), else
// Secrets in a cluster; outside a cluster backups and plan artifacts default to the out dir.
// contract/sections/artifacts.md says the same for the controller.
import { join } from 'node:path';
import { usageError } from '../errors.ts';
import type { Settings } from '../schemas/config.ts';
import { DirStore, openDirObject } from '../store/dir-store.ts';
import { checkObjectName, objectStorePrefix, type ArtifactFamily } from '../store/object-names.ts';
import { PgDatabase, pgTarget } from '../store/pg-database.ts';
import { PgChunkStore } from '../store/pg-store.ts';
import { S3Bucket, S3ChunkStore, s3Target } from '../store/s3-store.ts';
import type { ChunkStore, RecordStore } from '../store/store.ts';
import type { ArtifactRef } from '../schemas/result.ts';
import type { RunContext } from './context.ts';

export function backupStore(ctx: RunContext): ChunkStore {
  if (ctx.settings.backups) return new DirStore(ctx.settings.backups);
  return configuredStore(ctx, 'backup') ?? ctx.cluster?.store('backup') ?? new DirStore(defaultBackupDir(ctx));
}

export function artifactStore(ctx: RunContext): ChunkStore {
  if (ctx.settings.artifacts) return new DirStore(ctx.settings.artifacts);
  return configuredStore(ctx, 'plan') ?? ctx.cluster?.store('plan') ?? new DirStore(defaultArtifactDir(ctx));
}

/**
 * Where a blocked apply keeps the record of what it showed, beside the backups: undefined in a
 * cluster without --store or --backups, where the blocked Job's result Secret is the record.
 */
export function recordStore(ctx: RunContext): RecordStore | undefined {
  if (ctx.settings.backups) return new DirStore(ctx.settings.backups);
  return configuredStore(ctx, 'backup') ?? (ctx.cluster ? undefined : new DirStore(defaultBackupDir(ctx)));
}

/** Where backups go without --backups outside a cluster: under the out dir. */
const defaultBackupDir = (ctx: RunContext) => join(ctx.settings.out, 'backups');
/** Where plan artifacts go without --artifacts outside a cluster: beside the backups. */
const defaultArtifactDir = (ctx: RunContext) => join(ctx.settings.out, 'artifacts');

/** The --store of this run: one client for both families, whose library loads on its first request. */
const opened = new WeakMap<Settings, PgDatabase | S3Bucket>();

function configuredStore(ctx: RunContext, family: ArtifactFamily): (ChunkStore & RecordStore) | undefined {
  const { store } = ctx.settings;
  if (!store) return undefined;
  let client = opened.get(ctx.settings);
  if (!client)
    opened.set(
      ctx.settings,
      (client = store.startsWith('s3://')
        ? new S3Bucket(s3Target(store))
        : new PgDatabase(pgTarget(store, process.env))),
    );
  // The settings' rules make sure of both: --namespace, or in a cluster the Job's.
  const namespace = ctx.settings.namespace ?? ctx.cluster?.job.namespace;
  const prefix = objectStorePrefix(family, ctx.settings.kind, namespace!, ctx.settings.object!);
  return client instanceof S3Bucket ? new S3ChunkStore(client, prefix) : new PgChunkStore(client, prefix);
}

/**
 * One stored object named by a flag (--plan-artifact, --backup): a directory; `secret:…` in a
 * cluster; or `<location>/<object>` of this run's --store, as results give it: a run reads only its
 * own object's artifacts in the store it was given, never another location its flags could name.
 */
export function openArtifactSource(
  ctx: RunContext,
  reference: string,
  family: ArtifactFamily,
): { store: ChunkStore; object: string } {
  if (reference.startsWith('secret:')) {
    if (!ctx.cluster)
      throw usageError(
        'ArtifactReferenceInvalid',
        `"${reference}" names Secrets, but the runner is not in a cluster: pass --job-name and --job-uid, or a directory`,
      );
    return ctx.cluster.reference(reference, family);
  }
  if (!/^(?:postgres(?:ql)?|s3):\/\//.test(reference)) return openDirObject(reference);
  const store = configuredStore(ctx, family);
  if (!store)
    throw usageError(
      'ArtifactReferenceInvalid',
      `"${reference}" names an object in a store, but no --store (CAPTF_STORE) is given: pass the store it is in`,
    );
  const object = reference.startsWith(`${store.location}/`) ? reference.slice(store.location.length + 1) : undefined;
  if (object === undefined || object.includes('/')) {
    throw usageError(
      'ArtifactReferenceInvalid',
      `"${reference}" is not an object of this run's store ${store.location}: name one as <location>/<object>, as result.${family === 'plan' ? 'planArtifact' : 'backup'} gives it. A run reads only its own object's artifacts`,
    );
  }
  return { store, object: checkObjectName(object) };
}

/**
 * What the result says of a stored object, `ref` included: the reference --plan-artifact, --backup
 * and captf.io/restore-state take, ready to pass (a directory store's `<dir>/<object>`, a Secret
 * store's `secret:<namespace>/<prefix>/<object>`).
 */
export function artifactRefOf(
  store: ChunkStore,
  object: string,
  manifest: { sha256: string; chunkCount: number; totalBytes: number },
): ArtifactRef {
  return {
    location: store.location,
    object,
    ref: `${store.location.replace(/\/+$/, '')}/${object}`,
    sha256: manifest.sha256,
    chunks: manifest.chunkCount,
    bytes: manifest.totalBytes,
  };
}
