import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { it } from 'node:test';
import { readArtifact } from '../../src/store/artifact-read.ts';
import { writeArtifact } from '../../src/store/artifact-write.ts';
import { DirStore } from '../../src/store/dir-store.ts';
import { peakLiveGrowth } from '../support/live-memory.ts';
import { backupMeta, tempDir } from './helpers.ts';

const MiB = 1024 * 1024;
// Small chunks, so that a few MiB make as many chunks as a large state does with the default size.
const CHUNK_BYTES = 64 * 1024;

/** Writes `bytes` of incompressible data: random 1 MiB blocks, repeated too far apart for gzip's 32 KiB window. */
async function writeLargeFile(path: string, bytes: number) {
  const blocks = Array.from({ length: 4 }, () => randomBytes(MiB));
  const out = createWriteStream(path, { mode: 0o600 });
  for (let written = 0, i = 0; written < bytes; written += MiB, i++) {
    if (!out.write(blocks[i % blocks.length]!)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** The peak growth of live memory while a state of `bytes` is written to the store and read back. */
async function roundTripGrowth(root: string, bytes: number): Promise<number> {
  const dir = join(root, String(bytes));
  const source = join(root, `${bytes}.tfstate`);
  await writeLargeFile(source, bytes);
  const store = new DirStore(join(dir, 'store'));
  const { growth } = await peakLiveGrowth(async () => {
    const manifest = await writeArtifact(store, 'big', [{ name: 'terraform.tfstate', path: source }], backupMeta(), { chunkBytes: CHUNK_BYTES });
    const { paths } = await readArtifact(store, 'big', { into: join(dir, 'out') });
    assert.equal((await stat(paths['terraform.tfstate']!)).size, bytes);
    assert.ok(manifest.chunkCount >= bytes / CHUNK_BYTES, `${manifest.chunkCount} chunks`);
  });
  return growth;
}

// The 64 MiB state of the past is the benchmark's volume; two sizes prove the property: holding the
// payload would add the 12 MiB between them.
it('streams: the memory of writing and reading a state does not grow with its size (4 MiB and 16 MiB)', async (t) => {
  const root = await tempDir(t);
  const small = await roundTripGrowth(root, 4 * MiB);
  const large = await roundTripGrowth(root, 16 * MiB);
  t.diagnostic(`live memory grew ${(small / MiB).toFixed(1)} MiB for 4 MiB, ${(large / MiB).toFixed(1)} MiB for 16 MiB`);
  assert.ok(large - small < 6 * MiB, `12 MiB more state added ${((large - small) / MiB).toFixed(1)} MiB of live memory`);
});
