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
import type { ChunkStore } from '../../src/store/store.ts';
import { peakLiveGrowth } from '../support/live-memory.ts';
import { backupMeta } from './stores.support.ts';
import { tempDir } from '../support/tf-modules.ts';

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

/**
 * A store that samples live memory at every MiB of chunks written or read: the run is sampled
 * however fast it goes, and where a payload held would be largest (each sample is two full
 * collections of the whole process: tens of ms).
 */
function sampledEveryMiB(inner: DirStore, sample: () => void): ChunkStore {
  let chunks = 0;
  const counted = () => ++chunks % (MiB / CHUNK_BYTES) === 0 && sample();
  return Object.assign(Object.create(inner) as DirStore, {
    create: async (object: string) => {
      const write = await inner.create(object);
      return {
        ...write,
        putChunk: async (index: number, data: Buffer) => {
          await write.putChunk(index, data);
          counted();
        },
      };
    },
    getChunk: async (object: string, index: number, limitBytes?: number) => {
      const data = await inner.getChunk(object, index, limitBytes);
      counted();
      return data;
    },
  });
}

/** The peak growth of live memory while a state of `bytes` is written to the store and read back. */
async function roundTripGrowth(root: string, bytes: number): Promise<number> {
  const dir = join(root, String(bytes));
  const source = join(root, `${bytes}.tfstate`);
  await writeLargeFile(source, bytes);
  // The progress samples do the work; the timer's (under load, many) are a backstop.
  const { growth } = await peakLiveGrowth(async (sample) => {
    const store = sampledEveryMiB(new DirStore(join(dir, 'store')), sample);
    const manifest = await writeArtifact(store, 'big', [{ name: 'terraform.tfstate', path: source }], backupMeta(), {
      chunkBytes: CHUNK_BYTES,
    });
    const { paths } = await readArtifact(store, 'big', { into: join(dir, 'out') });
    assert.equal((await stat(paths['terraform.tfstate']!)).size, bytes);
    assert.ok(manifest.chunkCount >= bytes / CHUNK_BYTES, `${manifest.chunkCount} chunks`);
  }, 2000);
  return growth;
}

// The 64 MiB state of the past is the benchmark's volume; two sizes prove the property: holding the
// payload (written or read) would add the 3 MiB between them, streaming adds well under 1 MiB (as it
// did between 2 and 8 MiB, in twice the time: 1 and 4 MiB are 16 and 64 chunks, sampled every 16).
it('streams: the memory of writing and reading a state does not grow with its size (1 MiB and 4 MiB)', async (t) => {
  const root = await tempDir(t);
  const small = await roundTripGrowth(root, MiB);
  const large = await roundTripGrowth(root, 4 * MiB);
  t.diagnostic(`live memory grew ${(small / MiB).toFixed(1)} MiB for 1 MiB, ${(large / MiB).toFixed(1)} MiB for 4 MiB`);
  assert.ok(
    large - small < 1.5 * MiB,
    `3 MiB more state added ${((large - small) / MiB).toFixed(1)} MiB of live memory`,
  );
});
