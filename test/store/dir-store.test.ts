import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DirStore, openDirObject } from '../../src/store/dir-store.ts';
import { rejectsWith, tempDir } from './helpers.ts';

/** Sets an object's write time (its manifest if complete, else its directory) to `seconds` after the epoch. */
async function ageObject(store: DirStore, object: string, seconds: number) {
  const dir = join(store.location, object);
  const manifest = join(dir, 'manifest.json');
  const target = await stat(manifest).then(() => manifest, () => dir);
  await utimes(target, seconds, seconds);
}

describe('DirStore', () => {
  it('lays an object out as chunk-NNNNN files and a manifest.json, all private', async (t) => {
    const store = new DirStore(join(await tempDir(t), 'store'));
    await store.putChunk('obj', 0, Buffer.from('zero'));
    await store.putChunk('obj', 12, Buffer.from('twelve'));
    assert.equal(await store.getManifest('obj'), undefined);
    await store.putManifest('obj', Buffer.from('{}'));

    const dir = join(store.location, 'obj');
    assert.deepEqual((await readdir(dir)).sort(), ['chunk-00000', 'chunk-00012', 'manifest.json']);
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    for (const name of await readdir(dir)) assert.equal((await stat(join(dir, name))).mode & 0o777, 0o600, name);
    assert.deepEqual(await store.getChunk('obj', 12), Buffer.from('twelve'));
    assert.deepEqual(await store.getManifest('obj'), Buffer.from('{}'));
  });

  it('replaces a manifest whole (temp file and rename), leaving no temp file', async (t) => {
    const store = new DirStore(await tempDir(t));
    await store.putManifest('obj', Buffer.from('{"first":true}'));
    await store.putManifest('obj', Buffer.from('{"second":true}'));
    assert.equal(await readFile(join(store.location, 'obj', 'manifest.json'), 'utf8'), '{"second":true}');
    assert.deepEqual(await readdir(join(store.location, 'obj')), ['manifest.json']);
  });

  it('lists only chunk files, in index order, whatever else lies in the directory', async (t) => {
    const store = new DirStore(await tempDir(t));
    for (const index of [3, 0, 1]) await store.putChunk('obj', index, Buffer.from([index]));
    const dir = join(store.location, 'obj');
    await writeFile(join(dir, '.chunk-00004.abc.tmp'), 'half written');
    await writeFile(join(dir, 'chunk-5'), 'not a chunk name');
    assert.deepEqual(await store.listChunks('obj'), [0, 1, 3]);
    assert.deepEqual(await store.listChunks('absent'), []);
  });

  it('lists objects oldest first, complete or not, ignoring stray files and hidden dirs', async (t) => {
    const store = new DirStore(await tempDir(t));
    await store.putChunk('newest-partial', 0, Buffer.from('x'));
    await store.putChunk('old-complete', 0, Buffer.from('x'));
    await store.putManifest('old-complete', Buffer.from('{}'));
    await store.putChunk('mid-complete', 0, Buffer.from('x'));
    await store.putManifest('mid-complete', Buffer.from('{}'));
    await writeFile(join(store.location, 'stray-file'), 'x');
    await mkdir(join(store.location, '.hidden'));
    await ageObject(store, 'old-complete', 1_000);
    await ageObject(store, 'mid-complete', 2_000);
    await ageObject(store, 'newest-partial', 3_000);

    assert.deepEqual(await store.listObjects(), [
      { name: 'old-complete', complete: true, created: new Date(1_000_000).toISOString() },
      { name: 'mid-complete', complete: true, created: new Date(2_000_000).toISOString() },
      { name: 'newest-partial', complete: false, created: new Date(3_000_000).toISOString() },
    ]);
    assert.deepEqual(await new DirStore(join(store.location, 'absent')).listObjects(), []);
  });

  it('deletes an object whole, and a missing one without complaint', async (t) => {
    const store = new DirStore(await tempDir(t));
    await store.putChunk('obj', 0, Buffer.from('x'));
    await store.putManifest('obj', Buffer.from('{}'));
    await store.deleteObject('obj');
    await store.deleteObject('obj');
    assert.deepEqual(await readdir(store.location), []);
  });

  it('reports a chunk that vanished as an incomplete artifact', async (t) => {
    const store = new DirStore(await tempDir(t));
    await rejectsWith(store.getChunk('obj', 3), 'artifact', 'ArtifactIncomplete', /chunk 3 of "obj" is missing/);
  });

  for (const name of ['', '.', '..', '../escape', 'a/b', '.hidden', '-dash', 'x'.repeat(201)]) {
    it(`refuses the object name ${JSON.stringify(name.length > 20 ? `${name.slice(0, 5)}…` : name)}`, async (t) => {
      const store = new DirStore(await tempDir(t));
      await rejectsWith(store.putChunk(name, 0, Buffer.from('x')), 'usage', 'InvalidObjectName');
      await rejectsWith(store.getManifest(name), 'usage', 'InvalidObjectName');
    });
  }

  it('turns a root that is not a directory into an io error naming the path', async (t) => {
    const root = join(await tempDir(t), 'a-file');
    await writeFile(root, 'x');
    const store = new DirStore(root);
    await rejectsWith(store.putChunk('obj', 0, Buffer.from('x')), 'io', 'StoreWriteFailed', new RegExp(`${root}.*ENOTDIR`));
    await rejectsWith(store.listObjects(), 'io', 'StoreReadFailed', /ENOTDIR/);
  });
});

describe('openDirObject', () => {
  it('addresses one object by its own directory', async (t) => {
    const root = await tempDir(t);
    const { store, object } = openDirObject(join(root, 'plans', 'plan-abc/'));
    assert.equal(store.location, join(root, 'plans'));
    assert.equal(object, 'plan-abc');
  });

  it('refuses a directory whose name cannot be an object name', () => {
    assert.throws(() => openDirObject('/'), { kind: 'usage', reason: 'InvalidObjectName' });
    assert.throws(() => openDirObject('/tmp/.hidden'), { kind: 'usage', reason: 'InvalidObjectName' });
  });
});
