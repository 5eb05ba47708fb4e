// Chunked, verified artifacts on a ChunkStore: plan artifacts and state backups.
//   write: files -> tar -> gzip -> chunks (put one by one) -> read back and verify -> manifest last
//   read:  manifest -> chunk set -> each chunk (size, sha256) as it streams -> whole sha256
//          -> gunzip -> tar entries checked against the manifest -> files (size, sha256)
// Data streams through: at most a chunk or two is in memory, whatever the size of the files.
// contract/sections/artifacts.md is the same story for readers in other languages.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { sha256Hex } from '../util/sha256.ts';
import tar from 'tar-stream';
import { z } from 'zod';
import { RunnerError, usageError } from '../errors.ts';
import {
  ARTIFACT_API_VERSION,
  ArtifactFileName,
  ArtifactManifest,
  ArtifactMetaSchema,
  DEFAULT_MAX_ARTIFACT_BYTES,
  MAX_CHUNK_BYTES,
  MAX_CHUNKS,
  MAX_MANIFEST_BYTES,
  type ArtifactKind,
  type ArtifactMeta,
  type ChunkEntry,
  type FileEntry,
  type ManifestOfKind,
} from './manifest.ts';
import type { ChunkStore } from './store.ts';

/** Fits a Kubernetes Secret (1 MiB) even after base64, with headroom for metadata. */
export const DEFAULT_CHUNK_BYTES = 700_000;
export const MIN_CHUNK_BYTES = 1024;
export { DEFAULT_MAX_ARTIFACT_BYTES, MAX_CHUNK_BYTES };

/** A file to pack: from disk (streamed) or from memory. Extracted files are always 0600. */
export type ArtifactFile = { name: string } & ({ path: string } | { data: Buffer });

export interface WriteArtifactOptions {
  chunkBytes?: number;
  /** The most the files, and the payload, may hold (DEFAULT_MAX_ARTIFACT_BYTES): what a reader with the same setting accepts. */
  maxBytes?: number;
}

export interface ArtifactExpectation<K extends ArtifactKind> {
  kind: K;
  /** The approved plan hash: the artifact must hold exactly that plan. */
  planHash?: string;
  /** The hash of the inputs mounted now: the artifact must have been made from them. */
  inputsHash?: string;
}

export interface ReadArtifactOptions<K extends ArtifactKind> {
  /** Created 0700 (or an existing empty directory); removed again, or emptied, on any failure. */
  into: string;
  expect?: ArtifactExpectation<K>;
  /** The most a manifest may declare for the payload and for the files it unpacks to (DEFAULT_MAX_ARTIFACT_BYTES). */
  maxBytes?: number;
}

export interface ExtractedArtifact<M extends ArtifactManifest> {
  manifest: M;
  /** Absolute path of each extracted file, by its name in the manifest. */
  paths: Record<string, string>;
}

export interface PruneOptions {
  /** How many complete objects to keep (the newest); at least 1. */
  keep: number;
  /** Only objects whose names start with it take part (a store may hold several families). */
  prefix?: string;
  /** Never deleted, whatever their age: pass the object just written. */
  protect?: readonly string[];
}

type TarEntry = tar.ExtractEvents['entry'][1];
type FailureReason = 'ArtifactIncomplete' | 'ArtifactCorrupt' | 'ArtifactMismatch' | 'ArtifactUnsafe';

// Fixed tar header fields, so the same files always give the same payload.
const ENTRY_DEFAULTS = { type: 'file', mode: 0o600, mtime: new Date(0), uid: 0, gid: 0, uname: '', gname: '' } as const;

/**
 * Packs `files` into `object`, chunk by chunk, then writes the manifest: the object is complete
 * only once every chunk has been written and read back intact. Refuses to overwrite a complete
 * object; leftovers of an earlier, unfinished write under the same name are replaced. On failure
 * the partial object is deleted (best effort) and nothing is complete.
 */
export async function writeArtifact(
  store: ChunkStore,
  object: string,
  files: readonly ArtifactFile[],
  meta: ArtifactMeta,
  options: WriteArtifactOptions = {},
): Promise<ArtifactManifest> {
  const chunkBytes = checkChunkBytes(options.chunkBytes ?? DEFAULT_CHUNK_BYTES);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_ARTIFACT_BYTES;
  checkFiles(files);
  const validMeta = parseOrInternal(ArtifactMetaSchema, meta, 'artifact metadata');

  if (await store.getManifest(object)) {
    throw new RunnerError({
      kind: 'artifact',
      reason: 'ArtifactExists',
      message: `"${object}" in ${store.location} is already a complete artifact and artifacts are never overwritten: write under a new name or delete it first`,
      detail: { location: store.location, object },
    });
  }
  if ((await store.listChunks(object)).length > 0) await store.deleteObject(object);

  try {
    // Refused before a chunk is written: an artifact no reader with the same setting would accept is no backup.
    const filesBytes = (await Promise.all(files.map(async (file) => ('data' in file ? file.data.length : (await stat(file.path)).size)))).reduce((a, b) => a + b, 0);
    if (filesBytes > maxBytes) throw tooLarge(store, object, validMeta.kind, `would hold ${filesBytes} bytes of files`, maxBytes);
    const fileEntries: FileEntry[] = [];
    const chunks: ChunkEntry[] = [];
    const whole = createHash('sha256');
    // Packing feeds storing. When one side fails, the other fails too, often with a mere abort:
    // the first error that is not an abort is the cause worth reporting.
    let cause: unknown;
    const noteCause = (error: unknown) => {
      if (cause === undefined && !isAbort(error)) cause = error;
      throw error;
    };
    const pack = tar.pack();
    const packing = packFiles(pack, files, fileEntries).catch((error: unknown) => {
      pack.destroy(error as Error);
      noteCause(error);
    });
    const storing = pipeline(pack, createGzip(), async (gzipped: AsyncIterable<Buffer>) =>
      storeChunks(gzipped, store, object, { chunkBytes, maxBytes, kind: validMeta.kind }, chunks, whole).catch(noteCause),
    );
    const [packed, stored] = await Promise.allSettled([packing, storing]);
    for (const side of [packed, stored]) if (side.status === 'rejected') throw cause ?? side.reason;

    await verifyStoredChunks(store, object, chunks);
    const manifest = parseOrInternal(
      ArtifactManifest,
      {
        ...validMeta,
        apiVersion: ARTIFACT_API_VERSION,
        object,
        chunks,
        chunkCount: chunks.length,
        totalBytes: chunks.reduce((sum, chunk) => sum + chunk.bytes, 0),
        sha256: whole.digest('hex'),
        files: fileEntries,
        createdAt: new Date().toISOString(),
      },
      'artifact manifest',
    );
    await store.putManifest(object, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
    return manifest;
  } catch (error) {
    await store.deleteObject(object).catch(() => undefined);
    if (error instanceof RunnerError) throw error;
    throw new RunnerError({
      kind: 'io',
      reason: 'ArtifactWriteFailed',
      message: `cannot write "${object}" to ${store.location}: ${messageOf(error)}`,
      detail: { location: store.location, object },
      cause: error,
    });
  }
}

/**
 * Verifies `object` completely and extracts its files into `options.into`. Every refusal is a
 * RunnerError of kind 'artifact' (ArtifactIncomplete, ArtifactCorrupt, ArtifactMismatch,
 * ArtifactUnsafe, ArtifactTooLarge); on any failure nothing is left in `into`.
 */
export async function readArtifact<K extends ArtifactKind = ArtifactKind>(
  store: ChunkStore,
  object: string,
  options: ReadArtifactOptions<K>,
): Promise<ExtractedArtifact<ManifestOfKind<K>>> {
  const { expect } = options;
  const manifest = await readManifest(store, object, expect);
  const fail = failure(store, object, manifest.kind);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_ARTIFACT_BYTES;
  const filesBytes = manifest.files.reduce((sum, file) => sum + file.bytes, 0);
  for (const [what, bytes] of [['a payload', manifest.totalBytes], ['files', filesBytes]] as const) {
    if (bytes > maxBytes) throw tooLarge(store, object, manifest.kind, `declares ${what} of ${bytes} bytes`, maxBytes);
  }

  const problem = chunkSetProblem(await store.listChunks(object), manifest.chunkCount);
  if (problem) throw fail(problem.missing ? 'ArtifactIncomplete' : 'ArtifactCorrupt', problem.text);

  const into = resolve(options.into);
  const created = await prepareExtractDir(into);
  try {
    const paths = await extractVerified(store, object, manifest, into, fail);
    return { manifest: manifest as ManifestOfKind<K>, paths };
  } catch (error) {
    await removeExtracted(into, created);
    throw error;
  }
}

/**
 * Retention: keeps the `keep` newest complete objects (in the store's oldest-first order) and
 * deletes older complete ones, and partial ones older than the newest complete one. Partial
 * objects newer than that may be writes in progress and stay.
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

// ---- writing ----

function checkChunkBytes(chunkBytes: number): number {
  if (!Number.isInteger(chunkBytes) || chunkBytes < MIN_CHUNK_BYTES || chunkBytes > MAX_CHUNK_BYTES) {
    throw usageError(
      'InvalidChunkBytes',
      `chunk size ${chunkBytes} is out of range: use a whole number of bytes from ${MIN_CHUNK_BYTES} to ${MAX_CHUNK_BYTES} (default ${DEFAULT_CHUNK_BYTES})`,
    );
  }
  return chunkBytes;
}

function checkFiles(files: readonly ArtifactFile[]) {
  if (files.length === 0) throw internalError('an artifact needs at least one file');
  const seen = new Set<string>();
  for (const file of files) {
    if (!ArtifactFileName.safeParse(file.name).success) throw internalError(`"${file.name}" is not a valid artifact file name`);
    if (seen.has(file.name)) throw internalError(`file "${file.name}" is given twice`);
    seen.add(file.name);
  }
}

/** Adds each file as a tar entry, hashing it on the way; `entries` receives what the manifest lists. */
async function packFiles(pack: tar.Pack, files: readonly ArtifactFile[], entries: FileEntry[]): Promise<void> {
  for (const file of files) {
    const hash = createHash('sha256');
    if ('data' in file) {
      hash.update(file.data);
      await new Promise<void>((done, failed) =>
        pack.entry({ ...ENTRY_DEFAULTS, name: file.name, size: file.data.length }, file.data, (error) => (error ? failed(error) : done())),
      );
      entries.push({ name: file.name, bytes: file.data.length, sha256: hash.digest('hex') });
      continue;
    }
    const { size } = await stat(file.path);
    // tar-stream itself fails the entry if the file grows or shrinks while it is read.
    const entry = pack.entry({ ...ENTRY_DEFAULTS, name: file.name, size });
    await pipeline(createReadStream(file.path), hashing(hash), entry);
    entries.push({ name: file.name, bytes: size, sha256: hash.digest('hex') });
  }
  pack.finalize();
}

/** Cuts the gzipped stream into chunks of exactly chunkBytes (the last one shorter) and stores them in order. */
async function storeChunks(
  gzipped: AsyncIterable<Buffer>,
  store: ChunkStore,
  object: string,
  { chunkBytes, maxBytes, kind }: { chunkBytes: number; maxBytes: number; kind: ArtifactKind },
  chunks: ChunkEntry[],
  whole: Hash,
): Promise<void> {
  let stored = 0;
  const put = async (data: Buffer) => {
    const index = chunks.length;
    stored += data.length;
    if (stored > maxBytes) throw tooLarge(store, object, kind, `would have a payload of more than ${maxBytes} bytes`, maxBytes);
    if (index >= MAX_CHUNKS) {
      throw usageError(
        'InvalidChunkBytes',
        `"${object}" needs more than ${MAX_CHUNKS} chunks of ${chunkBytes} bytes: raise the chunk size`,
      );
    }
    await store.putChunk(object, index, data);
    chunks.push({ index, bytes: data.length, sha256: sha256Hex(data) });
  };
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const piece of gzipped) {
    whole.update(piece);
    pending.push(piece);
    pendingBytes += piece.length;
    while (pendingBytes >= chunkBytes) {
      const joined = Buffer.concat(pending);
      await put(joined.subarray(0, chunkBytes));
      pending = [joined.subarray(chunkBytes)];
      pendingBytes -= chunkBytes;
    }
  }
  if (pendingBytes > 0) await put(Buffer.concat(pending));
}

/** Reads every chunk back: a store that lost or changed one must not get a manifest vouching for it. */
async function verifyStoredChunks(store: ChunkStore, object: string, chunks: readonly ChunkEntry[]) {
  const unverified = (text: string) =>
    new RunnerError({
      kind: 'io',
      reason: 'ArtifactWriteUnverified',
      message: `wrote "${object}" to ${store.location} but ${text}: the store lost or changed data; check it and run again`,
      detail: { location: store.location, object },
    });
  const setProblem = chunkSetProblem(await store.listChunks(object), chunks.length);
  if (setProblem) throw unverified(setProblem.text);
  for (const chunk of chunks) {
    const problem = chunkProblem(await store.getChunk(object, chunk.index, chunk.bytes), chunk);
    if (problem) throw unverified(problem);
  }
}

// ---- reading ----

async function readManifest<K extends ArtifactKind>(
  store: ChunkStore,
  object: string,
  expect: ArtifactExpectation<K> | undefined,
): Promise<ArtifactManifest> {
  const fail = failure(store, object, expect?.kind);
  const raw = await store.getManifest(object);
  if (!raw) {
    throw fail(
      'ArtifactIncomplete',
      'has no manifest: it is absent, or partial (its writer stopped before the manifest, which is written last)',
    );
  }
  if (raw.length > MAX_MANIFEST_BYTES) throw fail('ArtifactCorrupt', `has a manifest of more than ${MAX_MANIFEST_BYTES} bytes, more than one of ${MAX_CHUNKS} chunks takes`);
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    throw fail('ArtifactCorrupt', 'has a manifest that is not valid JSON');
  }
  const { apiVersion, kind } = (json ?? {}) as { apiVersion?: unknown; kind?: unknown };
  if (apiVersion !== ARTIFACT_API_VERSION) {
    throw fail('ArtifactMismatch', `has manifest apiVersion ${JSON.stringify(apiVersion)}; this runner reads ${ARTIFACT_API_VERSION}`);
  }
  if (expect && kind !== expect.kind) {
    throw fail('ArtifactMismatch', `is a ${JSON.stringify(kind)}, not a ${expect.kind}`, undefined, { found: kind });
  }
  const parsed = ArtifactManifest.safeParse(json);
  if (!parsed.success) throw fail('ArtifactCorrupt', `has an invalid manifest: ${z.prettifyError(parsed.error)}`);
  const manifest = parsed.data;

  const found = manifest as { planHash?: string; inputsHash?: string };
  if (expect?.planHash !== undefined && found.planHash !== expect.planHash) {
    throw fail(
      'ArtifactMismatch',
      `holds plan ${found.planHash}, not the approved plan ${expect.planHash}`,
      'Approve the hash of the plan in this artifact, or run a new plan and approve that one.',
      { expected: expect.planHash, found: found.planHash },
    );
  }
  if (expect?.inputsHash !== undefined && found.inputsHash !== expect.inputsHash) {
    throw fail(
      'ArtifactMismatch',
      `was made from inputs ${found.inputsHash ?? '(not recorded)'}, but the inputs given now hash to ${expect.inputsHash}`,
      'Run a new plan from the current inputs.',
      { expected: expect.inputsHash, found: found.inputsHash },
    );
  }
  return manifest;
}

/** Streams the verified chunks through gunzip and tar into `into`; returns the path of each file. */
async function extractVerified(
  store: ChunkStore,
  object: string,
  manifest: ArtifactManifest,
  into: string,
  fail: Failure,
): Promise<Record<string, string>> {
  const listed = new Map(manifest.files.map((file) => [file.name, file]));
  const paths = new Map<string, string>(); // a Map: a file may be called "constructor"

  // Each chunk is checked before a single byte of it reaches gunzip.
  async function* verifiedChunks() {
    const whole = createHash('sha256');
    for (const chunk of manifest.chunks) {
      const data = await store.getChunk(object, chunk.index, chunk.bytes);
      const problem = chunkProblem(data, chunk);
      if (problem) throw fail('ArtifactCorrupt', problem, undefined, { chunk: chunk.index });
      whole.update(data);
      yield data;
    }
    if (whole.digest('hex') !== manifest.sha256) {
      throw fail('ArtifactCorrupt', 'has chunks that together do not match the manifest sha256');
    }
  }

  // Stops a decompression bomb: the tar can be no bigger than its listed files plus headers.
  const tarLimit = manifest.files.reduce((sum, file) => sum + TAR_ENTRY_OVERHEAD + roundUpToBlock(file.bytes), TAR_TRAILER_ALLOWANCE);
  async function* limited(tarBytes: AsyncIterable<Buffer>) {
    let total = 0;
    for await (const piece of tarBytes) {
      total += piece.length;
      if (total > tarLimit) throw fail('ArtifactUnsafe', `unpacks to more than the ${tarLimit} bytes its manifest allows`);
      yield piece;
    }
  }

  const extract = tar.extract();
  // The generator as the source (not Readable.from, which reads 16 chunks ahead): one chunk at a time.
  const feeding = pipeline(verifiedChunks(), createGunzip(), limited, extract);
  try {
    for await (const entry of extract) {
      const file = checkEntry(entry.header, listed, paths, fail);
      paths.set(file.name, await writeEntry(entry, file, join(into, file.name), fail));
    }
    await feeding;
  } catch (error) {
    await feeding.catch(() => undefined);
    if (error instanceof RunnerError) throw error;
    throw fail('ArtifactCorrupt', `is not a valid gzipped tar: ${messageOf(error)}`);
  }

  const missing = manifest.files.filter((file) => !paths.has(file.name)).map((file) => file.name);
  if (missing.length > 0) throw fail('ArtifactCorrupt', `lacks listed file(s) ${missing.map((name) => `"${name}"`).join(', ')}`);
  return Object.fromEntries(paths);
}

const TAR_BLOCK = 512;
const roundUpToBlock = (bytes: number) => Math.ceil(bytes / TAR_BLOCK) * TAR_BLOCK;
// A header block, and a pax header with its data for long names: generous for what tar-stream writes.
const TAR_ENTRY_OVERHEAD = 4 * TAR_BLOCK;
const TAR_TRAILER_ALLOWANCE = 20 * TAR_BLOCK;

/** Refuses any entry but a plain, listed, first-seen file of the listed size. */
function checkEntry(header: tar.Header, listed: Map<string, FileEntry>, extracted: Map<string, string>, fail: Failure): FileEntry {
  const { name, type } = header;
  // Judged on the header alone, before any of the entry's content is read.
  const refuse = (problem: string) => fail('ArtifactUnsafe', `has an unsafe entry "${name}": ${problem}`, undefined, { entry: name });
  if (type === 'directory') throw refuse('a directory (artifacts hold plain files only)');
  if (type !== 'file') throw refuse(`a ${type} (links, devices and FIFOs are never extracted)`);
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw refuse('an absolute path');
  if (name.split(/[\\/]/).includes('..')) throw refuse('a path that climbs out of the extraction directory');
  const file = listed.get(name);
  if (!file) throw refuse('not listed in the manifest');
  if (extracted.has(name)) throw refuse('a second entry with the same name');
  const size = header.size ?? 0;
  if (size > file.bytes) throw refuse(`${size} bytes, more than the ${file.bytes} the manifest lists`);
  if (size !== file.bytes) throw fail('ArtifactCorrupt', `has file "${name}" of ${size} bytes; the manifest lists ${file.bytes}`);
  return file;
}

/** Writes one entry (checkEntry passed: the parser yields exactly the listed number of bytes). */
async function writeEntry(entry: TarEntry, file: FileEntry, path: string, fail: Failure): Promise<string> {
  const hash = createHash('sha256');
  try {
    await pipeline(
      entry as AsyncIterable<Buffer>, // a streamx Readable, typed as yielding unknown
      hashing(hash),
      // 'wx': never follow or reuse something already at the path.
      createWriteStream(path, { flags: 'wx', mode: 0o600 }),
    );
  } catch (error) {
    if (error instanceof RunnerError || !isFsError(error)) throw error;
    throw new RunnerError({
      kind: 'io',
      reason: 'ExtractFailed',
      message: `cannot write ${path}: ${messageOf(error)}. Check that the directory is writable and has free space`,
      detail: { path },
      cause: error,
    });
  }
  if (hash.digest('hex') !== file.sha256) {
    throw fail('ArtifactCorrupt', `has file "${file.name}" whose sha256 differs from the manifest`);
  }
  return path;
}

/** Returns the directory to remove on failure: the topmost one created here, if any. */
async function prepareExtractDir(into: string): Promise<string | undefined> {
  try {
    const created = await mkdir(into, { recursive: true, mode: 0o700 });
    if (created) return created;
    if ((await readdir(into)).length > 0) {
      throw usageError('ExtractDirNotEmpty', `cannot extract into ${into}: it is not empty; give a new or empty directory`);
    }
    await chmod(into, 0o700);
    return undefined;
  } catch (error) {
    if (error instanceof RunnerError) throw error;
    throw new RunnerError({
      kind: 'io',
      reason: 'ExtractFailed',
      message: `cannot prepare ${into} for extraction: ${messageOf(error)}`,
      detail: { path: into },
      cause: error,
    });
  }
}

async function removeExtracted(into: string, created: string | undefined) {
  if (created) {
    await rm(created, { recursive: true, force: true });
    return;
  }
  // The directory was empty when extraction began: everything in it is ours.
  for (const name of await readdir(into).catch(() => [])) await rm(join(into, name), { recursive: true, force: true });
}

// ---- checks shared by both directions ----

/** What is wrong with the set of chunk indices present, if anything; `missing` tells incomplete from corrupt. */
function chunkSetProblem(present: readonly number[], expected: number): { text: string; missing: boolean } | undefined {
  const have = new Set(present);
  const missing = Array.from({ length: expected }, (_, index) => index).filter((index) => !have.has(index));
  if (missing.length > 0) return { text: `lacks chunk(s) ${summarize(missing)} of ${expected}`, missing: true };
  const extra = present.filter((index) => index >= expected);
  if (extra.length > 0) return { text: `has chunk(s) ${summarize(extra)} beyond the ${expected} listed`, missing: false };
  return undefined;
}

function chunkProblem(data: Buffer, chunk: ChunkEntry): string | undefined {
  // A store reads at most one byte more than listed: a longer chunk is never read whole.
  if (data.length > chunk.bytes) return `has chunk ${chunk.index} of more than the ${chunk.bytes} bytes the manifest lists`;
  if (data.length !== chunk.bytes) return `has chunk ${chunk.index} of ${data.length} bytes; the manifest lists ${chunk.bytes}`;
  if (sha256Hex(data) !== chunk.sha256) return `has chunk ${chunk.index} whose sha256 differs from the manifest`;
  return undefined;
}

const summarize = (indices: readonly number[]) =>
  indices.length <= 10 ? indices.join(', ') : `${indices.slice(0, 10).join(', ')} and ${indices.length - 10} more`;

// ---- small helpers ----

type Failure = (reason: FailureReason, problem: string, fix?: string, detail?: Record<string, unknown>) => RunnerError;

const LABELS: Record<ArtifactKind, string> = { PlanArtifact: 'plan artifact', StateBackup: 'state backup' };
const FIXES: Record<ArtifactKind, string> = {
  PlanArtifact: 'Run a new plan and approve it.',
  StateBackup: 'Restore from another complete backup.',
};

/** Errors about one object, each saying which object, what is wrong and what to do. */
function failure(store: ChunkStore, object: string, kind: ArtifactKind | undefined): Failure {
  const label = kind ? LABELS[kind] : 'artifact';
  return (reason, problem, fix, detail) =>
    new RunnerError({
      kind: 'artifact',
      reason,
      message: `${label} "${object}" in ${store.location} ${problem}. ${fix ?? (kind ? FIXES[kind] : 'Write it again.')}`,
      detail: { location: store.location, object, ...detail },
    });
}

function hashing(hash: Hash) {
  return async function* (source: AsyncIterable<Buffer>) {
    for await (const piece of source) {
      hash.update(piece);
      yield piece;
    }
  };
}

/** Over the limit a reader accepts (a reader refuses it before reading a chunk, a writer before its manifest), with the setting that raises it. */
function tooLarge(store: ChunkStore, object: string, kind: ArtifactKind, problem: string, maxBytes: number): RunnerError {
  return new RunnerError({
    kind: 'artifact',
    reason: 'ArtifactTooLarge',
    message: `${LABELS[kind]} "${object}" in ${store.location} ${problem}, more than the ${maxBytes} an artifact may hold. If it is genuine, raise --max-artifact-bytes (CAPTF_MAX_ARTIFACT_BYTES)`,
    detail: { location: store.location, object, maxBytes },
  });
}

const isAbort = (error: unknown) => (error as Error | undefined)?.name === 'AbortError';

const isFsError = (error: unknown) => typeof (error as NodeJS.ErrnoException | undefined)?.syscall === 'string';

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

const internalError = (message: string) => new RunnerError({ kind: 'internal', reason: 'InternalError', message });

function parseOrInternal<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw internalError(`invalid ${what}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
