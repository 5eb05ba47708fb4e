import assert from 'node:assert/strict';
import { utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pruneObjects } from '../../src/store/retention.ts';
import { DirStore } from '../../src/store/dir-store.ts';
import { putObject, putPartial, rejectsWith } from './stores.support.ts';
import { tempDir } from '../support/tf-modules.ts';

type Spec = { name: string; complete: boolean };

/** Objects written oldest first, one second apart (by their write times, not by real waiting). */
async function storeWith(t: Parameters<typeof tempDir>[0], specs: readonly Spec[]): Promise<DirStore> {
  const store = new DirStore(await tempDir(t));
  for (const [position, { name, complete }] of specs.entries()) {
    if (complete) await putObject(store, name, [Buffer.from(name)]);
    else await putPartial(store, name, [Buffer.from(name)]);
    const dir = join(store.location, name);
    const target = complete ? join(dir, 'manifest.json') : dir;
    await utimes(target, 1_000 + position, 1_000 + position);
  }
  return store;
}

const names = async (store: DirStore) => (await store.listObjects()).map((stored) => stored.name);

describe('pruneObjects', () => {
  const history: Spec[] = [
    { name: 'b-1', complete: true },
    { name: 'b-2', complete: false }, // a write that died
    { name: 'b-3', complete: true },
    { name: 'b-4', complete: true },
    { name: 'b-5', complete: false }, // maybe a write in progress
  ];

  it('keeps the N newest complete objects and partial ones newer than them', async (t) => {
    const store = await storeWith(t, history);
    assert.deepEqual(await pruneObjects(store, { keep: 2 }), { deleted: ['b-1', 'b-2'] });
    assert.deepEqual(await names(store), ['b-3', 'b-4', 'b-5']);
  });

  it('keeps everything complete when N covers it, still dropping dead partial writes', async (t) => {
    const store = await storeWith(t, history);
    assert.deepEqual(await pruneObjects(store, { keep: 10 }), { deleted: ['b-2'] });
  });

  it('keep 1 leaves only the newest complete object (and newer partial ones)', async (t) => {
    const store = await storeWith(t, history);
    await pruneObjects(store, { keep: 1 });
    assert.deepEqual(await names(store), ['b-4', 'b-5']);
  });

  it('never deletes a protected object, however old', async (t) => {
    const store = await storeWith(t, history);
    await pruneObjects(store, { keep: 1, protect: ['b-1'] });
    assert.deepEqual(await names(store), ['b-1', 'b-4', 'b-5']);
  });

  it('deletes no partial object when nothing is complete yet', async (t) => {
    const store = await storeWith(t, [
      { name: 'b-1', complete: false },
      { name: 'b-2', complete: false },
    ]);
    assert.deepEqual(await pruneObjects(store, { keep: 1 }), { deleted: [] });
  });

  it('touches only objects with the given prefix', async (t) => {
    const store = await storeWith(t, [
      { name: 'plan-1', complete: true },
      { name: 'backup-1', complete: true },
      { name: 'plan-2', complete: true },
      { name: 'backup-2', complete: true },
    ]);
    assert.deepEqual(await pruneObjects(store, { keep: 1, prefix: 'backup-' }), { deleted: ['backup-1'] });
    assert.deepEqual(await names(store), ['plan-1', 'plan-2', 'backup-2']);
  });

  for (const keep of [0, -1, 1.5]) {
    it(`refuses keep ${keep}`, async (t) => {
      const store = await storeWith(t, history);
      await rejectsWith(pruneObjects(store, { keep }), 'usage', 'InvalidRetention');
      assert.equal((await names(store)).length, history.length);
    });
  }
});
