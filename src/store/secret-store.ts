// A ChunkStore in Kubernetes Secrets, for in-cluster runs: one immutable Secret per chunk and one
// for the manifest, written last. Labels tie an object's Secrets together so they can be listed
// without reading their data; digests, longer than a label value may be, go in annotations.
//
// Names: `<prefix>-<object>-<index>` for chunks and `<prefix>-<object>-manifest`, shortened with a
// digest past 253 characters (an object name that is not a valid Secret name, e.g. with capitals
// or '_', is lowercased and gets a digest too; the full name is in an annotation). Object names
// follow the directory store's rule, so both stores take the same names. Chunk sizes are the caller's: about 700 KiB at most, so that the
// base64 of a chunk fits the 1 MiB a Secret may hold (the API answers 422 otherwise).
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { RunnerError, usageError } from '../errors.ts';
import { isKubeError, KubeReason } from '../kube/api-errors.ts';
import type { KubeClient, ObjectMeta, Secret } from '../kube/client.ts';
import {
  derivedName,
  dnsNamePartFor,
  isDnsSubdomain,
  LABEL_ARTIFACT_KIND,
  LABEL_MANAGED_BY,
  labelValueFor,
  MANAGED_BY,
  MAX_NAME_LENGTH,
} from '../util/kube-names.ts';
import { artifactExists } from './artifact-errors.ts';
import { checkObjectName, missingChunk } from './object-names.ts';
import { doomedObjects } from './retention.ts';
import type { ChunkStore, HeldChunk, ObjectWrite, PruneRequest, StoredObject } from './store.ts';
import { sha256Hex } from '../util/sha256.ts';

const StoreLabel = {
  store: 'captf.io/store',
  artifactKind: LABEL_ARTIFACT_KIND,
  object: 'captf.io/object',
  part: 'captf.io/part',
  chunkIndex: 'captf.io/chunk-index',
  chunkCount: 'captf.io/chunk-count',
} as const;

const StoreAnnotation = {
  /** The object's full name (the label may be shortened). */
  object: 'captf.io/object',
  /** sha256 of the bytes under the data key. */
  sha256: 'captf.io/sha256',
} as const;

const CHUNK_KEY = 'chunk';
const MANIFEST_KEY = 'manifest';

export interface SecretChunkStoreOptions {
  client: KubeClient;
  namespace: string;
  /** Starts every Secret name of this store, e.g. `captf-backup-cluster-prod`. */
  prefix: string;
  artifactKind: 'plan' | 'backup';
  /** Put on every Secret, e.g. the CAPTF object the artifacts belong to. */
  labels?: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

type Part = 'chunk' | 'manifest';

export class SecretChunkStore implements ChunkStore {
  readonly location: string;
  private readonly client: KubeClient;
  private readonly namespace: string;
  private readonly prefix: string;
  private readonly artifactKind: 'plan' | 'backup';
  private readonly labels: Record<string, string>;
  private readonly ownerReferences: OwnerReference[] | undefined;

  constructor(options: SecretChunkStoreOptions) {
    if (!isDnsSubdomain(options.prefix)) {
      const why =
        options.prefix.length > MAX_NAME_LENGTH
          ? `is ${options.prefix.length} characters, more than the ${MAX_NAME_LENGTH} a Kubernetes name may have`
          : "is not a valid Kubernetes name (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)";
      throw usageError('InvalidStoreLocation', `the Secret name prefix ${JSON.stringify(options.prefix)} ${why}`);
    }
    this.client = options.client;
    this.namespace = options.namespace;
    this.prefix = options.prefix;
    this.artifactKind = options.artifactKind;
    this.labels = options.labels ?? {};
    this.ownerReferences = options.ownerReferences;
    this.location = `secret:${options.namespace}/${options.prefix}`;
  }

  /**
   * A write lists the object's chunks once, after the last chunk: each chunk is checked in the
   * create's answer (the API server echoes what it stored), never read again.
   */
  async create(object: string): Promise<ObjectWrite> {
    checkObjectName(object);
    if (await this.getManifest(object)) throw artifactExists(this.location, object);
    const echoed = new Map<number, HeldChunk>();
    const created = new Set<string>();
    return {
      putChunk: async (index, data) => {
        if (!Number.isInteger(index) || index < 0)
          throw new RangeError(`chunk index must be a non-negative integer, got ${index}`);
        const name = this.chunkName(object, index);
        const stored = await this.putPart(
          object,
          'chunk',
          name,
          { [StoreLabel.chunkIndex]: String(index) },
          CHUNK_KEY,
          data,
          { replaceLeftover: true },
        );
        created.add(name);
        const held = Buffer.from(stored.data?.[CHUNK_KEY] ?? '', 'base64');
        echoed.set(index, { index, bytes: held.length, sha256: sha256Hex(held) });
      },
      held: async () => {
        const held: HeldChunk[] = [];
        for (const meta of await this.list({
          [StoreLabel.object]: labelValueFor(object),
          [StoreLabel.part]: 'chunk',
        })) {
          if (objectOf(meta) !== object || !meta.name) continue;
          const chunk = echoed.get(Number(meta.labels?.[StoreLabel.chunkIndex]));
          // Not written by this write: left by an earlier one that died before its manifest.
          if (chunk && created.has(meta.name)) held.push(chunk);
          else await this.client.deleteSecret(this.namespace, meta.name);
        }
        return held;
      },
      commit: async (manifest) => {
        // The count of chunks written, so `kubectl get secrets -l ...` shows whether a backup is whole.
        await this.putPart(
          object,
          'manifest',
          this.manifestName(object),
          { [StoreLabel.chunkCount]: String(created.size) },
          MANIFEST_KEY,
          manifest,
          { replaceLeftover: false },
        );
      },
      abort: async () => {
        for (const name of created) await this.client.deleteSecret(this.namespace, name);
      },
    };
  }

  async getManifest(object: string): Promise<Buffer | undefined> {
    checkObjectName(object);
    const name = this.manifestName(object);
    const secret = await this.client.getSecret(this.namespace, name);
    return secret && this.readPart(secret, object, name, MANIFEST_KEY);
  }

  async listChunks(object: string): Promise<number[]> {
    checkObjectName(object);
    const metas = await this.list({ [StoreLabel.object]: labelValueFor(object), [StoreLabel.part]: 'chunk' });
    return metas
      .filter((meta) => objectOf(meta) === object)
      .map((meta) => Number(meta.labels?.[StoreLabel.chunkIndex]))
      .filter((index) => Number.isInteger(index))
      .sort((a, b) => a - b);
  }

  /** A Secret holds at most 1 MiB (and the client reads at most 32 MiB of an answer): read whole, handed on to `limitBytes + 1`. */
  async getChunk(object: string, index: number, limitBytes?: number): Promise<Buffer> {
    checkObjectName(object);
    const name = this.chunkName(object, index);
    const secret = await this.client.getSecret(this.namespace, name);
    if (!secret) throw missingChunk(this.location, object, index, { secret: name });
    const data = this.readPart(secret, object, name, CHUNK_KEY);
    return limitBytes === undefined ? data : data.subarray(0, limitBytes + 1);
  }

  /** Oldest first, by the time of the last write, as the directory store: the manifest's for
   * complete objects, else the newest chunk's. */
  async listObjects(): Promise<StoredObject[]> {
    return objectsOf(await this.list({}));
  }

  /** Retention from one list: the Secrets of each doomed object are named in it, manifest first. */
  async prune(request: PruneRequest): Promise<string[]> {
    const metas = await this.list({});
    const doomed = doomedObjects(objectsOf(metas), request);
    for (const object of doomed) {
      const parts = metas.filter((meta) => objectOf(meta) === object && meta.name);
      parts.sort(
        (a, b) =>
          Number(b.labels?.[StoreLabel.part] === 'manifest') - Number(a.labels?.[StoreLabel.part] === 'manifest'),
      );
      for (const meta of parts) await this.client.deleteSecret(this.namespace, meta.name!);
    }
    return doomed;
  }

  /** The manifest goes first, so the object never looks complete while its chunks are going. */
  async deleteObject(object: string): Promise<void> {
    checkObjectName(object);
    await this.client.deleteSecret(this.namespace, this.manifestName(object));
    const metas = await this.list({ [StoreLabel.object]: labelValueFor(object) });
    for (const meta of metas) {
      if (objectOf(meta) === object && meta.name) await this.client.deleteSecret(this.namespace, meta.name);
    }
  }

  private chunkName(object: string, index: number): string {
    return derivedName(`${this.prefix}-${dnsNamePartFor(object)}`, String(index));
  }

  private manifestName(object: string): string {
    return derivedName(`${this.prefix}-${dnsNamePartFor(object)}`, 'manifest');
  }

  private storeSelector(extra: Record<string, string>): string {
    const labels = {
      [StoreLabel.store]: labelValueFor(this.prefix),
      [StoreLabel.artifactKind]: this.artifactKind,
      ...extra,
    };
    return Object.entries(labels)
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
  }

  private list(extra: Record<string, string>): Promise<ObjectMeta[]> {
    return this.client.listSecretMetadata(this.namespace, this.storeSelector(extra));
  }

  /**
   * Creates one immutable Secret and returns it as the API server stored it (the create's answer).
   * A retried write finds its own Secret: fine when it holds the same bytes. A chunk of other
   * bytes under the name is an unfinished earlier write's (`replaceLeftover`), replaced; a manifest
   * never is: the object is someone else's, complete.
   */
  private async putPart(
    object: string,
    part: Part,
    name: string,
    partLabels: Record<string, string>,
    key: string,
    data: Buffer,
    { replaceLeftover }: { replaceLeftover: boolean },
  ): Promise<Secret> {
    const sha256 = sha256Hex(data);
    const secret: Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name,
        namespace: this.namespace,
        labels: {
          ...this.labels,
          [LABEL_MANAGED_BY]: MANAGED_BY,
          [StoreLabel.store]: labelValueFor(this.prefix),
          [StoreLabel.artifactKind]: this.artifactKind,
          [StoreLabel.object]: labelValueFor(object),
          [StoreLabel.part]: part,
          ...partLabels,
        },
        annotations: { [StoreAnnotation.object]: object, [StoreAnnotation.sha256]: sha256 },
        ...(this.ownerReferences && { ownerReferences: this.ownerReferences }),
      },
      type: 'Opaque',
      immutable: true,
      data: { [key]: data.toString('base64') },
    };
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.client.createSecret(this.namespace, secret);
      } catch (error) {
        if (!isKubeError(error, KubeReason.AlreadyExists)) throw error;
      }
      const existing = await this.client.getSecret(this.namespace, name);
      const ours = existing !== undefined && this.belongsHere(existing, object);
      if (ours && sha256Hex(Buffer.from(existing.data?.[key] ?? '', 'base64')) === sha256) return existing;
      // A leftover only while the object has no manifest: a complete object's chunks are never replaced.
      if (!ours || !replaceLeftover || attempt > 1 || (await this.getManifest(object))) {
        throw new RunnerError({
          kind: 'artifact',
          reason: 'ArtifactExists',
          message: `cannot write the ${part} of ${object} to ${this.location}: Secret "${name}" already exists with other content; artifact names must not be reused`,
          detail: { location: this.location, object, secret: name },
        });
      }
      await this.client.deleteSecret(this.namespace, name);
    }
  }

  private readPart(secret: Secret, object: string, name: string, key: string): Buffer {
    const encoded = secret.data?.[key];
    const corrupt = (why: string) =>
      new RunnerError({
        kind: 'artifact',
        reason: 'ArtifactCorrupt',
        message: `Secret "${name}" in ${this.location} ${why}`,
        detail: { location: this.location, object, secret: name },
      });
    if (!this.belongsHere(secret, object))
      throw corrupt(`is not part of ${object} (its labels name another store or object)`);
    if (encoded === undefined) throw corrupt(`has no "${key}" key`);
    const data = Buffer.from(encoded, 'base64');
    const expected = secret.metadata?.annotations?.[StoreAnnotation.sha256];
    const actual = sha256Hex(data);
    if (expected !== actual)
      throw corrupt(`holds data whose sha256 ${actual} does not match its annotation ${expected ?? '(none)'}`);
    return data;
  }

  private belongsHere(secret: Secret, object: string): boolean {
    const labels = secret.metadata?.labels ?? {};
    return (
      labels[StoreLabel.store] === labelValueFor(this.prefix) &&
      labels[StoreLabel.artifactKind] === this.artifactKind &&
      secret.metadata?.annotations?.[StoreAnnotation.object] === object
    );
  }
}

const objectOf = (meta: ObjectMeta) => meta.annotations?.[StoreAnnotation.object] ?? meta.labels?.[StoreLabel.object];

/** The objects a listing of the store's Secrets shows, oldest first (see listObjects). */
function objectsOf(metas: readonly ObjectMeta[]): StoredObject[] {
  const byObject = new Map<string, { complete: boolean; created: string | undefined }>();
  for (const meta of metas) {
    const name = objectOf(meta);
    if (!name) continue;
    const entry = byObject.get(name) ?? { complete: false, created: undefined };
    const created = meta.creationTimestamp;
    if (meta.labels?.[StoreLabel.part] === 'manifest') {
      entry.complete = true;
      entry.created = created;
    } else if (!entry.complete && created && (!entry.created || created > entry.created)) {
      entry.created = created;
    }
    byObject.set(name, entry);
  }
  return [...byObject.entries()]
    .map(([name, { complete, created }]) => ({ name, complete, ...(created && { created }) }))
    .sort((a, b) => (a.created ?? '').localeCompare(b.created ?? '') || a.name.localeCompare(b.name));
}
