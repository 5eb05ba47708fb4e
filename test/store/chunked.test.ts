import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFile, cp, mkdir, readdir, readFile, rename, stat, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { readArtifact } from '../../src/store/artifact-read.ts';
import { writeArtifact, type ArtifactFile } from '../../src/store/artifact-write.ts';
import { DirStore, openDirObject } from '../../src/store/dir-store.ts';
import type { ArtifactManifest } from '../../src/store/manifest.ts';
import type { ChunkStore } from '../../src/store/store.ts';
import {
  backupMeta,
  buildTar,
  fileEntry,
  INPUTS_HASH,
  planMeta,
  rejectsWith,
  sha256,
  storeCraftedBackup,
  tempDir,
} from './helpers.ts';

const PLAN = Buffer.from('PK\u0003\u0004 pretend this is a saved plan');
const LOCK = Buffer.from('# .terraform.lock.hcl\n');

async function writePlan(store: ChunkStore, object = 'plan-1', options = {}) {
  return writeArtifact(store, object, [{ name: 'plan.tfplan', data: PLAN }, { name: '.terraform.lock.hcl', data: LOCK }], planMeta(PLAN), options);
}

const STATE_BYTES = 600_000;

/** A random (incompressible) state split into chunks of `chunkBytes` (100 kB: the state gives 7 of them). */
async function writeBigBackup(t: Parameters<typeof tempDir>[0], bytes = STATE_BYTES, chunkBytes = 100_000) {
  const root = await tempDir(t);
  const store = new DirStore(join(root, 'backups'));
  const source = join(root, 'terraform.tfstate');
  const content = randomBytes(bytes);
  await writeFile(source, content);
  const manifest = await writeArtifact(store, 'backup-1', [{ name: 'terraform.tfstate', path: source }], backupMeta(), { chunkBytes });
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
      expect: { kind: 'PlanArtifact', planHash: sha256(PLAN), inputsHash: INPUTS_HASH },
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
    assert.deepEqual(await store.listChunks('backup-1'), manifest.chunks.map((chunk) => chunk.index));

    const { paths } = await readArtifact(store, 'backup-1', { into: join(root, 'out'), expect: { kind: 'StateBackup' } });
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
      putChunk: async (object: string, index: number, data: Buffer) => {
        calls.push(`chunk ${index}`);
        assert.equal(await inner.getManifest(object), undefined, 'no manifest while chunks are written');
        await inner.putChunk(object, index, data);
      },
      putManifest: async (object: string, manifest: Buffer) => {
        calls.push('manifest');
        await inner.putManifest(object, manifest);
      },
    });
    const big = randomBytes(10_000);
    const manifest = await writeArtifact(recording, 'b', [{ name: 'terraform.tfstate', data: big }], backupMeta(), { chunkBytes: 1024 });
    assert.equal(calls.length, manifest.chunkCount + 1);
    assert.equal(calls.at(-1), 'manifest');
    assert.deepEqual(calls.slice(0, -1), manifest.chunks.map((chunk) => `chunk ${chunk.index}`));
    assert.deepEqual((await readdir(join(root, 'b'))).filter((name) => name.endsWith('.tmp')), [], 'no temp file left');
  });

  it('leaves no object behind when a chunk cannot be stored', async (t) => {
    const root = await tempDir(t);
    const inner = new DirStore(join(root, 'store'));
    const failing: ChunkStore = Object.assign(Object.create(inner) as DirStore, {
      putChunk: async (object: string, index: number, data: Buffer) => {
        if (index === 2) throw new Error('disk full');
        await inner.putChunk(object, index, data);
      },
    });
    const source = join(root, 'terraform.tfstate');
    await writeFile(source, randomBytes(1_000_000));
    await rejectsWith(
      writeArtifact(failing, 'b', [{ name: 'terraform.tfstate', path: source }], backupMeta(), { chunkBytes: 100_000 }),
      'io',
      'ArtifactWriteFailed',
      /disk full/,
    );
    assert.deepEqual(await inner.listObjects(), []);
  });

  it('refuses to vouch for a chunk the store changed', async (t) => {
    const root = await tempDir(t);
    const inner = new DirStore(root);
    const flipping: ChunkStore = Object.assign(Object.create(inner) as DirStore, {
      putChunk: async (object: string, index: number, data: Buffer) => {
        const stored = Buffer.from(data);
        if (index === 1) stored[0] = stored[0]! ^ 0xff;
        await inner.putChunk(object, index, stored);
      },
    });
    await rejectsWith(
      writeArtifact(flipping, 'b', [{ name: 'terraform.tfstate', data: randomBytes(5_000) }], backupMeta(), { chunkBytes: 1024 }),
      'io',
      'ArtifactWriteUnverified',
      /chunk 1/,
    );
    assert.equal(await inner.getManifest('b'), undefined);
  });

  it('never overwrites a complete object, but replaces the leftovers of an unfinished one', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(root);
    await writePlan(store);
    await rejectsWith(writePlan(store), 'artifact', 'ArtifactExists');

    await store.putChunk('plan-2', 0, Buffer.from('stale'));
    await store.putChunk('plan-2', 7, Buffer.from('stale'));
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
    await rejectsWith(writeArtifact(store, 'p', files, planMeta(Buffer.from('another plan'))), 'internal', 'InternalError', /planHash/);
    await rejectsWith(writeArtifact(store, 'p', files, { ...planMeta(PLAN), planFile: 'missing.tfplan' }), 'internal', 'InternalError');
    await rejectsWith(writeArtifact(store, 'p', [{ name: '../plan.tfplan', data: PLAN }], planMeta(PLAN)), 'internal', 'InternalError');
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

describe('readArtifact refuses a damaged object, leaving nothing extracted', () => {
  type Damage = { name: string; reason: string; message: RegExp; damage: (objectDir: string, manifest: ArtifactManifest) => Promise<void> };

  const cases: Damage[] = [
    { name: 'a missing manifest (partial object)', reason: 'ArtifactIncomplete', message: /no manifest.*partial/, damage: (dir) => unlink(join(dir, 'manifest.json')) },
    { name: 'a missing chunk', reason: 'ArtifactIncomplete', message: /lacks chunk\(s\) 2 of/, damage: (dir) => unlink(chunkPath(dir, 2)) },
    {
      name: 'an extra chunk',
      reason: 'ArtifactCorrupt',
      message: /beyond the/,
      damage: (dir, manifest) => copyFile(chunkPath(dir, 0), chunkPath(dir, manifest.chunkCount)),
    },
    {
      name: 'chunks 1 and 2 swapped',
      reason: 'ArtifactCorrupt',
      message: /chunk 1 whose sha256 differs/,
      damage: async (dir) => {
        await rename(chunkPath(dir, 1), join(dir, 'swap'));
        await rename(chunkPath(dir, 2), chunkPath(dir, 1));
        await rename(join(dir, 'swap'), chunkPath(dir, 2));
      },
    },
    {
      name: 'a corrupt byte',
      reason: 'ArtifactCorrupt',
      message: /chunk 3 whose sha256 differs/,
      damage: async (dir) => {
        const data = await readFile(chunkPath(dir, 3));
        data[5000] = data[5000]! ^ 0x01; // one bit
        await writeFile(chunkPath(dir, 3), data);
      },
    },
    { name: 'a truncated chunk', reason: 'ArtifactCorrupt', message: /chunk 4 of 99999 bytes/, damage: (dir) => truncate(chunkPath(dir, 4), 99_999) },
    {
      name: 'a manifest chunk sha256 edited',
      reason: 'ArtifactCorrupt',
      message: /chunk 0 whose sha256 differs/,
      damage: (dir) => editManifest(dir, (manifest) => void (manifest.chunks[0].sha256 = sha256('other'))),
    },
    {
      name: 'a manifest chunk size edited',
      reason: 'ArtifactCorrupt',
      message: /invalid manifest.*totalBytes/s,
      damage: (dir) => editManifest(dir, (manifest) => void (manifest.chunks[0].bytes += 1)),
    },
    {
      name: 'a manifest chunk size and total edited together',
      reason: 'ArtifactCorrupt',
      message: /chunk 0 of 100000 bytes; the manifest lists 100001/,
      damage: (dir) => editManifest(dir, (manifest) => void ((manifest.chunks[0].bytes += 1), (manifest.totalBytes += 1))),
    },
    {
      name: 'a manifest chunk count edited',
      reason: 'ArtifactCorrupt',
      message: /chunkCount/,
      damage: (dir) => editManifest(dir, (manifest) => void (manifest.chunkCount -= 1)),
    },
    {
      name: 'a chunk dropped from the manifest and the store alike',
      reason: 'ArtifactCorrupt',
      message: /together do not match the manifest sha256/,
      damage: async (dir, manifest) => {
        await unlink(chunkPath(dir, manifest.chunkCount - 1));
        await editManifest(dir, (edited) => {
          const dropped = edited.chunks.pop();
          edited.chunkCount -= 1;
          edited.totalBytes -= dropped.bytes;
        });
      },
    },
    {
      name: 'the whole sha256 edited (found only after every chunk was read)',
      reason: 'ArtifactCorrupt',
      message: /together do not match the manifest sha256/,
      damage: (dir) => editManifest(dir, (manifest) => void (manifest.sha256 = sha256('other'))),
    },
    {
      name: 'a file sha256 edited',
      reason: 'ArtifactCorrupt',
      message: /"terraform.tfstate" whose sha256 differs/,
      damage: (dir) => editManifest(dir, (manifest) => void (manifest.files[0].sha256 = sha256('other'))),
    },
    {
      name: 'a file size edited',
      reason: 'ArtifactCorrupt',
      message: new RegExp(`of ${STATE_BYTES} bytes; the manifest lists ${STATE_BYTES + 1}`),
      damage: (dir) => editManifest(dir, (manifest) => void (manifest.files[0].bytes += 1)),
    },
    { name: 'a manifest that is not JSON', reason: 'ArtifactCorrupt', message: /not valid JSON/, damage: (dir) => writeFile(join(dir, 'manifest.json'), '{"apiV') },
    {
      // A backup no restore of this runner can use: not ArtifactMismatch, whose exit 5 asks for a new plan.
      name: 'a manifest of another apiVersion',
      reason: 'BackupMismatch',
      message: /apiVersion "runner.captf.io\/v2"/,
      damage: (dir) => editManifest(dir, (manifest) => void (manifest.apiVersion = 'runner.captf.io/v2')),
    },
  ];

  for (const { name, reason, message, damage } of cases) {
    it(`${name}: ${reason}`, async (t) => {
      const { root, store, manifest, objectDir } = await copyOfBigBackup(t);
      await damage(objectDir, manifest);
      const into = join(root, 'out');
      const error = await rejectsWith(readArtifact(store, 'backup-1', { into, expect: { kind: 'StateBackup' } }), 'artifact', reason, message);
      assert.match(error.message, /state backup "backup-1"/);
      assert.match(error.message, /Restore from another complete backup|this runner reads/);
      await assert.rejects(stat(into), { code: 'ENOENT' }, 'the extraction directory is removed');
    });
  }

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
    await rejectsWith(readArtifact(store, 'plan-1', { into, expect: { kind: 'StateBackup' } }), 'artifact', 'BackupMismatch', /is a "PlanArtifact", not a StateBackup/);
    const wrongPlan = await rejectsWith(
      readArtifact(store, 'plan-1', { into, expect: { kind: 'PlanArtifact', planHash: sha256('approved other') } }),
      'artifact',
      'ArtifactMismatch',
      /not the approved plan.*run a new plan/s,
    );
    assert.deepEqual(wrongPlan.detail, { location: store.location, object: 'plan-1', expected: sha256('approved other'), found: sha256(PLAN) });
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

  const unsafe: { name: string; entries: Parameters<typeof buildTar>[0]; reason?: string; message: RegExp }[] = [
    { name: 'a "../" path', entries: [{ header: { name: '../x' }, data: STATE }, state], message: /"\.\.\/x": a path that climbs out/ },
    { name: 'a nested "../" path', entries: [{ header: { name: 'a/../../x' }, data: STATE }, state], message: /climbs out/ },
    { name: 'an absolute path', entries: [{ header: { name: '/etc/x' }, data: STATE }, state], message: /"\/etc\/x": an absolute path/ },
    { name: 'a symlink', entries: [{ header: { name: 'terraform.tfstate', type: 'symlink', linkname: '/etc/passwd' } }], message: /a symlink/ },
    { name: 'a hardlink', entries: [state, { header: { name: 'x', type: 'link', linkname: 'terraform.tfstate' } }], message: /"x": a link/ },
    { name: 'a character device', entries: [{ header: { name: 'null', type: 'character-device', devmajor: 1, devminor: 3 } }, state], message: /a character-device/ },
    { name: 'a block device', entries: [{ header: { name: 'sda', type: 'block-device', devmajor: 8, devminor: 0 } }, state], message: /a block-device/ },
    { name: 'a FIFO', entries: [{ header: { name: 'pipe', type: 'fifo' } }, state], message: /a fifo/ },
    { name: 'a directory', entries: [{ header: { name: 'dir', type: 'directory', mode: 0o755 } }, state], message: /a directory/ },
    { name: 'an unlisted entry', entries: [state, { header: { name: 'extra.sh' }, data: STATE }], message: /"extra.sh": not listed in the manifest/ },
    { name: 'a duplicate entry', entries: [state, state], message: /a second entry with the same name/ },
    {
      name: 'an entry larger than the manifest lists',
      entries: [{ header: { name: 'terraform.tfstate' }, data: Buffer.concat([STATE, Buffer.alloc(1000)]) }],
      message: /1024 bytes, more than the 24/,
    },
    { name: 'a listed file missing', entries: [], reason: 'ArtifactCorrupt', message: /lacks listed file\(s\) "terraform.tfstate"/ },
  ];

  for (const { name, entries, reason = 'ArtifactUnsafe', message } of unsafe) {
    it(`refuses ${name}`, async (t) => {
      const root = await tempDir(t);
      const store = new DirStore(join(root, 'store'));
      await storeCraftedBackup(store, 'b', { tar: await buildTar(entries), files: listedState });
      const into = join(root, 'out');
      await rejectsWith(readArtifact(store, 'b', { into }), 'artifact', reason, message);
      await assert.rejects(stat(into), { code: 'ENOENT' }, 'nothing is left extracted');
      assert.deepEqual(await readdir(root), ['store'], 'nothing is written beside the extraction directory');
    });
  }

  it('extracts a crafted, well-formed artifact (the fixture itself is sound)', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(join(root, 'store'));
    await storeCraftedBackup(store, 'b', { tar: await buildTar([state]), files: listedState });
    const { paths } = await readArtifact(store, 'b', { into: join(root, 'out') });
    assert.deepEqual(await readFile(paths['terraform.tfstate']!), STATE);
  });

  it('stops a payload that unpacks far beyond its listed files (decompression bomb)', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(join(root, 'store'));
    // Zero blocks after the tar read as end-of-archive padding; 4 MiB of them gzip to about 4 kB and
    // unpack to over 300 times what the manifest allows (its file and tar's headers: 12,800 bytes).
    const tarWithPadding = Buffer.concat([await buildTar([state]), Buffer.alloc(4 * 1024 * 1024)]);
    await storeCraftedBackup(store, 'b', { tar: tarWithPadding, files: listedState });
    await rejectsWith(readArtifact(store, 'b', { into: join(root, 'out') }), 'artifact', 'ArtifactUnsafe', /unpacks to more than the 12800 bytes/);
  });

  it('refuses a payload that is not gzip', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(join(root, 'store'));
    await storeCraftedBackup(store, 'b', { tar: Buffer.alloc(0), gzipped: Buffer.from('not gzip at all'), files: listedState });
    await rejectsWith(readArtifact(store, 'b', { into: join(root, 'out') }), 'artifact', 'ArtifactCorrupt', /not a valid gzipped tar/);
  });

  it('refuses a gzip of something that is not a tar', async (t) => {
    const root = await tempDir(t);
    const store = new DirStore(join(root, 'store'));
    await storeCraftedBackup(store, 'b', { tar: Buffer.alloc(0), gzipped: gzipSync(Buffer.alloc(2048, 'x')), files: listedState });
    await rejectsWith(readArtifact(store, 'b', { into: join(root, 'out') }), 'artifact', 'ArtifactCorrupt', /not a valid gzipped tar/);
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
    const error = await rejectsWith(readArtifact(watched.store, 'backup-1', { into }), 'artifact', 'ArtifactTooLarge', /declares files of 536870912 bytes, more than the 134217728 .*--max-artifact-bytes/);
    assert.deepEqual(watched.reads, [], 'no chunk was read');
    assert.equal(error.detail?.maxBytes, 134217728);
    await assert.rejects(stat(into), { code: 'ENOENT' }, 'nothing was extracted');
    // With a limit that allows it, the reader goes on and finds the lie.
    await rejectsWith(readArtifact(store, 'backup-1', { into, maxBytes: 1024 * 1024 * 1024 }), 'artifact', 'ArtifactCorrupt');
    // The payload alone: 600 kB in 100 kB chunks against a limit of 500 kB.
    const fresh = await copyOfBigBackup(t);
    await rejectsWith(readArtifact(fresh.store, 'backup-1', { into, maxBytes: 500_000 }), 'artifact', 'ArtifactTooLarge', /declares a payload of \d+ bytes/);
  });

  it('a chunk listed at most 16 MiB: a manifest listing a bigger one is corrupt', async (t) => {
    const { root, store, objectDir } = await copyOfBigBackup(t);
    await editManifest(objectDir, (manifest) => {
      manifest.chunks[0]!.bytes = 17 * 1024 * 1024;
      manifest.totalBytes = (manifest.chunks as { bytes: number }[]).reduce((sum, chunk) => sum + chunk.bytes, 0);
    });
    await rejectsWith(readArtifact(store, 'backup-1', { into: join(root, 'out') }), 'artifact', 'ArtifactCorrupt', /invalid manifest/);
  });

  it('a chunk swapped for a 1.5 GiB file (sparse) is refused having read one byte more than listed', async (t) => {
    const { root, store, manifest, objectDir } = await copyOfBigBackup(t);
    await truncate(chunkPath(objectDir, 0), 1.5 * 1024 * 1024 * 1024);
    const listed = manifest.chunks[0]!.bytes;
    assert.equal((await store.getChunk('backup-1', 0, listed)).length, listed + 1);
    await rejectsWith(readArtifact(store, 'backup-1', { into: join(root, 'out') }), 'artifact', 'ArtifactCorrupt', /chunk 0 of more than the 100000 bytes the manifest lists/);
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
