import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { readArtifact } from '../../src/store/artifact-read.ts';
import { writeArtifact } from '../../src/store/artifact-write.ts';
import { DirStore } from '../../src/store/dir-store.ts';
import { backupMeta, tempDir } from './helpers.ts';

// Big enough that buffering it whole would show, small enough to keep the suite fast (gzip runs
// at about 45 MB/s here).
const FILE_BYTES = 64 * 1024 * 1024;

// RSS counts garbage the collector has not reached yet (tens of MB, varying run to run), so the
// test measures what is live: JS heap plus Buffers, each sample right after a full collection.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
const liveBytes = () => {
  collectGarbage();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

/** Writes FILE_BYTES of incompressible data: random 1 MiB blocks, repeated too far apart for gzip's 32 KiB window. */
async function writeLargeFile(path: string) {
  const blocks = Array.from({ length: 8 }, () => randomBytes(1024 * 1024));
  const out = createWriteStream(path, { mode: 0o600 });
  for (let written = 0, i = 0; written < FILE_BYTES; written += 1024 * 1024, i++) {
    if (!out.write(blocks[i % blocks.length]!)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

it('streams: writing and reading a 64 MiB state never holds the payload in memory', async (t) => {
  const root = await tempDir(t);
  const source = join(root, 'terraform.tfstate');
  await writeLargeFile(source);
  const store = new DirStore(join(root, 'store'));

  const baseline = liveBytes();
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, liveBytes())), 100);
  const started = Date.now();
  try {
    const manifest = await writeArtifact(store, 'big', [{ name: 'terraform.tfstate', path: source }], backupMeta());
    const { paths } = await readArtifact(store, 'big', { into: join(root, 'out') });
    assert.equal((await stat(paths['terraform.tfstate']!)).size, FILE_BYTES);
    assert.ok(manifest.chunkCount > 90);
  } finally {
    clearInterval(sampler);
  }
  const growth = peak - baseline;
  t.diagnostic(`live memory grew ${(growth / 1e6).toFixed(1)} MB for ${(FILE_BYTES / 1e6).toFixed(0)} MB in ${Date.now() - started} ms`);
  // Measured: 5 to 20 MB (stream buffers, zlib state, Buffers freed late), where
  // holding the payload would add at least its whole size.
  assert.ok(growth < FILE_BYTES / 2, `live memory grew by ${growth} bytes`);
});
