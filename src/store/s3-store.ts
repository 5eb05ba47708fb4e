// A ChunkStore (and the records beside it) on the S3 API, `--store s3://bucket/prefix`:
//   <prefix>/<store>/<object>/chunk-00000 …   the chunks, each put only if absent (If-None-Match: *)
//   <prefix>/<store>/<object>/manifest.json   put last, only if absent
//   <prefix>/<store>/<record>                 records (blocked-<approval hash>.json), replaced whole
// `<store>` is the object's prefix (`captf-backup-tc.team-a.prod`). The AWS SDK's S3 client finds the
// region, the endpoint (AWS_ENDPOINT_URL_S3) and the credentials the way it always does (the
// variables, web identity for IRSA, the container and instance providers); it loads on the first
// request, so only a run that uses this store pays for it.
import { createHash } from 'node:crypto';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { RunnerError, usageError } from '../errors.ts';
import { sha256Hex } from '../util/sha256.ts';
import { artifactExists } from './artifact-errors.ts';
import { MAX_CHUNK_BYTES, MAX_MANIFEST_BYTES } from '../schemas/limits.ts';
import { checkObjectName, missingChunk } from './object-names.ts';
import { doomedObjects } from './retention.ts';
import type { ChunkStore, HeldChunk, ObjectWrite, PruneRequest, RecordStore, StoredObject } from './store.ts';

type Sdk = typeof import('@aws-sdk/client-s3');

/** `s3://bucket/prefix`: where the store's keys start. */
export interface S3Target {
  bucket: string;
  /** '' or a prefix ending in '/'. */
  keyPrefix: string;
  /** `s3://bucket` or `s3://bucket/prefix`, for messages and results. */
  location: string;
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function s3Target(store: string): S3Target {
  const match = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/.exec(store);
  const bucket = match?.[1] ?? '';
  const prefix = (match?.[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (
    !match ||
    !BUCKET.test(bucket) ||
    prefix.split('/').some((part) => part === '.' || part === '..') ||
    /\/\//.test(prefix)
  ) {
    throw usageError(
      'InvalidStoreLocation',
      `${JSON.stringify(store)} is not an S3 location: write s3://bucket or s3://bucket/prefix (a bucket name of 3 to 63 lowercase letters, digits, "." and "-")`,
    );
  }
  return { bucket, keyPrefix: prefix ? `${prefix}/` : '', location: `s3://${bucket}${prefix ? `/${prefix}` : ''}` };
}

/**
 * Pages one listing may take: 1,000,000 keys at S3's 1,000 a page, where a store holds its few
 * objects' chunks (hundreds of keys). A service whose listing never ends fails the op, not holds it.
 */
const MAX_LIST_PAGES = 1000;

/** Tries of one request: 503 SlowDown, 5xx and dropped connections are retried with the SDK's backoff. */
const MAX_ATTEMPTS = 4;

/** One run's S3 client (shared by its backup and plan stores), created on first use. */
export class S3Bucket {
  private loaded: Promise<{ sdk: Sdk; client: S3Client }> | undefined;

  /**
   * `config`: the client's settings beyond what the SDK finds itself (tests: shorter timeouts,
   * explicit credentials); `maxListPages`: the pages one listing may take; `retryDelay`: the wait
   * in ms before retry `n` (0, 1, …) in place of the SDK's backoff (tests: none, so no test sleeps
   * through a second of backoff per fault it injects; a run always takes the SDK's).
   */
  constructor(
    readonly target: S3Target,
    private readonly config: S3ClientConfig = {},
    private readonly env: NodeJS.ProcessEnv = process.env,
    readonly maxListPages = MAX_LIST_PAGES,
    private readonly retryDelay?: (retry: number) => number,
  ) {}

  sdk(): Promise<{ sdk: Sdk; client: S3Client }> {
    this.loaded ??= import('@aws-sdk/client-s3').then(async (sdk) => {
      // The SDK warns on stderr, once per process, that its releases after January 2027 need Node 22:
      // the image runs Node 24; on a laptop's Node 20 the line would only break the runner's log.
      process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
      const client = new sdk.S3Client({
        // An endpoint of its own (an S3-compatible store) is addressed by path: its DNS names no bucket.
        forcePathStyle: Boolean(this.env.AWS_ENDPOINT_URL_S3 || this.env.AWS_ENDPOINT_URL),
        // 503 SlowDown, 5xx and dropped connections are retried with the SDK's backoff; a socket
        // silent for 30 s is given up: a store that hangs fails the op, it never holds it.
        maxAttempts: MAX_ATTEMPTS,
        ...(this.retryDelay && { retryStrategy: await this.retryStrategy(this.retryDelay) }),
        // The store sends a SHA-256 of every object it puts; no other checksum work.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        ...this.config,
        // Without throwOnRequestTimeout the SDK only warns when a socket goes silent, and waits on.
        requestHandler: {
          connectionTimeout: 10_000,
          requestTimeout: 30_000,
          ...(this.config.requestHandler as object | undefined),
          throwOnRequestTimeout: true,
        },
      });
      return { sdk, client };
    });
    return this.loaded;
  }

  /** The SDK's own strategy, which decides what is retried and how often, waiting what `delay` says. */
  private async retryStrategy(delay: (retry: number) => number) {
    const { StandardRetryStrategy } = await import('@smithy/core/retry');
    const { maxAttempts = MAX_ATTEMPTS } = this.config;
    return new StandardRetryStrategy({
      maxAttempts: typeof maxAttempts === 'number' ? maxAttempts : MAX_ATTEMPTS,
      backoff: { computeNextBackoffDelay: delay, setDelayBase: () => {} },
    });
  }

  /** Closes the client's connections (tests; a run's process ends without waiting on idle ones). */
  async close(): Promise<void> {
    (await this.loaded?.catch(() => undefined))?.client.destroy();
  }

  /** What a failed request means, as a RunnerError naming the store (never its credentials). */
  failure(error: unknown, location: string, doing: string): RunnerError {
    if (error instanceof RunnerError) return error;
    const { name, message, $metadata } = error as {
      name?: string;
      message?: string;
      $metadata?: { httpStatusCode?: number };
    };
    const status = $metadata?.httpStatusCode;
    const detail = { location, ...(name && { code: name }), ...(status && { httpStatus: status }) };
    if (
      status === 403 ||
      name === 'CredentialsProviderError' ||
      name === 'AccessDenied' ||
      name === 'InvalidAccessKeyId' ||
      name === 'SignatureDoesNotMatch'
    ) {
      return new RunnerError({
        kind: 'io',
        reason: 'StoreAccessDenied',
        message: `the S3 store ${location} refused the runner to ${doing} (${name}: ${message}): its credentials need s3:GetObject, s3:PutObject and s3:DeleteObject on its keys and s3:ListBucket for its prefix (contract/sections/artifacts.md). Nothing was changed`,
        detail,
        cause: error,
      });
    }
    const unreachable = status === undefined || status >= 500 || name === 'TimeoutError' || name === 'RequestTimeout';
    return new RunnerError({
      kind: 'io',
      reason: unreachable ? 'StoreUnreachable' : 'StoreFailed',
      message: unreachable
        ? `the S3 store ${location} could not be reached or did not answer in time to ${doing} (${name}: ${message}): check that it is up and reachable from the Job; a retry can help`
        : `the S3 store ${location} failed to ${doing} (${name}: ${message})`,
      detail,
      cause: error,
    });
  }
}

const MANIFEST_FILE = 'manifest.json';
const CHUNK_FILE = /^chunk-(\d{5})$/;
const chunkFileName = (index: number) => `chunk-${String(index).padStart(5, '0')}`;

interface ListedKey {
  key: string;
  size: number;
  lastModified: Date;
}

export class S3ChunkStore implements ChunkStore, RecordStore {
  readonly location: string;
  /** Every key of this store starts with it: `<prefix>/<store>/`. */
  private readonly base: string;

  constructor(
    private readonly bucket: S3Bucket,
    prefix: string,
  ) {
    this.location = `${bucket.target.location}/${prefix}`;
    this.base = `${bucket.target.keyPrefix}${prefix}/`;
  }

  /**
   * Each chunk and the manifest are put only where no key is (If-None-Match: *) with their
   * SHA-256, which the service checks: a racing writer never replaces another's key, and what is
   * stored is what was sent. A retried put that finds its own earlier success is recognised by
   * the stored object's SHA-256.
   */
  async create(object: string): Promise<ObjectWrite> {
    checkObjectName(object);
    if (await this.getManifest(object)) throw artifactExists(this.location, object);
    // Chunks of an unfinished earlier write under the name: removed before any is written again.
    for (const { key } of await this.listKeys(this.objectKey(object, ''))) await this.deleteKey(key);
    const stored = new Map<number, HeldChunk>();
    const put = new Set<string>();
    return {
      putChunk: async (index, data) => {
        const key = this.objectKey(object, chunkFileName(index));
        const sha256 = await this.putExclusive(key, data, object);
        put.add(key);
        stored.set(index, { index, bytes: data.length, sha256 });
      },
      held: async () => {
        const held: HeldChunk[] = [];
        for (const listed of await this.listKeys(this.objectKey(object, ''))) {
          const index = chunkIndex(listed.key.slice(this.objectKey(object, '').length));
          if (index === undefined) continue;
          const sent = stored.get(index);
          // As the service holds it: its size from the listing, its SHA-256 as the service computed it on the put.
          held.push({
            index,
            bytes: listed.size,
            sha256: put.has(listed.key) && sent ? sent.sha256 : sha256Hex(await this.getChunk(object, index)),
          });
        }
        return held;
      },
      commit: async (manifest) =>
        void (await this.putExclusive(this.objectKey(object, MANIFEST_FILE), manifest, object)),
      abort: async () => {
        for (const key of put) await this.deleteKey(key);
      },
    };
  }

  async getManifest(object: string): Promise<Buffer | undefined> {
    checkObjectName(object);
    return this.getKey(this.objectKey(object, MANIFEST_FILE), MAX_MANIFEST_BYTES + 1);
  }

  async listChunks(object: string): Promise<number[]> {
    checkObjectName(object);
    const start = this.objectKey(object, '');
    return (await this.listKeys(start))
      .map(({ key }) => chunkIndex(key.slice(start.length)))
      .filter((index) => index !== undefined)
      .sort((a, b) => a - b);
  }

  /** A ranged read: at most `limitBytes + 1` bytes are asked for, and no more are taken if the service sends more. */
  async getChunk(object: string, index: number, limitBytes = MAX_CHUNK_BYTES): Promise<Buffer> {
    checkObjectName(object);
    const data = await this.getKey(this.objectKey(object, chunkFileName(index)), limitBytes + 1);
    if (!data) throw missingChunk(this.location, object, index);
    return data;
  }

  async listObjects(): Promise<StoredObject[]> {
    return this.objectsOf(await this.listKeys(this.base));
  }

  /** The manifest goes first, so the object never reads as complete while its chunks go. */
  async deleteObject(object: string): Promise<void> {
    checkObjectName(object);
    await this.deleteKey(this.objectKey(object, MANIFEST_FILE));
    for (const { key } of await this.listKeys(this.objectKey(object, ''))) await this.deleteKey(key);
  }

  /** Retention by prefix: one listing of the family's keys, then each doomed object's keys, manifest first. */
  async prune(request: PruneRequest): Promise<string[]> {
    const keys = await this.listKeys(`${this.base}${request.prefix}`);
    const doomed = doomedObjects(this.objectsOf(keys), request);
    for (const object of doomed) {
      const own = keys.filter(({ key }) => key.startsWith(this.objectKey(object, '')));
      own.sort((a, b) => Number(b.key.endsWith(`/${MANIFEST_FILE}`)) - Number(a.key.endsWith(`/${MANIFEST_FILE}`)));
      for (const { key } of own) await this.deleteKey(key);
    }
    return doomed;
  }

  async putRecord(name: string, data: Buffer): Promise<void> {
    const { sdk, client } = await this.bucket.sdk();
    await this.request('write a record', () =>
      client.send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket.target.bucket,
          Key: `${this.base}${name}`,
          Body: data,
          ChecksumSHA256: sha256Base64(data),
        }),
      ),
    );
  }

  async getRecord(name: string, maxBytes: number): Promise<Buffer | undefined> {
    const data = await this.getKey(`${this.base}${name}`, maxBytes + 1);
    if (data && data.length > maxBytes)
      throw new Error(
        `the record ${name} in ${this.location} holds more than ${maxBytes} bytes: not a record the runner wrote`,
      );
    return data;
  }

  /** Newest first: records are keys directly under the store, beside the objects' prefixes. */
  async listRecords(prefix: string): Promise<string[]> {
    return (await this.listKeys(`${this.base}${prefix}`))
      .map((listed) => ({ ...listed, name: listed.key.slice(this.base.length) }))
      .filter(({ name }) => !name.includes('/'))
      .sort((a, b) => b.lastModified.getTime() - a.lastModified.getTime() || a.name.localeCompare(b.name))
      .map(({ name }) => name);
  }

  async deleteRecord(name: string): Promise<void> {
    await this.deleteKey(`${this.base}${name}`);
  }

  private objectKey(object: string, file: string): string {
    return `${this.base}${object}/${file}`;
  }

  /** Objects from a listing, oldest first by their last write (the manifest's, else the newest chunk's), as the other stores. */
  private objectsOf(keys: readonly ListedKey[]): StoredObject[] {
    const byObject = new Map<string, { complete: boolean; written: Date }>();
    for (const { key, lastModified } of keys) {
      const [object, file, ...deeper] = key.slice(this.base.length).split('/');
      if (!object || file === undefined || deeper.length) continue; // a record, or not the store's
      const entry = byObject.get(object) ?? { complete: false, written: new Date(0) };
      if (file === MANIFEST_FILE) byObject.set(object, { complete: true, written: lastModified });
      else if (!entry.complete && lastModified > entry.written)
        byObject.set(object, { complete: false, written: lastModified });
      else byObject.set(object, entry);
    }
    return [...byObject.entries()]
      .sort(([a, x], [b, y]) => x.written.getTime() - y.written.getTime() || a.localeCompare(b))
      .map(([name, { complete, written }]) => ({ name, complete, created: written.toISOString() }));
  }

  /** Puts `key` only if absent; returns the SHA-256 (hex) of what the service stored. */
  private async putExclusive(key: string, data: Buffer, object: string): Promise<string> {
    const { sdk, client } = await this.bucket.sdk();
    const sha256 = sha256Base64(data);
    try {
      const put = await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket.target.bucket,
          Key: key,
          Body: data,
          IfNoneMatch: '*',
          ChecksumSHA256: sha256,
        }),
      );
      return put.ChecksumSHA256
        ? Buffer.from(put.ChecksumSHA256, 'base64').toString('hex')
        : sha256Hex((await this.getKey(key, data.length + 1)) ?? Buffer.alloc(0));
    } catch (error) {
      const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } };
      if (name !== 'PreconditionFailed' && $metadata?.httpStatusCode !== 412 && name !== 'ConditionalRequestConflict')
        throw this.bucket.failure(error, this.location, `write ${key}`);
    }
    // The key exists: this write's own earlier put (its answer lost, the SDK retried), or another writer's.
    const existing = await this.getKey(key, data.length + 1);
    if (existing && existing.equals(data)) return sha256Hex(existing);
    throw artifactExists(this.location, object, { key });
  }

  /** At most `most` bytes of a key, or undefined when there is none. */
  private async getKey(key: string, most: number): Promise<Buffer | undefined> {
    const { sdk, client } = await this.bucket.sdk();
    let body: AsyncIterable<Uint8Array> | undefined;
    try {
      const got = await client.send(
        new sdk.GetObjectCommand({ Bucket: this.bucket.target.bucket, Key: key, Range: `bytes=0-${most - 1}` }),
      );
      body = got.Body as AsyncIterable<Uint8Array> | undefined;
    } catch (error) {
      const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } };
      if (name === 'NoSuchKey' || ($metadata?.httpStatusCode === 404 && name !== 'NoSuchBucket')) return undefined;
      throw this.bucket.failure(error, this.location, `read ${key}`);
    }
    return this.request(`read ${key}`, () => readAtMost(body, most));
  }

  private async deleteKey(key: string): Promise<void> {
    const { sdk, client } = await this.bucket.sdk();
    await this.request(`delete ${key}`, () =>
      client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket.target.bucket, Key: key })),
    );
  }

  /** Every key under `prefix`, all pages. */
  private async listKeys(prefix: string): Promise<ListedKey[]> {
    const { sdk, client } = await this.bucket.sdk();
    const keys: ListedKey[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      if (++pages > this.bucket.maxListPages) {
        throw new RunnerError({
          kind: 'io',
          reason: 'StoreFailed',
          message: `the S3 store ${this.location} listed ${this.bucket.maxListPages} pages under ${prefix} and still had more: the runner keeps a few hundred keys there. Remove what is not the runner's, or check the S3 service's listing`,
          detail: { location: this.location, prefix },
        });
      }
      const page = await this.request(`list ${prefix}`, () =>
        client.send(
          new sdk.ListObjectsV2Command({
            Bucket: this.bucket.target.bucket,
            Prefix: prefix,
            ...(token && { ContinuationToken: token }),
          }),
        ),
      );
      for (const item of page.Contents ?? [])
        if (item.Key)
          keys.push({ key: item.Key, size: item.Size ?? 0, lastModified: item.LastModified ?? new Date(0) });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  private async request<T>(doing: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw this.bucket.failure(error, this.location, doing);
    }
  }
}

const chunkIndex = (file: string): number | undefined => {
  const digits = CHUNK_FILE.exec(file)?.[1];
  return digits === undefined ? undefined : Number(digits);
};

const sha256Base64 = (data: Buffer) => createHash('sha256').update(data).digest('base64');

/** Reads a body to at most `most` bytes, then lets go of it: a service that ignores Range is never read whole. */
async function readAtMost(body: AsyncIterable<Uint8Array> | undefined, most: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let length = 0;
  if (!body) return Buffer.alloc(0);
  for await (const part of body) {
    const take = Math.min(part.length, most - length);
    parts.push(Buffer.from(part.buffer, part.byteOffset, take));
    length += take;
    if (length >= most) break; // leaving the loop destroys the stream
  }
  return Buffer.concat(parts, length);
}
