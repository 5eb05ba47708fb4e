import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, readdir, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { readArtifact } from '../../src/store/artifact-read.ts';
import { writeArtifact, type ArtifactFile } from '../../src/store/artifact-write.ts';
import { DirStore, openDirObject } from '../../src/store/dir-store.ts';
import type { ChunkStore } from '../../src/store/store.ts';
import {
  backupMeta,
  buildTar,
  fileEntry,
  SAMPLE_INPUTS_HASH,
  planMeta,
  putPartial,
  rejectsWith,
  sha256,
  storeCraftedBackup,
} from './stores.support.ts';
import { tempDir } from '../support/tf-modules.ts';

const PLAN = Buffer.from('PK\u0003\u0004 pretend this is a saved plan');
const LOCK = Buffer.from('# .terraform.lock.hcl\n');

async function writePlan(store: ChunkStore, object = 'plan-1', options = {}) {
  return writeArtifact(
    store,
    object,
    [
      { name: 'plan.tfplan', data: PLAN },
      { name: '.terraform.lock.hcl', data: LOCK },
    ],
    planMeta(PLAN),
    options,
  );
}

const STATE_BYTES = 600_000;

/** A random (incompressible) state split into chunks of `chunkBytes` (100 kB: the state gives 7 of them). */
async function writeBigBackup(t: Parameters<typeof tempDir>[0], bytes = STATE_BYTES, chunkBytes = 100_000) {
  const root = await tempDir(t);
  const store = new DirStore(join(root, 'backups'));
  const source = join(root, 'terraform.tfstate');
  const content = randomBytes(bytes);
  await writeFile(source, content);
  const manifest = await writeArtifact(store, 'backup-1', [{ name: 'terraform.tfstate', path: source }], backupMeta(), {
    chunkBytes,
  });
  return { root, store, content, manifest, objectDir: join(store.location, 'backup-1') };
}

/** The state backup most tests damage or read, written once; each test gets a copy of its own (writing one is a gzip, fsyncs and a read back). */
let bigBackup: Awaited<ReturnType<typeof writeBigBackup>>;
const removeBigBackup: (() => Promise<void>)[] = [];
before(async () => {
  bigBackup = await writeBigBackup({ after: (remove) => removeBigBackup.push(remove) });
});
after(() => Promise.all(removeBigBackup.map((remove) => remove())));

/** A copy of the state backup, in a store of the test's own: what writeBigBackup(t) gives, without writing one. */
async function copyOfBigBackup(t: Parameters<typeof tempDir>[0]) {
  const root = await tempDir(t);
  const store = new DirStore(join(root, 'backups'));
  const objectDir = join(store.location, 'backup-1');
  await mkdir(store.location, { recursive: true, mode: 0o700 });
  await cp(bigBackup.objectDir, objectDir, { recursive: true });
  return { root, store, content: bigBackup.content, manifest: structuredClone(bigBackup.manifest), objectDir };
}

const editManifest = (objectDir: string, edit: (manifest: Record<string, any>) => void) =>
  readFile(join(objectDir, 'manifest.json'), 'utf8').then((text) => {
    const manifest = JSON.parse(text);
    edit(manifest);
    return writeFile(join(objectDir, 'manifest.json'), JSON.stringify(manifest));
  });

const chunkPath = (objectDir: string, index: number) => join(objectDir, `chunk-${String(index).padStart(5, '0')}`);

describe('writeArtifact then readArtifact', () => {
  it('round-trips a small plan artifact, binding the plan hash to the plan file', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(join(root, 'artifacts'));
    const written = await writePlan(store);

    assert.equal(written.kind, 'PlanArtifact');
    assert.equal(written.chunkCount, 1);
    assert.deepEqual(
      written.files.map((file) => [file.name, file.bytes, file.sha256]),
      [
        ['plan.tfplan', PLAN.length, sha256(PLAN)],
        ['.terraform.lock.hcl', LOCK.length, sha256(LOCK)],
      ],
    );

    const into = join(root, 'out');
    const { manifest, paths } = await readArtifact(store, 'plan-1', {
      into,
      expect: { kind: 'PlanArtifact', planHash: sha256(PLAN), inputsHash: SAMPLE_INPUTS_HASH },
    });
    assert.deepEqual(manifest, written);
    assert.equal(manifest.planHash, sha256(PLAN));
    assert.deepEqual(await readFile(paths['plan.tfplan']!), PLAN);
    assert.deepEqual(await readFile(paths['.terraform.lock.hcl']!), LOCK);
    assert.deepEqual((await readdir(into)).sort(), ['.terraform.lock.hcl', 'plan.tfplan']);
  });

  it('round-trips a 1 MB file in 20 kB chunks, every chunk full but the last', async (t) => {
    const { root, store, content, manifest } = await writeBigBackup(t, 1_000_000, 20_000);
    assert.ok(manifest.chunkCount >= 50, `expected at least 50 chunks, got ${manifest.chunkCount}`);
    assert.ok(manifest.chunks.slice(0, -1).every((chunk) => chunk.bytes === 20_000));
    assert.ok(manifest.chunks.at(-1)!.bytes <= 20_000);
    assert.deepEqual(
      await store.listChunks('backup-1'),
      manifest.chunks.map((chunk) => chunk.index),
    );

    const { paths } = await readArtifact(store, 'backup-1', {
      into: join(root, 'out'),
      expect: { kind: 'StateBackup' },
    });
    assert.ok((await readFile(paths['terraform.tfstate']!)).equals(content));
  });

  it('round-trips files whose names are also Object.prototype members', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(root);
    const files = ['constructor', '__proto__', 'toString'].map((name) => ({ name, data: Buffer.from(name) }));
    await writeArtifact(store, 'b', files, backupMeta('constructor'));
    const { paths } = await readArtifact(store, 'b', { into: join(root, 'out') });
    for (const { name, data } of files) assert.deepEqual(await readFile(paths[name]!), data, name);
  });

  it('reads an object addressed by its own directory', async (t) => {
    const { root, content } = await copyOfBigBackup(t);
    const { store, object } = openDirObject(join(root, 'backups', 'backup-1'));
    const { paths } = await readArtifact(store, object, { into: join(root, 'out') });
    assert.ok((await readFile(paths['terraform.tfstate']!)).equals(content));
  });

  it('keeps secrets private: object dirs 0700, chunks and manifest 0600, extraction 0700/0600', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(join(root, 'artifacts'));
    await writePlan(store, 'plan-1', { chunkBytes: 1024 });
    const objectDir = join(store.location, 'plan-1');
    const mode = async (path: string) => (await stat(path)).mode & 0o777;

    assert.equal(await mode(store.location), 0o700);
    assert.equal(await mode(objectDir), 0o700);
    for (const name of await readdir(objectDir)) assert.equal(await mode(join(objectDir, name)), 0o600, name);

    const into = join(root, 'a', 'b', 'out');
    const { paths } = await readArtifact(store, 'plan-1', { into });
    assert.equal(await mode(into), 0o700);
    for (const path of Object.values(paths)) assert.equal(await mode(path), 0o600, path);
  });

  it('extracts into an existing empty directory and tightens it to 0700, but refuses a non-empty one', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(root);
    await writePlan(store);
    const into = join(root, 'empty');
    await mkdir(into, { mode: 0o755 });
    await readArtifact(store, 'plan-1', { into });
    assert.equal((await stat(into)).mode & 0o777, 0o700);

    await rejectsWith(readArtifact(store, 'plan-1', { into }), 'usage', 'ExtractDirNotEmpty');
  });
});

describe('writeArtifact', () => {
  it('writes the manifest last, after every chunk is stored', async (t) => {
    const root = await tempDir(t);
    const inner = new DirStore(root);
    const calls: string[] = [];
    const recording: ChunkStore = Object.assign(Object.create(inner) as DirStore, {
      create: async (object: string) => {
        const write = await inner.create(object);
        return {
          ...write,
          putChunk: async (index: number, data: Buffer) => {
            calls.push(`chunk ${index}`);
            assert.equal(await inner.getManifest(object), undefined, 'no manifest while chunks are written');
            await write.putChunk(index, data);
          },
          commit: async (manifest: Buffer) => {
            calls.push('manifest');
            await write.commit(manifest);
          },
        };
      },
    });
    const big = randomBytes(10_000);
    const manifest = await writeArtifact(recording, 'b', [{ name: 'terraform.tfstate', data: big }], backupMeta(), {
      chunkBytes: 1024,
    });
    assert.equal(calls.length, manifest.chunkCount + 1);
    assert.equal(calls.at(-1), 'manifest');
    assert.deepEqual(
      calls.slice(0, -1),
      manifest.chunks.map((chunk) => `chunk ${chunk.index}`),
    );
    assert.deepEqual(
      (await readdir(join(root, 'b'))).filter((name) => name.endsWith('.tmp')),
      [],
      'no temp file left',
    );
  });

  it('replaces the leftovers of an unfinished write under the same name', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(root);
    await putPartial(store, 'plan-2', [Buffer.from('stale'), Buffer.from('stale')]);
    await writeFile(join(root, 'plan-2', 'chunk-00007'), 'stale');
    const manifest = await writePlan(store, 'plan-2');
    assert.deepEqual(await store.listChunks('plan-2'), [0]);
    await readArtifact(store, 'plan-2', { into: join(root, 'out') });
    assert.equal(manifest.chunkCount, 1);
  });

  for (const chunkBytes of [0, 1023, 1500.5, 16 * 1024 * 1024 + 1, Number.NaN]) {
    it(`rejects chunkBytes ${chunkBytes} as a usage error`, async (t) => {
      const store = new DirStore(await tempDir(t));
      await rejectsWith(writePlan(store, 'p', { chunkBytes }), 'usage', 'InvalidChunkBytes');
      assert.deepEqual(await store.listObjects(), []);
    });
  }

  it('refuses metadata whose planHash is not the hash of the plan file, writing nothing', async (t) => {
    const store = new DirStore(await tempDir(t));
    const files: ArtifactFile[] = [{ name: 'plan.tfplan', data: PLAN }];
    await rejectsWith(
      writeArtifact(store, 'p', files, planMeta(Buffer.from('another plan'))),
      'internal',
      'InternalError',
      /planHash/,
    );
    await rejectsWith(
      writeArtifact(store, 'p', files, { ...planMeta(PLAN), planFile: 'missing.tfplan' }),
      'internal',
      'InternalError',
    );
    await rejectsWith(
      writeArtifact(store, 'p', [{ name: '../plan.tfplan', data: PLAN }], planMeta(PLAN)),
      'internal',
      'InternalError',
    );
    assert.deepEqual(await store.listObjects(), []);
  });

  it('reports an unreadable source file as an io error', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(join(root, 'store'));
    await rejectsWith(
      writeArtifact(store, 'b', [{ name: 'terraform.tfstate', path: join(root, 'absent') }], backupMeta()),
      'io',
      'ArtifactWriteFailed',
      /absent/,
    );
    assert.deepEqual(await store.listObjects(), []);
  });
});

describe('readArtifact on failure', () => {
  it('an existing extraction directory is emptied again on failure, not removed', async (t) => {
    const { root, store, objectDir } = await copyOfBigBackup(t);
    await editManifest(objectDir, (manifest) => void (manifest.sha256 = sha256('other')));
    const into = join(root, 'out');
    await mkdir(into);
    await rejectsWith(readArtifact(store, 'backup-1', { into }), 'artifact', 'ArtifactCorrupt');
    assert.deepEqual(await readdir(into), []);
  });
});

describe('readArtifact checks what the caller expects', () => {
  it('refuses another kind, another plan hash and other inputs, saying what to do', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(root);
    await writePlan(store);
    const into = join(root, 'out');
    await rejectsWith(
      readArtifact(store, 'plan-1', { into, expect: { kind: 'StateBackup' } }),
      'artifact',
      'BackupMismatch',
      /is a "PlanArtifact", not a StateBackup/,
    );
    const wrongPlan = await rejectsWith(
      readArtifact(store, 'plan-1', { into, expect: { kind: 'PlanArtifact', planHash: sha256('approved other') } }),
      'artifact',
      'ArtifactMismatch',
      /not the approved plan.*run a new plan/s,
    );
    assert.deepEqual(wrongPlan.detail, {
      location: store.location,
      object: 'plan-1',
      expected: sha256('approved other'),
      found: sha256(PLAN),
    });
    await rejectsWith(
      readArtifact(store, 'plan-1', { into, expect: { kind: 'PlanArtifact', inputsHash: sha256('changed inputs') } }),
      'artifact',
      'ArtifactMismatch',
      /inputs given now hash to .*Run a new plan from the current inputs/s,
    );
    await assert.rejects(stat(into), { code: 'ENOENT' });
  });

  it('says an absent plan artifact is absent or partial, and to run a new plan', async (t) => {
    const root = await tempDir(t);
    const { store, object } = openDirObject(join(root, 'nothing-here'));
    await rejectsWith(
      readArtifact(store, object, { into: join(root, 'out'), expect: { kind: 'PlanArtifact' } }),
      'artifact',
      'ArtifactIncomplete',
      /plan artifact "nothing-here" .* absent, or partial.*Run a new plan/s,
    );
  });
});

describe('readArtifact extracts safely', () => {
  const STATE = Buffer.from('{"version":4,"serial":7}');
  const listedState = [fileEntry('terraform.tfstate', STATE)];
  const state = { header: { name: 'terraform.tfstate' }, data: STATE };

  it('extracts a crafted, well-formed artifact (the fixture itself is sound)', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(join(root, 'store'));
    await storeCraftedBackup(store, 'b', { tar: await buildTar([state]), files: listedState });
    const { paths } = await readArtifact(store, 'b', { into: join(root, 'out') });
    assert.deepEqual(await readFile(paths['terraform.tfstate']!), STATE);
  });

  it('refuses a payload that is not gzip', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(join(root, 'store'));
    await storeCraftedBackup(store, 'b', {
      tar: Buffer.alloc(0),
      gzipped: Buffer.from('not gzip at all'),
      files: listedState,
    });
    await rejectsWith(
      readArtifact(store, 'b', { into: join(root, 'out') }),
      'artifact',
      'ArtifactCorrupt',
      /not a valid gzipped tar/,
    );
  });

  it('refuses a gzip of something that is not a tar', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(join(root, 'store'));
    await storeCraftedBackup(store, 'b', {
      tar: Buffer.alloc(0),
      gzipped: gzipSync(Buffer.alloc(2048, 'x')),
      files: listedState,
    });
    await rejectsWith(
      readArtifact(store, 'b', { into: join(root, 'out') }),
      'artifact',
      'ArtifactCorrupt',
      /not a valid gzipped tar/,
    );
  });
});

describe('declared sizes are bounded before anything is read', () => {
  /** A store that counts the chunks read from it. */
  const counting = (store: ChunkStore) => {
    const reads: number[] = [];
    const wrapped: ChunkStore = Object.assign(Object.create(store) as ChunkStore, {
      getChunk: (object: string, index: number, limitBytes?: number) => {
        reads.push(index);
        return store.getChunk(object, index, limitBytes);
      },
    });
    return { store: wrapped, reads };
  };

  it('a manifest declaring files (a 512 MiB state) or a payload over --max-artifact-bytes is refused before a chunk is read', async (t) => {
    const { root, store, objectDir } = await copyOfBigBackup(t);
    await editManifest(objectDir, (manifest) => void (manifest.files[0]!.bytes = 512 * 1024 * 1024));
    const into = join(root, 'out');
    const watched = counting(store);
    const error = await rejectsWith(
      readArtifact(watched.store, 'backup-1', { into }),
      'artifact',
      'ArtifactTooLarge',
      /declares files of 536870912 bytes, more than the 134217728 .*--max-artifact-bytes/,
    );
    assert.deepEqual(watched.reads, [], 'no chunk was read');
    assert.equal(error.detail?.maxBytes, 134217728);
    await assert.rejects(stat(into), { code: 'ENOENT' }, 'nothing was extracted');
    // With a limit that allows it, the reader goes on and finds the lie.
    await rejectsWith(
      readArtifact(store, 'backup-1', { into, maxBytes: 1024 * 1024 * 1024 }),
      'artifact',
      'ArtifactCorrupt',
    );
    // The payload alone: 600 kB in 100 kB chunks against a limit of 500 kB.
    const fresh = await copyOfBigBackup(t);
    await rejectsWith(
      readArtifact(fresh.store, 'backup-1', { into, maxBytes: 500_000 }),
      'artifact',
      'ArtifactTooLarge',
      /declares a payload of \d+ bytes/,
    );
  });

  it('a chunk swapped for a 1.5 GiB file (sparse) is refused having read one byte more than listed', async (t) => {
    const { root, store, manifest, objectDir } = await copyOfBigBackup(t);
    await truncate(chunkPath(objectDir, 0), 1.5 * 1024 * 1024 * 1024);
    const listed = manifest.chunks[0]!.bytes;
    assert.equal((await store.getChunk('backup-1', 0, listed)).length, listed + 1);
    await rejectsWith(
      readArtifact(store, 'backup-1', { into: join(root, 'out') }),
      'artifact',
      'ArtifactCorrupt',
      /chunk 0 of more than the 100000 bytes the manifest lists/,
    );
  });

  it('writeArtifact refuses files over the limit before a chunk is written: a reader with the same setting would refuse the artifact', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(join(root, 'backups'));
    const data = randomBytes(2 * 1024 * 1024);
    await rejectsWith(
      writeArtifact(store, 'backup-1', [{ name: 'terraform.tfstate', data }], backupMeta(), { maxBytes: 1024 * 1024 }),
      'artifact',
      'ArtifactTooLarge',
      /would hold 2097152 bytes of files, more than the 1048576/,
    );
    assert.deepEqual(await store.listObjects(), []);
  });
});
