// The store contract: one suite every ChunkStore passes (the directory, Secrets, PostgreSQL, S3),
// run by each store's test file with a fixture that makes a fresh, empty store and can change what
// the store holds behind the runner's back. Low-level rules first (what makes an object complete,
// exclusive writes, leftovers, deletes, bounded reads, retention), then the artifact format over
// the store: a round trip, every damage the reader refuses, unsafe tar entries, a decompression
// bomb, declared sizes bounded before a chunk is read, and writes that fail or are changed.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { readArtifact } from '../../src/store/artifact-read.ts';
import { writeArtifact } from '../../src/store/artifact-write.ts';
import type { ArtifactManifest } from '../../src/store/manifest.ts';
import { pruneObjects } from '../../src/store/retention.ts';
import { objectStorePrefix } from '../../src/store/object-names.ts';
import type { ChunkStore, ObjectWrite, RecordStore } from '../../src/store/store.ts';
import {
  backupMeta,
  buildTar,
  fileEntry,
  SAMPLE_INPUTS_HASH,
  planMeta,
  putObject,
  putPartial,
  rejectsWith,
  sha256,
  storeCraftedBackup,
} from './stores.support.ts';
import { tempDir } from '../support/tf-modules.ts';

/** Changes what a store holds, as a person with access to it (or a faulty store) could. */
interface Tamper {
  /** Creates or replaces the bytes of chunk `index` of `object`. */
  setChunk(object: string, index: number, data: Buffer): Promise<void>;
  removeChunk(object: string, index: number): Promise<void>;
  /** Replaces the manifest's bytes (the object stays complete). */
  setManifest(object: string, data: Buffer): Promise<void>;
  /**
   * The store keeps chunk `index` of every later write with its first byte flipped (a store that changes data).
   * Absent for a real server, which cannot be made to (radosgw: test/store/s3-radosgw.e2e.test.ts); its test is skipped.
   */
  corruptChunkWrites?(index: number): Promise<void>;
}

interface StoreFixture {
  store: ChunkStore;
  tamper: Tamper;
}

export interface StoreContract {
  /** A fresh, empty store of its own (torn down with the test or the file). */
  newStore(t: TestContext): Promise<StoreFixture>;
  /**
   * Whether a write that died before its manifest leaves chunks behind. PostgreSQL writes an object
   * in one transaction: it never holds a partial object, and the cases about them do not apply.
   */
  partialObjects: boolean;
  /**
   * Stores of the given keys (objectStorePrefix) over one backing store: one database, one bucket,
   * one namespace's Secrets. A directory store has no keys: its directory is the one given for the
   * object (--backups, --artifacts), so it leaves this out.
   */
  keyedStores?(t: TestContext, keys: readonly string[]): Promise<ChunkStore[]>;
}

const PLAN = Buffer.from('PK\u0003\u0004 pretend this is a saved plan');
const LOCK = Buffer.from('# .terraform.lock.hcl\n');
// Seven chunks, as large as the cases need and no larger: every write and read of them goes through the
// store under test (a fake API server, a database), and the damage cases each write one.
const STATE_BYTES = 60_000;
const CHUNK_BYTES = 10_000;

const writePlan = (store: ChunkStore, object = 'plan-1', options = {}) =>
  writeArtifact(
    store,
    object,
    [
      { name: 'plan.tfplan', data: PLAN },
      { name: '.terraform.lock.hcl', data: LOCK },
    ],
    planMeta(PLAN),
    options,
  );

/** A random (incompressible) state of 600 kB in chunks of 100 kB: 7 of them. */
async function writeBigBackup(store: ChunkStore, object = 'backup-1') {
  const content = randomBytes(STATE_BYTES);
  const manifest = await writeArtifact(store, object, [{ name: 'terraform.tfstate', data: content }], backupMeta(), {
    chunkBytes: CHUNK_BYTES,
  });
  return { content, manifest };
}

async function editManifest(
  store: ChunkStore,
  tamper: Tamper,
  object: string,
  edit: (manifest: Record<string, any>) => void,
) {
  const manifest = JSON.parse((await store.getManifest(object))!.toString('utf8'));
  edit(manifest);
  await tamper.setManifest(object, Buffer.from(JSON.stringify(manifest)));
}

/** The store as a writer sees it, with the write of one object made to fail at chunk `failAt`. */
function failingAt(store: ChunkStore, failAt: number): ChunkStore {
  return Object.assign(Object.create(store) as ChunkStore, {
    create: async (object: string): Promise<ObjectWrite> => {
      const write = await store.create(object);
      return {
        ...write,
        putChunk: async (index: number, data: Buffer) => {
          if (index === failAt) throw new Error('the store failed');
          await write.putChunk(index, data);
        },
      };
    },
  });
}

export function storeContract(name: string, contract: StoreContract): void {
  const { newStore } = contract;
  const partialIt = contract.partialObjects ? it : it.skip;

  describe(`${name}: the store contract`, () => {
    it('an object is written chunk by chunk and is complete only once its manifest is committed', async (t) => {
      const { store } = await newStore(t);
      const chunks = [randomBytes(1000), randomBytes(1000), randomBytes(10)];
      const write = await store.create('obj-1');
      for (const [index, data] of chunks.entries()) await write.putChunk(index, data);
      assert.equal(await store.getManifest('obj-1'), undefined, 'no manifest before the commit');
      assert.ok(
        !(await store.listObjects()).some((o) => o.name === 'obj-1' && o.complete),
        'not complete before the commit',
      );
      assert.deepEqual(
        (await write.held()).map((c) => [c.index, c.bytes, c.sha256]),
        chunks.map((data, index) => [index, data.length, sha256(data)]),
        'held() reports what the store holds',
      );
      await write.commit(Buffer.from('{"m":1}'));

      assert.deepEqual(await store.getManifest('obj-1'), Buffer.from('{"m":1}'));
      assert.deepEqual(await store.listChunks('obj-1'), [0, 1, 2]);
      for (const [index, data] of chunks.entries()) assert.deepEqual(await store.getChunk('obj-1', index), data);
      const [listed] = await store.listObjects();
      assert.equal(listed?.name, 'obj-1');
      assert.equal(listed?.complete, true);
      assert.ok(listed?.created && !Number.isNaN(Date.parse(listed.created)), 'the store knows when it was written');
    });

    it('a complete object is never written again: create and a racing commit are refused, the object unchanged', async (t) => {
      const { store } = await newStore(t);
      const racing = await store.create('obj-1');
      await putObject(store, 'obj-1', [Buffer.from('first')], Buffer.from('{"first":true}'));
      await rejectsWith(store.create('obj-1'), 'artifact', 'ArtifactExists');
      // A second writer that started before the first committed gets nothing in.
      const raced = (async () => {
        await racing.putChunk(0, Buffer.from('second'));
        await racing.commit(Buffer.from('{"second":true}'));
      })();
      await rejectsWith(raced, 'artifact', 'ArtifactExists');
      await racing.abort();
      assert.deepEqual(await store.getManifest('obj-1'), Buffer.from('{"first":true}'));
      assert.deepEqual(await store.getChunk('obj-1', 0), Buffer.from('first'));
    });

    it('abort leaves nothing of the write, and never reads as complete', async (t) => {
      const { store } = await newStore(t);
      const write = await store.create('obj-1');
      await write.putChunk(0, Buffer.from('a'));
      await write.putChunk(1, Buffer.from('b'));
      await write.abort();
      assert.deepEqual(await store.listChunks('obj-1'), []);
      assert.equal(await store.getManifest('obj-1'), undefined);
      assert.deepEqual(await store.listObjects(), []);
    });

    partialIt(
      'a write that died leaves a partial object, which lists as incomplete; the next write under the name replaces it',
      async (t) => {
        const { store } = await newStore(t);
        await putPartial(store, 'obj-1', [Buffer.from('a'), Buffer.from('b'), Buffer.from('c')]);
        assert.deepEqual(
          (await store.listObjects()).map(({ name, complete }) => ({ name, complete })),
          [{ name: 'obj-1', complete: false }],
        );
        assert.equal(await store.getManifest('obj-1'), undefined);
        const write = await store.create('obj-1');
        await write.putChunk(0, Buffer.from('new'));
        assert.deepEqual(
          (await write.held()).map((c) => c.index),
          [0],
          "the leftovers are not the new write's",
        );
        await write.commit(Buffer.from('{}'));
        assert.deepEqual(await store.listChunks('obj-1'), [0]);
        assert.deepEqual(await store.getChunk('obj-1', 0), Buffer.from('new'));
      },
    );

    it('deletes an object whole, and a missing one without complaint', async (t) => {
      const { store } = await newStore(t);
      await putObject(store, 'keep', [Buffer.from('k')]);
      await putObject(store, 'drop', [Buffer.from('a'), Buffer.from('b')]);
      await store.deleteObject('drop');
      await store.deleteObject('drop');
      await store.deleteObject('never-there');
      assert.deepEqual(
        (await store.listObjects()).map((o) => o.name),
        ['keep'],
      );
      assert.deepEqual(await store.listChunks('drop'), []);
      assert.equal(await store.getManifest('drop'), undefined);
    });

    it('lists objects oldest first, each once', async (t) => {
      const { store } = await newStore(t);
      for (const object of ['a-1', 'a-2', 'a-3'])
        await putObject(store, object, [Buffer.from(object), Buffer.from('x')]);
      assert.deepEqual(
        (await store.listObjects()).map((o) => o.name),
        ['a-1', 'a-2', 'a-3'],
      );
    });

    it('reads a chunk to at most one byte past the size asked for', async (t) => {
      const { store, tamper } = await newStore(t);
      await putObject(store, 'obj-1', [Buffer.alloc(1000, 1)]);
      await tamper.setChunk('obj-1', 0, Buffer.alloc(300_000, 2));
      assert.equal((await store.getChunk('obj-1', 0, 1000)).length, 1001);
    });

    it('reports a missing chunk as an incomplete artifact', async (t) => {
      const { store } = await newStore(t);
      await rejectsWith(
        store.getChunk('obj-1', 3),
        'artifact',
        'ArtifactIncomplete',
        /chunk 3 of "?obj-1"? is missing/,
      );
    });

    for (const object of ['', '.', '..', '../escape', 'a/b', '.hidden', '-dash', 'x'.repeat(201)]) {
      it(`refuses the object name ${JSON.stringify(object.length > 20 ? `${object.slice(0, 5)}…` : object)}`, async (t) => {
        const { store } = await newStore(t);
        await rejectsWith(store.create(object), 'usage', 'InvalidObjectName');
        await rejectsWith(store.getManifest(object), 'usage', 'InvalidObjectName');
      });
    }

    it('retention keeps the newest complete objects of a family, and what it is told to protect', async (t) => {
      const { store } = await newStore(t);
      for (const object of ['b-1', 'b-2', 'b-3', 'b-4', 'other-1'])
        await putObject(store, object, [Buffer.from(object)]);
      assert.deepEqual(await pruneObjects(store, { keep: 2, prefix: 'b-', protect: ['b-1'] }), { deleted: ['b-2'] });
      assert.deepEqual(
        (await store.listObjects()).map((o) => o.name),
        ['b-1', 'b-3', 'b-4', 'other-1'],
      );
      assert.deepEqual(await store.listChunks('b-2'), [], 'its chunks went too');
    });

    partialIt('retention deletes partial objects older than the newest complete one, not newer ones', async (t) => {
      const { store } = await newStore(t);
      await putPartial(store, 'b-1', [Buffer.from('died')]);
      await putObject(store, 'b-2', [Buffer.from('x')]);
      await putPartial(store, 'b-3', [Buffer.from('in progress')]);
      assert.deepEqual(await pruneObjects(store, { keep: 1, prefix: 'b-' }), { deleted: ['b-1'] });
    });
  });

  const keyedIt = contract.keyedStores ? it : it.skip;
  describe(`${name}: one backing store, several objects' keys`, () => {
    keyedIt(
      "objects of one name in two namespaces, and prod beside prod-5f56359ef1 (the key Prod had), never see, replace or prune each other's objects",
      async (t) => {
        const keys = [
          objectStorePrefix('plan', 'cluster', 'team-a', 'prod'),
          objectStorePrefix('plan', 'cluster', 'team-b', 'prod'),
          objectStorePrefix('plan', 'cluster', 'team-a', 'prod-5f56359ef1'),
        ];
        const stores = await contract.keyedStores!(t, keys);
        // The same object name under each key: each write is its own (no ArtifactExists).
        for (const [i, store] of stores.entries()) await putObject(store, 'plan-1', [Buffer.from(`key ${i}`)]);
        const [teamA, teamB, twin] = stores as [ChunkStore, ChunkStore, ChunkStore];
        // team-b plans again: its retention (one plan kept) deletes its own older plan only.
        await putObject(teamB, 'plan-2', [Buffer.from('key 1, again')]);
        assert.deepEqual(await pruneObjects(teamB, { keep: 1, prefix: 'plan-', protect: ['plan-2'] }), {
          deleted: ['plan-1'],
        });
        for (const [i, store] of [teamA, twin].entries()) {
          assert.deepEqual(
            (await store.listObjects()).map((o) => [o.name, o.complete]),
            [['plan-1', true]],
          );
          assert.deepEqual(await store.getChunk('plan-1', 0), Buffer.from(`key ${i * 2}`));
        }
        assert.deepEqual(
          (await teamB.listObjects()).map((o) => o.name),
          ['plan-2'],
        );
        // A delete under one key leaves the others' objects of the same name.
        await teamA.deleteObject('plan-1');
        assert.equal(await teamA.getManifest('plan-1'), undefined);
        assert.ok(await twin.getManifest('plan-1'));
        // Records (the blocked runs' beside the backups) keep apart too, where the store keeps them.
        const records = stores.filter((store): store is ChunkStore & RecordStore => 'putRecord' in store);
        for (const [i, store] of records.entries()) await store.putRecord('blocked-x.json', Buffer.from(`record ${i}`));
        for (const [i, store] of records.entries())
          assert.deepEqual(await store.getRecord('blocked-x.json', 100), Buffer.from(`record ${i}`));
      },
    );
  });

  describe(`${name}: artifacts over the store`, () => {
    it('round-trips a plan artifact and a state backup of 7 chunks', async (t) => {
      const { store } = await newStore(t);
      const root = await tempDir(t);
      const written = await writePlan(store);
      const { paths, manifest } = await readArtifact(store, 'plan-1', {
        into: join(root, 'plan'),
        expect: { kind: 'PlanArtifact', planHash: sha256(PLAN), inputsHash: SAMPLE_INPUTS_HASH },
      });
      assert.deepEqual(manifest, written);
      assert.deepEqual(await readFile(paths['plan.tfplan']!), PLAN);
      assert.deepEqual(await readFile(paths['.terraform.lock.hcl']!), LOCK);

      const big = await writeBigBackup(store);
      assert.equal(big.manifest.chunkCount, 7);
      const backup = await readArtifact(store, 'backup-1', {
        into: join(root, 'backup'),
        expect: { kind: 'StateBackup' },
      });
      assert.ok((await readFile(backup.paths['terraform.tfstate']!)).equals(big.content));
      await rejectsWith(writePlan(store), 'artifact', 'ArtifactExists');
    });

    it('leaves no object behind when a chunk cannot be stored', async (t) => {
      const { store } = await newStore(t);
      await rejectsWith(
        writeArtifact(
          failingAt(store, 2),
          'backup-1',
          [{ name: 'terraform.tfstate', data: randomBytes(STATE_BYTES) }],
          backupMeta(),
          { chunkBytes: CHUNK_BYTES },
        ),
        'io',
        'ArtifactWriteFailed',
        /the store failed/,
      );
      assert.deepEqual(await store.listObjects(), []);
      assert.deepEqual(await store.listChunks('backup-1'), []);
    });

    it('refuses to vouch for a chunk the store changed: no manifest, nothing left', async (t) => {
      const { store, tamper } = await newStore(t);
      if (!tamper.corruptChunkWrites) return t.skip('a real server keeps what it is sent');
      await tamper.corruptChunkWrites(1);
      await rejectsWith(
        writeArtifact(store, 'backup-1', [{ name: 'terraform.tfstate', data: randomBytes(5_000) }], backupMeta(), {
          chunkBytes: 1024,
        }),
        'io',
        'ArtifactWriteUnverified',
        /chunk 1 whose sha256 differs/,
      );
      assert.equal(await store.getManifest('backup-1'), undefined);
      assert.deepEqual(await store.listObjects(), []);
    });

    type Damage = {
      name: string;
      reason: string;
      message: RegExp;
      partial?: true;
      damage: (f: StoreFixture, manifest: ArtifactManifest, content: Buffer) => Promise<void>;
    };
    const chunkOf = (f: StoreFixture, index: number) => f.store.getChunk('backup-1', index);
    const cases: Damage[] = [
      {
        name: 'a missing chunk',
        reason: 'ArtifactIncomplete',
        message: /lacks chunk\(s\) 2 of/,
        damage: (f) => f.tamper.removeChunk('backup-1', 2),
      },
      {
        name: 'an extra chunk',
        reason: 'ArtifactCorrupt',
        message: /beyond the/,
        damage: async (f, manifest) => f.tamper.setChunk('backup-1', manifest.chunkCount, await chunkOf(f, 0)),
      },
      {
        name: 'chunks 1 and 2 swapped',
        reason: 'ArtifactCorrupt',
        message: /chunk 1 whose sha256 differs/,
        damage: async (f) => {
          const [one, two] = [await chunkOf(f, 1), await chunkOf(f, 2)];
          await f.tamper.setChunk('backup-1', 1, two);
          await f.tamper.setChunk('backup-1', 2, one);
        },
      },
      {
        name: 'a corrupt bit',
        reason: 'ArtifactCorrupt',
        message: /chunk 3 whose sha256 differs/,
        damage: async (f) => {
          const data = Buffer.from(await chunkOf(f, 3));
          data[5000] = data[5000]! ^ 0x01;
          await f.tamper.setChunk('backup-1', 3, data);
        },
      },
      {
        name: 'a truncated chunk',
        reason: 'ArtifactCorrupt',
        message: new RegExp(`chunk 4 of ${CHUNK_BYTES - 1} bytes`),
        damage: async (f) => f.tamper.setChunk('backup-1', 4, (await chunkOf(f, 4)).subarray(0, CHUNK_BYTES - 1)),
      },
      {
        name: 'a chunk grown past its listed size',
        reason: 'ArtifactCorrupt',
        message: new RegExp(`chunk 0 of more than the ${CHUNK_BYTES} bytes the manifest lists`),
        damage: async (f) =>
          f.tamper.setChunk('backup-1', 0, Buffer.concat([await chunkOf(f, 0), Buffer.alloc(4 * CHUNK_BYTES)])),
      },
      {
        name: 'a manifest chunk sha256 edited',
        reason: 'ArtifactCorrupt',
        message: /chunk 0 whose sha256 differs/,
        damage: (f) => editManifest(f.store, f.tamper, 'backup-1', (m) => void (m.chunks[0].sha256 = sha256('other'))),
      },
      {
        name: 'a manifest chunk size edited',
        reason: 'ArtifactCorrupt',
        message: /invalid manifest.*totalBytes/s,
        damage: (f) => editManifest(f.store, f.tamper, 'backup-1', (m) => void (m.chunks[0].bytes += 1)),
      },
      {
        name: 'a manifest chunk size and total edited together',
        reason: 'ArtifactCorrupt',
        message: new RegExp(`chunk 0 of ${CHUNK_BYTES} bytes; the manifest lists ${CHUNK_BYTES + 1}`),
        damage: (f) =>
          editManifest(f.store, f.tamper, 'backup-1', (m) => void ((m.chunks[0].bytes += 1), (m.totalBytes += 1))),
      },
      {
        name: 'a manifest chunk count edited',
        reason: 'ArtifactCorrupt',
        message: /chunkCount/,
        damage: (f) => editManifest(f.store, f.tamper, 'backup-1', (m) => void (m.chunkCount -= 1)),
      },
      {
        name: 'a chunk dropped from the manifest and the store alike',
        reason: 'ArtifactCorrupt',
        message: /together do not match the manifest sha256/,
        damage: async (f, manifest) => {
          await f.tamper.removeChunk('backup-1', manifest.chunkCount - 1);
          await editManifest(f.store, f.tamper, 'backup-1', (edited) => {
            const dropped = edited.chunks.pop();
            edited.chunkCount -= 1;
            edited.totalBytes -= dropped.bytes;
          });
        },
      },
      {
        name: 'the whole sha256 edited (found after every chunk was read)',
        reason: 'ArtifactCorrupt',
        message: /together do not match the manifest sha256/,
        damage: (f) => editManifest(f.store, f.tamper, 'backup-1', (m) => void (m.sha256 = sha256('other'))),
      },
      {
        name: 'a file sha256 edited',
        reason: 'ArtifactCorrupt',
        message: /"terraform.tfstate" whose sha256 differs/,
        damage: (f) => editManifest(f.store, f.tamper, 'backup-1', (m) => void (m.files[0].sha256 = sha256('other'))),
      },
      {
        name: 'a file size edited',
        reason: 'ArtifactCorrupt',
        message: new RegExp(`of ${STATE_BYTES} bytes; the manifest lists ${STATE_BYTES + 1}`),
        damage: (f) => editManifest(f.store, f.tamper, 'backup-1', (m) => void (m.files[0].bytes += 1)),
      },
      {
        name: 'a manifest that is not JSON',
        reason: 'ArtifactCorrupt',
        message: /not valid JSON/,
        damage: (f) => f.tamper.setManifest('backup-1', Buffer.from('{"apiV')),
      },
      // A backup no restore of this runner can use: not ArtifactMismatch, whose exit 5 asks for a new plan.
      {
        name: 'a manifest of another apiVersion',
        reason: 'BackupMismatch',
        message: /apiVersion "runner.captf.io\/v2"/,
        damage: (f) => editManifest(f.store, f.tamper, 'backup-1', (m) => void (m.apiVersion = 'runner.captf.io/v2')),
      },
      {
        name: 'a manifest declaring files over --max-artifact-bytes (refused before a chunk is read)',
        reason: 'ArtifactTooLarge',
        message: /declares files of 536870912 bytes, more than the 134217728 .*--max-artifact-bytes/,
        damage: (f) => editManifest(f.store, f.tamper, 'backup-1', (m) => void (m.files[0].bytes = 512 * 1024 * 1024)),
      },
      {
        name: 'a manifest listing a chunk over 16 MiB',
        reason: 'ArtifactCorrupt',
        message: /invalid manifest/,
        damage: (f) =>
          editManifest(f.store, f.tamper, 'backup-1', (m) => {
            m.chunks[0].bytes = 17 * 1024 * 1024;
            m.totalBytes = (m.chunks as { bytes: number }[]).reduce((sum, chunk) => sum + chunk.bytes, 0);
          }),
      },
    ];

    describe('the reader refuses a damaged object, leaving nothing extracted', () => {
      for (const { name: damageName, reason, message, damage } of cases) {
        it(`${damageName}: ${reason}`, async (t) => {
          const fixture = await newStore(t);
          const { manifest, content } = await writeBigBackup(fixture.store);
          await damage(fixture, manifest, content);
          const reads: number[] = [];
          const counted = Object.assign(Object.create(fixture.store) as ChunkStore, {
            getChunk: (object: string, index: number, limitBytes?: number) => {
              reads.push(index);
              return fixture.store.getChunk(object, index, limitBytes);
            },
          });
          const into = join(await tempDir(t), 'out');
          const error = await rejectsWith(
            readArtifact(counted, 'backup-1', { into, expect: { kind: 'StateBackup' } }),
            'artifact',
            reason,
            message,
          );
          assert.match(error.message, /state backup "backup-1"/);
          if (reason === 'ArtifactTooLarge') assert.deepEqual(reads, [], 'no chunk was read');
          await assert.rejects(stat(into), { code: 'ENOENT' }, 'the extraction directory is removed');
        });
      }

      partialIt('a missing manifest (a partial object): ArtifactIncomplete', async (t) => {
        const { store } = await newStore(t);
        await putPartial(store, 'backup-1', [randomBytes(100)]);
        await rejectsWith(
          readArtifact(store, 'backup-1', { into: join(await tempDir(t), 'out'), expect: { kind: 'StateBackup' } }),
          'artifact',
          'ArtifactIncomplete',
          /no manifest.*partial/,
        );
      });

      it('an absent object: ArtifactIncomplete, absent or partial', async (t) => {
        const { store } = await newStore(t);
        await rejectsWith(
          readArtifact(store, 'plan-9', { into: join(await tempDir(t), 'out'), expect: { kind: 'PlanArtifact' } }),
          'artifact',
          'ArtifactIncomplete',
          /absent, or partial.*Run a new plan/s,
        );
      });
    });

    describe('the reader extracts safely', () => {
      const STATE = Buffer.from('{"version":4,"serial":7}');
      const listedState = [fileEntry('terraform.tfstate', STATE)];
      const state = { header: { name: 'terraform.tfstate' }, data: STATE };
      const unsafe: { name: string; entries: Parameters<typeof buildTar>[0]; reason?: string; message: RegExp }[] = [
        {
          name: 'a "../" path',
          entries: [{ header: { name: '../x' }, data: STATE }, state],
          message: /"\.\.\/x": a path that climbs out/,
        },
        {
          name: 'an absolute path',
          entries: [{ header: { name: '/etc/x' }, data: STATE }, state],
          message: /"\/etc\/x": an absolute path/,
        },
        {
          name: 'a symlink',
          entries: [{ header: { name: 'terraform.tfstate', type: 'symlink', linkname: '/etc/passwd' } }],
          message: /a symlink/,
        },
        {
          name: 'a hardlink',
          entries: [state, { header: { name: 'x', type: 'link', linkname: 'terraform.tfstate' } }],
          message: /"x": a link/,
        },
        {
          name: 'a character device',
          entries: [{ header: { name: 'null', type: 'character-device', devmajor: 1, devminor: 3 } }, state],
          message: /a character-device/,
        },
        { name: 'a FIFO', entries: [{ header: { name: 'pipe', type: 'fifo' } }, state], message: /a fifo/ },
        {
          name: 'a directory',
          entries: [{ header: { name: 'dir', type: 'directory', mode: 0o755 } }, state],
          message: /a directory/,
        },
        {
          name: 'an unlisted entry',
          entries: [state, { header: { name: 'extra.sh' }, data: STATE }],
          message: /"extra.sh": not listed in the manifest/,
        },
        { name: 'a duplicate entry', entries: [state, state], message: /a second entry with the same name/ },
        {
          name: 'an entry larger than listed',
          entries: [{ header: { name: 'terraform.tfstate' }, data: Buffer.concat([STATE, Buffer.alloc(1000)]) }],
          message: /1024 bytes, more than the 24/,
        },
        {
          name: 'a listed file missing',
          entries: [],
          reason: 'ArtifactCorrupt',
          message: /lacks listed file\(s\) "terraform.tfstate"/,
        },
      ];
      for (const { name: entryName, entries, reason = 'ArtifactUnsafe', message } of unsafe) {
        it(`refuses ${entryName}`, async (t) => {
          const { store } = await newStore(t);
          await storeCraftedBackup(store, 'b', { tar: await buildTar(entries), files: listedState });
          const root = await tempDir(t);
          await rejectsWith(readArtifact(store, 'b', { into: join(root, 'out') }), 'artifact', reason, message);
          await assert.rejects(stat(join(root, 'out')), { code: 'ENOENT' }, 'nothing is left extracted');
        });
      }

      it('stops a payload that unpacks far beyond its listed files (a decompression bomb)', async (t) => {
        const { store } = await newStore(t);
        // Zero blocks after the tar read as padding: 4 MiB of them gzip to about 4 kB and unpack past the 12,800 bytes allowed.
        const tarWithPadding = Buffer.concat([await buildTar([state]), Buffer.alloc(4 * 1024 * 1024)]);
        await storeCraftedBackup(store, 'b', { tar: tarWithPadding, files: listedState });
        await rejectsWith(
          readArtifact(store, 'b', { into: join(await tempDir(t), 'out') }),
          'artifact',
          'ArtifactUnsafe',
          /unpacks to more than the 12800 bytes/,
        );
      });
    });
  });
}
