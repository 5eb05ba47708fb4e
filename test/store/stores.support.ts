// Shared fixtures for the store tests: metadata, and artifacts crafted by hand (a tar
// the runner would never write, wrapped in chunks and a manifest that vouch for it).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { RunnerError } from '../../src/errors.ts';
import { ArtifactManifest, type ArtifactMeta, type FileEntry } from '../../src/store/manifest.ts';
import type { ChunkStore } from '../../src/store/store.ts';

export const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

export const SAMPLE_INPUTS_HASH = sha256('inputs');

export function planMeta(
  planFileContent: Buffer,
  planFile = 'plan.tfplan',
): Extract<ArtifactMeta, { kind: 'PlanArtifact' }> {
  return {
    kind: 'PlanArtifact',
    terraformVersion: '1.11.4',
    op: 'plan',
    planFile,
    planHash: sha256(planFileContent),
    inputsHash: SAMPLE_INPUTS_HASH,
    stateLineage: 'c0ffee00-0000-4000-8000-000000000000',
    backend: sha256('backend'),
  };
}

export const backupMeta = (stateFile = 'terraform.tfstate'): ArtifactMeta => ({
  kind: 'StateBackup',
  terraformVersion: '1.11.4',
  op: 'apply',
  stateFile,
  serial: 7,
  lineage: '3f2a9c1e-0000-4000-8000-000000000000',
  inputsHash: SAMPLE_INPUTS_HASH,
});

export type TarEntrySpec = { header: tar.Header | (Partial<tar.Header> & { name: string }); data?: Buffer };

export async function buildTar(entries: readonly TarEntrySpec[]): Promise<Buffer> {
  const pack = tar.pack();
  const parts: Buffer[] = [];
  const collected = (async () => {
    for await (const part of pack) parts.push(part as Buffer);
  })();
  for (const { header, data } of entries) {
    await new Promise<void>((done, failed) => {
      const callback = (error?: Error | null) => (error ? failed(error) : done());
      if (data) pack.entry({ type: 'file', mode: 0o600, ...header, size: data.length }, data, callback);
      else pack.entry(header, callback); // links, devices, directories: no body
    });
  }
  pack.finalize();
  await collected;
  return Buffer.concat(parts);
}

/**
 * Stores `payload` (the gzipped tar) as a StateBackup whose manifest is internally consistent and
 * matches every chunk, so only the tar's content can be refused.
 */
export async function storeCraftedBackup(
  store: ChunkStore,
  object: string,
  options: { tar: Buffer; files: FileEntry[]; chunkBytes?: number; gzipped?: Buffer },
): Promise<ArtifactManifest> {
  const payload = options.gzipped ?? gzipSync(options.tar);
  const chunkBytes = options.chunkBytes ?? payload.length;
  const chunks = [];
  const write = await store.create(object);
  for (let offset = 0, index = 0; offset < payload.length; offset += chunkBytes, index++) {
    const data = payload.subarray(offset, offset + chunkBytes);
    await write.putChunk(index, data);
    chunks.push({ index, bytes: data.length, sha256: sha256(data) });
  }
  const manifest = ArtifactManifest.parse({
    ...backupMeta(options.files[0]!.name),
    apiVersion: 'runner.captf.io/v1',
    object,
    chunks,
    chunkCount: chunks.length,
    totalBytes: payload.length,
    sha256: sha256(payload),
    files: options.files,
    createdAt: new Date().toISOString(),
  });
  await write.commit(Buffer.from(JSON.stringify(manifest)));
  return manifest;
}

/** Writes an object of these chunks and manifest bytes (whatever they say) through the store's own write. */
export async function putObject(
  store: ChunkStore,
  object: string,
  chunks: readonly Buffer[],
  manifest = Buffer.from('{}'),
): Promise<void> {
  const write = await store.create(object);
  for (const [index, data] of chunks.entries()) await write.putChunk(index, data);
  await write.commit(manifest);
}

/** Chunks of a write that died before its manifest (neither committed nor aborted): a partial object, where the store can hold one. */
export async function putPartial(store: ChunkStore, object: string, chunks: readonly Buffer[]): Promise<void> {
  const write = await store.create(object);
  for (const [index, data] of chunks.entries()) await write.putChunk(index, data);
}

export const fileEntry = (name: string, data: Buffer): FileEntry => ({
  name,
  bytes: data.length,
  sha256: sha256(data),
});

/** Asserts that `promise` rejects with a RunnerError of this kind and reason; returns it for more checks. */
export async function rejectsWith(
  promise: Promise<unknown>,
  kind: string,
  reason: string,
  message?: RegExp,
): Promise<RunnerError> {
  let caught: unknown;
  await promise.then(
    () => assert.fail(`expected a ${kind}/${reason} RunnerError, but it succeeded`),
    (error: unknown) => {
      caught = error;
    },
  );
  assert.ok(caught instanceof RunnerError, `expected a RunnerError, got ${String(caught)}`);
  assert.equal(`${caught.kind}/${caught.reason}`, `${kind}/${reason}`, caught.message);
  if (message) assert.match(caught.message, message);
  return caught;
}
