// Reading a chunked artifact, verified at every step: the manifest (shape, kind, what it must
// hold), the chunk set, each chunk (size, sha256) as it streams, then the whole payload's sha256;
// artifact-extract.ts unpacks what passes. A writer reads back with the same checks.
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import * as z from '../schemas/zod.ts';
import { sha256Hex } from '../util/sha256.ts';
import { failure, tooLarge, type Failure } from './artifact-errors.ts';
import { extractFiles, prepareExtractDir, removeExtracted } from './artifact-extract.ts';
import { DEFAULT_MAX_ARTIFACT_BYTES, MAX_CHUNKS, MAX_MANIFEST_BYTES } from '../schemas/limits.ts';
import {
  ARTIFACT_API_VERSION,
  ArtifactManifest,
  type ArtifactKind,
  type ChunkEntry,
  type ManifestOfKind,
} from './manifest.ts';
import type { ChunkStore } from './store.ts';

interface ArtifactExpectation<K extends ArtifactKind> {
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
  for (const [what, bytes] of [
    ['a payload', manifest.totalBytes],
    ['files', filesBytes],
  ] as const) {
    if (bytes > maxBytes) throw tooLarge(store, object, manifest.kind, `declares ${what} of ${bytes} bytes`, maxBytes);
  }

  const problem = chunkSetProblem(await store.listChunks(object), manifest.chunkCount);
  if (problem) throw fail(problem.missing ? 'ArtifactIncomplete' : 'ArtifactCorrupt', problem.text);

  const into = resolve(options.into);
  const created = await prepareExtractDir(into);
  try {
    const paths = await extractFiles(verifiedChunks(store, object, manifest, fail), manifest, into, fail);
    return { manifest: manifest as ManifestOfKind<K>, paths };
  } catch (error) {
    await removeExtracted(into, created);
    throw error;
  }
}

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
  if (raw.length > MAX_MANIFEST_BYTES)
    throw fail(
      'ArtifactCorrupt',
      `has a manifest of more than ${MAX_MANIFEST_BYTES} bytes, more than one of ${MAX_CHUNKS} chunks takes`,
    );
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    throw fail('ArtifactCorrupt', 'has a manifest that is not valid JSON');
  }
  const { apiVersion, kind } = (json ?? {}) as { apiVersion?: unknown; kind?: unknown };
  if (apiVersion !== ARTIFACT_API_VERSION) {
    throw fail(
      'ArtifactMismatch',
      `has manifest apiVersion ${JSON.stringify(apiVersion)}; this runner reads ${ARTIFACT_API_VERSION}`,
    );
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

/** The chunks in order, each checked before a single byte of it is yielded; then the whole payload's sha256. */
async function* verifiedChunks(
  store: ChunkStore,
  object: string,
  manifest: ArtifactManifest,
  fail: Failure,
): AsyncGenerator<Buffer> {
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

/** What is wrong with the set of chunk indices present, if anything; `missing` tells incomplete from corrupt. */
export function chunkSetProblem(
  present: readonly number[],
  expected: number,
): { text: string; missing: boolean } | undefined {
  const have = new Set(present);
  const missing = Array.from({ length: expected }, (_, index) => index).filter((index) => !have.has(index));
  if (missing.length > 0) return { text: `lacks chunk(s) ${summarize(missing)} of ${expected}`, missing: true };
  const extra = present.filter((index) => index >= expected);
  if (extra.length > 0)
    return { text: `has chunk(s) ${summarize(extra)} beyond the ${expected} listed`, missing: false };
  return undefined;
}

/** What is wrong with one chunk as read, if anything: its size or its sha256. */
function chunkProblem(data: Buffer, chunk: ChunkEntry): string | undefined {
  // A store reads at most one byte more than listed: a longer chunk is never read whole.
  if (data.length > chunk.bytes)
    return `has chunk ${chunk.index} of more than the ${chunk.bytes} bytes the manifest lists`;
  return heldChunkProblem({ index: chunk.index, bytes: data.length, sha256: () => sha256Hex(data) }, chunk);
}

/** What is wrong with a chunk as a store holds it (its size, and its sha256, computed only when the size is right), if anything. */
export function heldChunkProblem(
  held: { index: number; bytes: number; sha256: string | (() => string) },
  chunk: ChunkEntry,
): string | undefined {
  if (held.bytes !== chunk.bytes)
    return `has chunk ${chunk.index} of ${held.bytes} bytes; the manifest lists ${chunk.bytes}`;
  const sha256 = typeof held.sha256 === 'string' ? held.sha256 : held.sha256();
  if (sha256 !== chunk.sha256) return `has chunk ${chunk.index} whose sha256 differs from the manifest`;
  return undefined;
}

const summarize = (indices: readonly number[]) =>
  indices.length <= 10 ? indices.join(', ') : `${indices.slice(0, 10).join(', ')} and ${indices.length - 10} more`;
