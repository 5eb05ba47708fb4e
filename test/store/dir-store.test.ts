import assert from 'node:assert/strict';
import { mkdir, readdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DirStore, openDirObject } from '../../src/store/dir-store.ts';
import type { ChunkStore, ObjectWrite } from '../../src/store/store.ts';
import { storeContract } from './store-contract.support.ts';
import { putObject, putPartial, rejectsWith } from './stores.support.ts';
import { tempDir } from '../support/tf-modules.ts';

const chunkPath = (store: DirStore, object: string, index: number) =>
  join(store.location, object, `chunk-${String(index).padStart(5, '0')}`);

storeContract('directory', {
  partialObjects: true,
  async newStore(t) {
    const store = new DirStore(join(await tempDir(t), 'store'));
    let corrupted: number | undefined;
    // A disk that changes what it is given: the chunk as stored differs from the chunk as sent.
    const changing: ChunkStore = Object.assign(Object.create(store) as DirStore, {
      create: async (object: string): Promise<ObjectWrite> => {
        const write = await store.create(object);
        return {
          ...write,
          putChunk: (index: number, data: Buffer) =>
            write.putChunk(
              index,
              index === corrupted ? Buffer.concat([Buffer.from([data[0]! ^ 0xff]), data.subarray(1)]) : data,
            ),
        };
      },
    });
    return {
      store: changing,
      tamper: {
        setChunk: (object, index, data) => writeFile(chunkPath(store, object, index), data),
        removeChunk: (object, index) => unlink(chunkPath(store, object, index)),
        setManifest: (object, data) => writeFile(join(store.location, object, 'manifest.json'), data),
        corruptChunkWrites: async (index) => void (corrupted = index),
      },
    };
  },
});

/** Sets an object's write time (its manifest if complete, else its directory) to `seconds` after the epoch. */
async function ageObject(store: DirStore, object: string, seconds: number) {
  const dir = join(store.location, object);
  const manifest = join(dir, 'manifest.json');
  const target = await stat(manifest).then(
    () => manifest,
    () => dir,
  );
  await utimes(target, seconds, seconds);
}

describe('DirStore', () => {
  it('lays an object out as chunk-NNNNN files and a manifest.json, all private', async (t) => {
    const store = new DirStore(join(await tempDir(t), 'store'));
    const write = await store.create('obj');
    await write.putChunk(0, Buffer.from('zero'));
    await write.putChunk(12, Buffer.from('twelve'));
    assert.equal(await store.getManifest('obj'), undefined);
    await write.commit(Buffer.from('{}'));

    const dir = join(store.location, 'obj');
    assert.deepEqual((await readdir(dir)).sort(), ['chunk-00000', 'chunk-00012', 'manifest.json']);
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    for (const name of await readdir(dir)) assert.equal((await stat(join(dir, name))).mode & 0o777, 0o600, name);
    assert.deepEqual(await store.getChunk('obj', 12), Buffer.from('twelve'));
    assert.deepEqual(await store.getManifest('obj'), Buffer.from('{}'));
  });

  it('writes a manifest exclusively (a synced temp file linked into place), leaving no temp file', async (t) => {
    const store = new DirStore(await tempDir(t));
    const first = await store.create('obj');
    const second = await store.create('obj');
    await first.commit(Buffer.from('{"first":true}'));
    await rejectsWith(second.commit(Buffer.from('{"second":true}')), 'artifact', 'ArtifactExists');
    assert.deepEqual(await store.getManifest('obj'), Buffer.from('{"first":true}'));
    assert.deepEqual(await readdir(join(store.location, 'obj')), ['manifest.json']);
  });

  it('lists only chunk files, in index order, whatever else lies in the directory', async (t) => {
    const store = new DirStore(await tempDir(t));
    const write = await store.create('obj');
    for (const index of [3, 0, 1]) await write.putChunk(index, Buffer.from([index]));
    const dir = join(store.location, 'obj');
    await writeFile(join(dir, '.chunk-00004.abc.tmp'), 'half written');
    await writeFile(join(dir, 'chunk-5'), 'not a chunk name');
    assert.deepEqual(await store.listChunks('obj'), [0, 1, 3]);
    assert.deepEqual(await store.listChunks('absent'), []);
  });

  it('lists objects oldest first, complete or not, ignoring stray files and hidden dirs', async (t) => {
    const store = new DirStore(await tempDir(t));
    await putPartial(store, 'newest-partial', [Buffer.from('x')]);
    await putObject(store, 'old-complete', [Buffer.from('x')]);
    await putObject(store, 'mid-complete', [Buffer.from('x')]);
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

  it('turns a root that is not a directory into an io error naming the path', async (t) => {
    const root = join(await tempDir(t), 'a-file');
    await writeFile(root, 'x');
    const store = new DirStore(root);
    await rejectsWith(store.create('obj'), 'io', 'StoreReadFailed', new RegExp(`${root}.*ENOTDIR`));
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
