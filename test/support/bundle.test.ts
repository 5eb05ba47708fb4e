import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtRunner, builtSnapshotBlob, snapshotBlob, staleBundle } from './bundle.ts';
// @ts-expect-error -- a plain ESM script shared with the build, no type declarations
import { sourcesHash } from '../../scripts/build/sources-hash.mjs';

describe('the bundle the e2e tests run', () => {
  it('is refused without a record of its sources, or built from other sources, with the fix', async (t) => {
    const dist = await mkdtemp(join(tmpdir(), 'captf-dist-'));
    t.after(() => rm(dist, { recursive: true, force: true }));
    const current = 'c'.repeat(64);
    assert.match(staleBundle(current, dist)!, /no record of the sources it was built from .*run `npm run build`/);
    await writeFile(join(dist, 'sources.sha256'), `${'d'.repeat(64)}\n`);
    assert.match(staleBundle(current, dist)!, /built from other sources than this tree's .*run `npm run build`/);
    await writeFile(join(dist, 'sources.sha256'), `${current}\n`);
    assert.equal(staleBundle(current, dist), undefined);
  });

  it('the build records the hash of this tree (npm test builds first)', () => {
    assert.match(sourcesHash() as string, /^[0-9a-f]{64}$/);
    assert.ok(existsSync(builtRunner()));
  });

  it("the startup snapshot's blob is taken only when this node made it, else refused with the fix", async (t) => {
    const dist = await mkdtemp(join(tmpdir(), 'captf-dist-'));
    t.after(() => rm(dist, { recursive: true, force: true }));
    assert.match((snapshotBlob(dist) as { why: string }).why, /no startup snapshot .*run `npm run build`/);
    await mkdir(join(dist, 'snapshot'));
    await writeFile(join(dist, 'snapshot/node-version'), 'v19.0.0\n');
    assert.match(
      (snapshotBlob(dist) as { why: string }).why,
      new RegExp(
        `made by node v19\\.0\\.0 and these tests run node ${process.version.replaceAll('.', '\\.')}: run \`npm run build\` with this node`,
      ),
    );
    await writeFile(join(dist, 'snapshot/node-version'), `${process.version}\n`);
    assert.deepEqual(snapshotBlob(dist), { blob: join(dist, 'snapshot/captf-runner.blob') });
    assert.ok(existsSync(builtSnapshotBlob()));
  });
});
