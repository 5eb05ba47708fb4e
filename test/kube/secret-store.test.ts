import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { RunnerError } from '../../src/errors.ts';
import { KubeReason } from '../../src/kube/api-errors.ts';
import { readArtifact } from '../../src/store/artifact-read.ts';
import { writeArtifact } from '../../src/store/artifact-write.ts';
import { pruneObjects } from '../../src/store/retention.ts';
import { SecretChunkStore, type SecretChunkStoreOptions } from '../../src/store/secret-store.ts';
import { NAMESPACE, startHarness, type Harness } from './harness.ts';

const OWNER = { apiVersion: 'infrastructure.captf.io/v1alpha1', kind: 'TerraformCluster', name: 'prod', uid: '5f0c7c39-0000-4000-8000-000000000001' };

function backupStore(h: Harness, options: Partial<SecretChunkStoreOptions> = {}) {
  return new SecretChunkStore({
    client: h.client,
    namespace: NAMESPACE,
    prefix: 'captf-backup-cluster-prod',
    artifactKind: 'backup',
    labels: { 'captf.io/owner-kind': 'cluster', 'captf.io/owner-name': 'prod' },
    ownerReferences: [OWNER],
    ...options,
  });
}

const artifactError = (reason: string, message: RegExp) => (error: unknown) => {
  assert.ok(error instanceof RunnerError, String(error));
  assert.equal(error.kind, 'artifact');
  assert.equal(error.reason, reason);
  assert.match(error.message, message);
  return true;
};

describe('SecretChunkStore', () => {
  test('backup chunks are written as labelled immutable Secrets and read back', async (t) => {
    const h = await startHarness(t);
    const store = backupStore(h);
    const chunks = [randomBytes(700 * 1024), randomBytes(700 * 1024), randomBytes(1000)];
    const manifest = Buffer.from(JSON.stringify({ chunks: chunks.length }));
    for (const [index, chunk] of chunks.entries()) await store.putChunk('b-20250101t000000z', index, chunk);
    await store.putManifest('b-20250101t000000z', manifest);

    assert.equal(store.location, `secret:${NAMESPACE}/captf-backup-cluster-prod`);
    const manifestCreated = h.fake.secret(NAMESPACE, 'captf-backup-cluster-prod-b-20250101t000000z-manifest')!.metadata.creationTimestamp;
    assert.deepEqual(await store.listObjects(), [{ name: 'b-20250101t000000z', complete: true, created: manifestCreated }]);
    assert.deepEqual(await store.listChunks('b-20250101t000000z'), [0, 1, 2]);
    assert.deepEqual(await store.getManifest('b-20250101t000000z'), manifest);
    for (const [index, chunk] of chunks.entries()) assert.deepEqual(await store.getChunk('b-20250101t000000z', index), chunk);

    const chunk1 = h.fake.secret(NAMESPACE, 'captf-backup-cluster-prod-b-20250101t000000z-1')!;
    assert.equal(chunk1.immutable, true);
    assert.deepEqual(chunk1.metadata.ownerReferences, [OWNER]);
    assert.deepEqual(chunk1.metadata.labels, {
      'captf.io/owner-kind': 'cluster',
      'captf.io/owner-name': 'prod',
      'app.kubernetes.io/managed-by': 'captf-runner',
      'captf.io/store': 'captf-backup-cluster-prod',
      'captf.io/artifact-kind': 'backup',
      'captf.io/object': 'b-20250101t000000z',
      'captf.io/part': 'chunk',
      'captf.io/chunk-index': '1',
    });
    assert.equal(chunk1.metadata.annotations['captf.io/sha256'], createHash('sha256').update(chunks[1]).digest('hex'));
    const manifestSecret = h.fake.secret(NAMESPACE, 'captf-backup-cluster-prod-b-20250101t000000z-manifest')!;
    assert.equal(manifestSecret.metadata.labels['captf.io/part'], 'manifest');
    assert.equal(manifestSecret.metadata.labels['captf.io/chunk-count'], '3');
  });

  test('an object whose manifest is missing is not complete', async (t) => {
    const h = await startHarness(t);
    const store = backupStore(h);
    await store.putChunk('partial', 0, Buffer.from('first'));
    await store.putChunk('partial', 1, Buffer.from('second'));
    assert.deepEqual(
      (await store.listObjects()).map(({ name, complete }) => ({ name, complete })),
      [{ name: 'partial', complete: false }],
    );
    assert.equal(await store.getManifest('partial'), undefined);
    assert.deepEqual(await store.listChunks('partial'), [0, 1]);
  });

  test('objects are listed oldest first, and only those of this store and kind', async (t) => {
    const h = await startHarness(t);
    const store = backupStore(h);
    const at = (iso: string) => (h.fake.now = () => new Date(iso));
    at('2025-03-01T00:00:00Z');
    await store.putChunk('newer', 0, Buffer.from('x'));
    await store.putManifest('newer', Buffer.from('m'));
    at('2025-01-01T00:00:00Z');
    await store.putChunk('older', 0, Buffer.from('x'));
    await store.putManifest('older', Buffer.from('m'));
    await backupStore(h, { prefix: 'captf-backup-cluster-other' }).putManifest('foreign', Buffer.from('m'));
    await backupStore(h, { artifactKind: 'plan' }).putManifest('a-plan', Buffer.from('m'));

    assert.deepEqual(await store.listObjects(), [
      { name: 'older', complete: true, created: '2025-01-01T00:00:00Z' },
      { name: 'newer', complete: true, created: '2025-03-01T00:00:00Z' },
    ]);
  });

  test('deleteObject removes the manifest and every chunk, and nothing else', async (t) => {
    const h = await startHarness(t);
    const store = backupStore(h);
    for (const object of ['keep', 'drop']) {
      await store.putChunk(object, 0, Buffer.from('a'));
      await store.putChunk(object, 1, Buffer.from('b'));
      await store.putManifest(object, Buffer.from('m'));
    }
    await store.deleteObject('drop');
    assert.deepEqual(
      h.fake.secrets(NAMESPACE).map((s) => s.metadata.name),
      ['captf-backup-cluster-prod-keep-0', 'captf-backup-cluster-prod-keep-1', 'captf-backup-cluster-prod-keep-manifest'],
    );
    const deletes = h.fake.requests.filter((r) => r.verb === 'delete').map((r) => r.name);
    assert.equal(deletes[0], 'captf-backup-cluster-prod-drop-manifest', 'the manifest goes first');
    await store.deleteObject('drop'); // already gone: fine
  });

  test('a missing or tampered chunk is reported, never returned', async (t) => {
    const h = await startHarness(t);
    const store = backupStore(h);
    await store.putChunk('obj', 0, Buffer.from('good'));
    h.fake.removeSecret(NAMESPACE, 'captf-backup-cluster-prod-obj-0');
    await assert.rejects(store.getChunk('obj', 0), artifactError('ArtifactIncomplete', /chunk 0 of obj is missing from secret:captf-prod\/captf-backup-cluster-prod/));

    // Someone else's Secret under the chunk's name, with the store's labels but other bytes.
    await store.putChunk('obj', 1, Buffer.from('good'));
    const forged = h.fake.secret(NAMESPACE, 'captf-backup-cluster-prod-obj-1')!;
    h.fake.removeSecret(NAMESPACE, 'captf-backup-cluster-prod-obj-1');
    await h.client.createSecret(NAMESPACE, { metadata: { name: forged.metadata.name, labels: forged.metadata.labels, annotations: forged.metadata.annotations }, data: { chunk: Buffer.from('evil').toString('base64') } });
    await assert.rejects(store.getChunk('obj', 1), artifactError('ArtifactCorrupt', /does not match its annotation/));
  });

  test('a retried put of the same bytes succeeds; other bytes under the same name do not', async (t) => {
    const h = await startHarness(t);
    const store = backupStore(h);
    await store.putChunk('obj', 0, Buffer.from('same'));
    await store.putChunk('obj', 0, Buffer.from('same'));
    await assert.rejects(store.putChunk('obj', 0, Buffer.from('different')), artifactError('ArtifactExists', /already exists with other content/));
  });

  test('a chunk over the Secret limit gets the API server\'s 422, explained', async (t) => {
    const h = await startHarness(t);
    await assert.rejects(backupStore(h).putChunk('obj', 0, Buffer.alloc(1_048_577)), (error: unknown) => {
      assert.ok(error instanceof RunnerError);
      assert.equal(error.reason, KubeReason.Invalid);
      assert.match(error.message, /data is over 1 MiB/);
      return true;
    });
  });

  test('long object names still make valid Secret names and labels, and list under their full name', async (t) => {
    const h = await startHarness(t);
    const store = backupStore(h);
    const object = `backup-${'x'.repeat(193)}`;
    await store.putChunk(object, 0, Buffer.from('a'));
    await store.putManifest(object, Buffer.from('m'));
    assert.deepEqual(
      (await store.listObjects()).map((o) => o.name),
      [object],
    );
    assert.deepEqual(await store.listChunks(object), [0]);
    assert.deepEqual(await store.getChunk(object, 0), Buffer.from('a'));
    for (const secret of h.fake.secrets(NAMESPACE)) {
      assert.ok(secret.metadata.name.length <= 253);
      assert.ok(secret.metadata.labels['captf.io/object'].length <= 63);
    }
  });

  test('object names take the directory store\'s rule; those that are no Secret name are mapped apart', async (t) => {
    const h = await startHarness(t);
    const store = backupStore(h);
    await store.putChunk('Backup_1', 0, Buffer.from('upper'));
    await store.putChunk('backup-1', 0, Buffer.from('lower'));
    assert.deepEqual(await store.getChunk('Backup_1', 0), Buffer.from('upper'));
    assert.deepEqual(await store.getChunk('backup-1', 0), Buffer.from('lower'));
    assert.deepEqual(
      (await store.listObjects()).map((o) => o.name).sort(),
      ['Backup_1', 'backup-1'],
    );
  });

  test('invalid object names and prefixes are refused before any request', async (t) => {
    const h = await startHarness(t);
    for (const object of ['../x', '', '-lead', 'x'.repeat(201)]) {
      await assert.rejects(backupStore(h).putChunk(object, 0, Buffer.from('a')), (error: unknown) => {
        assert.ok(error instanceof RunnerError);
        assert.equal(error.reason, 'InvalidObjectName');
        return true;
      });
    }
    assert.throws(() => backupStore(h, { prefix: 'Not/Valid' }), /not a valid Kubernetes name/);
    assert.equal(h.fake.requests.length, 0);
  });

  test('a state backup round-trips through writeArtifact/readArtifact, and retention prunes old ones', async (t) => {
    const h = await startHarness(t);
    const store = backupStore(h);
    const dir = await mkdtemp(join(tmpdir(), 'captf-secret-store-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const state = randomBytes(250_000); // incompressible: three chunks of 100 000 bytes
    const meta = { kind: 'StateBackup', terraformVersion: '1.11.4', op: 'apply', stateFile: 'terraform.tfstate', serial: 7, lineage: 'l-1' } as const;
    const at = (iso: string) => (h.fake.now = () => new Date(iso));

    at('2025-01-01T00:00:00Z');
    await writeArtifact(store, 'backup-1', [{ name: 'terraform.tfstate', data: randomBytes(10) }], meta);
    at('2025-01-02T00:00:00Z');
    const manifest = await writeArtifact(store, 'backup-2', [{ name: 'terraform.tfstate', data: state }], meta, { chunkBytes: 100_000 });
    assert.equal(manifest.chunkCount, 3);

    const { paths } = await readArtifact(store, 'backup-2', { into: join(dir, 'out'), expect: { kind: 'StateBackup' } });
    assert.deepEqual(await readFile(paths['terraform.tfstate']!), state);

    assert.deepEqual(await pruneObjects(store, { keep: 1 }), { deleted: ['backup-1'] });
    assert.ok(h.fake.secrets(NAMESPACE).every((secret) => !secret.metadata.name.includes('backup-1-')));

    // A chunk lost behind the runner's back: the backup is refused, not half restored.
    h.fake.removeSecret(NAMESPACE, 'captf-backup-cluster-prod-backup-2-1');
    await assert.rejects(readArtifact(store, 'backup-2', { into: join(dir, 'again') }), artifactError('ArtifactIncomplete', /backup-2/));
  });
});

describe('SecretChunkStore: names of a long object', () => {
  test('the documented rule: a prefix past 253 characters keeps 242 and a digest of it all; an invalid prefix is blamed for its length or its characters', async () => {
    const { shortenedName } = await import('../../src/kube/names.ts');
    const prefix = `captf-backup-tc-cluster-${'x'.repeat(232)}`;
    assert.equal(shortenedName(prefix), `${prefix.slice(0, 242)}-14329e2c48`);
    assert.equal(shortenedName('captf-backup-tc-short'), 'captf-backup-tc-short');
    const client = {} as SecretChunkStoreOptions['client'];
    assert.throws(() => new SecretChunkStore({ client, namespace: 'ns', prefix, artifactKind: 'backup' }), (error: unknown) => {
      assert.ok(error instanceof RunnerError && error.reason === 'InvalidStoreLocation');
      assert.match(error.message, /is 256 characters, more than the 253 a Kubernetes name may have/);
      return true;
    });
    assert.throws(() => new SecretChunkStore({ client, namespace: 'ns', prefix: 'Captf_Backup', artifactKind: 'backup' }), /is not a valid Kubernetes name/);
  });
});
