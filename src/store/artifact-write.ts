// Writing a chunked artifact (a plan artifact or a state backup) to a ChunkStore:
//   files -> tar -> gzip -> chunks (put one by one) -> read back and verify -> manifest last
// Data streams through: at most a chunk or two is in memory, whatever the size of the files.
// contract/sections/artifacts.md is the same story for readers in other languages.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { RunnerError, usageError } from '../errors.ts';
import { hashing, sha256Hex } from '../util/sha256.ts';
import { internalError, messageOf, parseOrInternal, tooLarge } from './artifact-errors.ts';
import { chunkSetProblem, heldChunkProblem } from './artifact-read.ts';
import {
  DEFAULT_CHUNK_BYTES,
  DEFAULT_MAX_ARTIFACT_BYTES,
  MAX_CHUNK_BYTES,
  MAX_CHUNKS,
  MIN_CHUNK_BYTES,
} from '../schemas/limits.ts';
import {
  ARTIFACT_API_VERSION,
  ArtifactFileName,
  ArtifactManifest,
  ArtifactMetaSchema,
  type ArtifactKind,
  type ArtifactMeta,
  type ChunkEntry,
  type FileEntry,
} from './manifest.ts';
import type { ChunkStore, HeldChunk, ObjectWrite } from './store.ts';

/** A file to pack: from disk (streamed) or from memory. Extracted files are always 0600. */
export type ArtifactFile = { name: string } & ({ path: string } | { data: Buffer });

export interface WriteArtifactOptions {
  chunkBytes?: number;
  /** The most the files, and the payload, may hold (DEFAULT_MAX_ARTIFACT_BYTES): what a reader with the same setting accepts. */
  maxBytes?: number;
}

// Fixed tar header fields, so the same files always give the same payload.
const ENTRY_DEFAULTS = { type: 'file', mode: 0o600, mtime: new Date(0), uid: 0, gid: 0, uname: '', gname: '' } as const;

/**
 * Packs `files` into `object`, chunk by chunk, then writes the manifest: the object is complete
 * only once every chunk has been written and the store holds each intact. Refuses to overwrite a
 * complete object; leftovers of an earlier, unfinished write under the same name are replaced. On
 * failure the write is abandoned (what it wrote removed, best effort) and nothing is complete.
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

  const write = await store.create(object);

  try {
    // Refused before a chunk is written: an artifact no reader with the same setting would accept is no backup.
    const filesBytes = (
      await Promise.all(files.map(async (file) => ('data' in file ? file.data.length : (await stat(file.path)).size)))
    ).reduce((a, b) => a + b, 0);
    if (filesBytes > maxBytes)
      throw tooLarge(store, object, validMeta.kind, `would hold ${filesBytes} bytes of files`, maxBytes);
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
      storeChunks(gzipped, write, store, object, { chunkBytes, maxBytes, kind: validMeta.kind }, chunks, whole).catch(
        noteCause,
      ),
    );
    const [packed, stored] = await Promise.allSettled([packing, storing]);
    for (const side of [packed, stored]) if (side.status === 'rejected') throw cause ?? side.reason;

    verifyHeld(store, object, await write.held(), chunks);
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
    await write.commit(Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
    return manifest;
  } catch (error) {
    await write.abort().catch(() => undefined);
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
    if (!ArtifactFileName.safeParse(file.name).success)
      throw internalError(`"${file.name}" is not a valid artifact file name`);
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
        pack.entry({ ...ENTRY_DEFAULTS, name: file.name, size: file.data.length }, file.data, (error) =>
          error ? failed(error) : done(),
        ),
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
  write: ObjectWrite,
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
    if (stored > maxBytes)
      throw tooLarge(store, object, kind, `would have a payload of more than ${maxBytes} bytes`, maxBytes);
    if (index >= MAX_CHUNKS) {
      throw usageError(
        'InvalidChunkBytes',
        `"${object}" needs more than ${MAX_CHUNKS} chunks of ${chunkBytes} bytes: raise the chunk size`,
      );
    }
    await write.putChunk(index, data);
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

/**
 * After the commit and the retention that follows it, before a result names the object: the store
 * still holds it complete, with the manifest that was written. A store that deletes or replaces a
 * manifest at commit (a trigger, a lifecycle rule), or the retention of another run of the object
 * at the same time (`gone`: what that means for this object), is caught here, never left to the
 * reader the result sends to it.
 */
export async function confirmArtifact(store: ChunkStore, manifest: ArtifactManifest, gone: string): Promise<void> {
  const { object } = manifest;
  const held = await store.getManifest(object);
  let found: Partial<ArtifactManifest> | undefined;
  try {
    found = held && (JSON.parse(held.toString('utf8')) as Partial<ArtifactManifest>);
  } catch {
    found = {};
  }
  if (found && found.sha256 === manifest.sha256 && found.createdAt === manifest.createdAt) return;
  throw new RunnerError({
    kind: 'io',
    reason: 'ArtifactWriteUnverified',
    message: `wrote "${object}" to ${store.location}, but after its commit the store ${found ? 'holds another manifest under its name' : 'no longer holds it'}: ${gone}`,
    detail: { location: store.location, object },
  });
}

/** What the store holds must be what was written: a store that lost or changed a chunk must not get a manifest vouching for it. */
function verifyHeld(store: ChunkStore, object: string, held: readonly HeldChunk[], chunks: readonly ChunkEntry[]) {
  const unverified = (text: string) =>
    new RunnerError({
      kind: 'io',
      reason: 'ArtifactWriteUnverified',
      message: `wrote "${object}" to ${store.location} but ${text}: the store lost or changed data; check it and run again`,
      detail: { location: store.location, object },
    });
  const setProblem = chunkSetProblem(
    held.map((chunk) => chunk.index),
    chunks.length,
  );
  if (setProblem) throw unverified(setProblem.text);
  const byIndex = new Map(held.map((chunk) => [chunk.index, chunk]));
  for (const chunk of chunks) {
    const problem = heldChunkProblem(byIndex.get(chunk.index)!, chunk);
    if (problem) throw unverified(problem);
  }
}

const isAbort = (error: unknown) => (error as Error | undefined)?.name === 'AbortError';
