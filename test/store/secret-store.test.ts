import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { RunnerError } from '../../src/errors.ts';
import { KubeReason } from '../../src/kube/api-errors.ts';
import { readArtifact } from '../../src/store/artifact-read.ts';
import { writeArtifact } from '../../src/store/artifact-write.ts';
import { pruneObjects } from '../../src/store/retention.ts';
import { SecretChunkStore, type SecretChunkStoreOptions } from '../../src/store/secret-store.ts';
import { NAMESPACE, startFakeCluster, type FakeCluster } from '../kube/fake-cluster.support.ts';
import { storeContract } from './store-contract.support.ts';
import { putObject, putPartial } from './stores.support.ts';

const OWNER = {
  apiVersion: 'infrastructure.captf.io/v1alpha1',
  kind: 'TerraformCluster',
  name: 'prod',
  uid: '5f0c7c39-0000-4000-8000-000000000001',
};

function backupStore(h: FakeCluster, options: Partial<SecretChunkStoreOptions> = {}) {
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

// The contract's stores share one fake API server, each store under a prefix of its own (its Secrets
// carry it as their store label, so no store sees another's): a server and client per test cost more
// than most of the cases. What a case sets on the server (alterCreated) is reset after it.
let shared: FakeCluster | undefined;
const stopShared: (() => unknown)[] = [];
after(async () => {
  for (const stop of stopShared) await stop();
});
let stores = 0;

storeContract('Secrets', {
  partialObjects: true,
  async newStore(t) {
    const h = (shared ??= await startFakeCluster({ after: (stop) => void stopShared.push(stop) }));
    t.after(() => (h.fake.alterCreated = undefined));
    const prefix = `captf-backup-contract-${String(++stores).padStart(3, '0')}`;
    const store = backupStore(h, { prefix });
    const nameOf = (object: string, part: number | 'manifest') => `${prefix}-${object}-${part}`;
    /** An attacker with write access to Secrets keeps them consistent: the annotation names the new data's sha256. */
    const replace = (object: string, part: number | 'manifest', key: string, data: Buffer) => {
      const template = h.fake.secret(NAMESPACE, nameOf(object, part)) ?? h.fake.secret(NAMESPACE, nameOf(object, 0))!;
      const labels = {
        ...template.metadata.labels,
        ...(typeof part === 'number' && { 'captf.io/chunk-index': String(part) }),
      };
      h.fake.setSecret(NAMESPACE, {
        ...template,
        metadata: {
          name: nameOf(object, part),
          labels,
          annotations: {
            ...template.metadata.annotations,
            'captf.io/sha256': createHash('sha256').update(data).digest('hex'),
          },
        },
        data: { [key]: data.toString('base64') },
      });
    };
    return {
      store,
      tamper: {
        setChunk: async (object, index, data) => replace(object, index, 'chunk', data),
        removeChunk: async (object, index) => h.fake.removeSecret(NAMESPACE, nameOf(object, index)),
        setManifest: async (object, data) => replace(object, 'manifest', 'manifest', data),
        corruptChunkWrites: async (index) => {
          h.fake.alterCreated = (secret) => {
            if (secret.metadata.labels?.['captf.io/chunk-index'] !== String(index)) return;
            const data = Buffer.from(secret.data.chunk, 'base64');
            data[0] = data[0]! ^ 0xff;
            secret.data.chunk = data.toString('base64');
          };
        },
      },
    };
  },
  async keyedStores(t, keys) {
    const h = await startFakeCluster(t);
    return keys.map((prefix) => backupStore(h, { prefix }));
  },
});

const artifactError = (reason: string, message: RegExp) => (error: unknown) => {
  assert.ok(error instanceof RunnerError, String(error));
  assert.equal(error.kind, 'artifact');
  assert.equal(error.reason, reason);
  assert.match(error.message, message);
  return true;
};

describe('SecretChunkStore', () => {
  test('backup chunks are written as labelled immutable Secrets and read back', async (t) => {
    const h = await startFakeCluster(t);
    const store = backupStore(h);
    const chunks = [randomBytes(700 * 1024), randomBytes(700 * 1024), randomBytes(1000)];
    const manifest = Buffer.from(JSON.stringify({ chunks: chunks.length }));
    await putObject(store, 'b-20250101t000000z', chunks, manifest);

    assert.equal(store.location, `secret:${NAMESPACE}/captf-backup-cluster-prod`);
    const manifestCreated = h.fake.secret(NAMESPACE, 'captf-backup-cluster-prod-b-20250101t000000z-manifest')!.metadata
      .creationTimestamp;
    assert.deepEqual(await store.listObjects(), [
      { name: 'b-20250101t000000z', complete: true, created: manifestCreated },
    ]);
    assert.deepEqual(await store.getManifest('b-20250101t000000z'), manifest);
    for (const [index, chunk] of chunks.entries())
      assert.deepEqual(await store.getChunk('b-20250101t000000z', index), chunk);

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

  test("a write reads the manifest once, lists the chunks once, and checks each chunk in the create's answer, never reading it again", async (t) => {
    const h = await startFakeCluster(t);
    const store = backupStore(h);
    const meta = {
      kind: 'StateBackup',
      terraformVersion: '1.11.4',
      op: 'apply',
      stateFile: 'terraform.tfstate',
      serial: 7,
      lineage: 'l-1',
    } as const;
    await writeArtifact(store, 'backup-1', [{ name: 'terraform.tfstate', data: randomBytes(250_000) }], meta, {
      chunkBytes: 100_000,
    });
    const requests = h.fake.requests.map((r) =>
      `${r.verb} ${r.name ?? r.created ?? ''}`.replace(/captf-backup-cluster-prod-backup-1-/, ''),
    );
    assert.deepEqual(requests, ['get manifest', 'create 0', 'create 1', 'create 2', 'list ', 'create manifest']);
  });

  test('an object whose manifest is missing is not complete', async (t) => {
    const h = await startFakeCluster(t);
    const store = backupStore(h);
    await putPartial(store, 'partial', [Buffer.from('first'), Buffer.from('second')]);
    assert.deepEqual(
      (await store.listObjects()).map(({ name, complete }) => ({ name, complete })),
      [{ name: 'partial', complete: false }],
    );
    assert.equal(await store.getManifest('partial'), undefined);
    assert.deepEqual(await store.listChunks('partial'), [0, 1]);
  });

  test('objects are listed oldest first by their creation, and only those of this store and kind', async (t) => {
    const h = await startFakeCluster(t);
    const store = backupStore(h);
    const at = (iso: string) => (h.fake.now = () => new Date(iso));
    at('2025-03-01T00:00:00Z');
    await putObject(store, 'newer', [Buffer.from('x')], Buffer.from('m'));
    at('2025-01-01T00:00:00Z');
    await putObject(store, 'older', [Buffer.from('x')], Buffer.from('m'));
    await putObject(
      backupStore(h, { prefix: 'captf-backup-cluster-other' }),
      'foreign',
      [Buffer.from('x')],
      Buffer.from('m'),
    );
    await putObject(backupStore(h, { artifactKind: 'plan' }), 'a-plan', [Buffer.from('x')], Buffer.from('m'));

    assert.deepEqual(await store.listObjects(), [
      { name: 'older', complete: true, created: '2025-01-01T00:00:00Z' },
      { name: 'newer', complete: true, created: '2025-03-01T00:00:00Z' },
    ]);
  });

  test('deleteObject removes the manifest first, then every chunk, and nothing else; retention deletes from one list', async (t) => {
    const h = await startFakeCluster(t);
    const store = backupStore(h);
    for (const object of ['drop', 'keep'])
      await putObject(store, object, [Buffer.from('a'), Buffer.from('b')], Buffer.from('m'));
    await store.deleteObject('drop');
    assert.deepEqual(
      h.fake.secrets(NAMESPACE).map((s) => s.metadata.name),
      [
        'captf-backup-cluster-prod-keep-0',
        'captf-backup-cluster-prod-keep-1',
        'captf-backup-cluster-prod-keep-manifest',
      ],
    );
    const deletes = h.fake.requests.filter((r) => r.verb === 'delete').map((r) => r.name);
    assert.equal(deletes[0], 'captf-backup-cluster-prod-drop-manifest', 'the manifest goes first');

    await putObject(store, 'later', [Buffer.from('c')], Buffer.from('m'));
    const before = h.fake.requests.length;
    assert.deepEqual(await pruneObjects(store, { keep: 1 }), { deleted: ['keep'] });
    assert.deepEqual(
      h.fake.requests.slice(before).map((r) => `${r.verb} ${r.name ?? ''}`),
      [
        'list ',
        'delete captf-backup-cluster-prod-keep-manifest',
        'delete captf-backup-cluster-prod-keep-0',
        'delete captf-backup-cluster-prod-keep-1',
      ],
    );
  });

  test("a Secret that is not the store's, or a chunk of other bytes, is reported, never returned", async (t) => {
    const h = await startFakeCluster(t);
    const store = backupStore(h);
    await putPartial(store, 'obj', [Buffer.from('good'), Buffer.from('good')]);
    // Someone else's Secret under the chunk's name, with the store's labels but other bytes.
    const forged = h.fake.secret(NAMESPACE, 'captf-backup-cluster-prod-obj-1')!;
    h.fake.removeSecret(NAMESPACE, 'captf-backup-cluster-prod-obj-1');
    await h.client.createSecret(NAMESPACE, {
      metadata: {
        name: forged.metadata.name,
        labels: forged.metadata.labels,
        annotations: forged.metadata.annotations,
      },
      data: { chunk: Buffer.from('evil').toString('base64') },
    });
    await assert.rejects(store.getChunk('obj', 1), artifactError('ArtifactCorrupt', /does not match its annotation/));
    h.fake.setSecret(NAMESPACE, {
      ...forged,
      metadata: {
        ...forged.metadata,
        labels: { ...forged.metadata.labels, 'captf.io/store': 'captf-backup-cluster-other' },
      },
    });
    await assert.rejects(store.getChunk('obj', 1), artifactError('ArtifactCorrupt', /is not part of obj/));
  });

  test('a retried chunk of the same bytes succeeds; other bytes replace a leftover, but never a chunk of a complete object', async (t) => {
    const h = await startFakeCluster(t);
    const store = backupStore(h);
    const write = await store.create('obj');
    await write.putChunk(0, Buffer.from('same'));
    await write.putChunk(0, Buffer.from('same'));
    await putPartial(store, 'left', [Buffer.from('old')]);
    await putObject(store, 'left', [Buffer.from('new')]);
    assert.deepEqual(await store.getChunk('left', 0), Buffer.from('new'));

    const late = await store.create('done');
    await putObject(store, 'done', [Buffer.from('first')]);
    await assert.rejects(
      late.putChunk(0, Buffer.from('second')),
      artifactError('ArtifactExists', /already exists with other content/),
    );
    assert.deepEqual(await store.getChunk('done', 0), Buffer.from('first'));
  });

  test("with a namespace per object and the example Role, one object's Job cannot read another's artifacts", async (t) => {
    const h = await startFakeCluster(t);
    const other = new SecretChunkStore({
      client: h.client,
      namespace: 'captf-staging',
      prefix: 'captf-plan-tc-staging',
      artifactKind: 'plan',
    });
    await putObject(other, 'plan-1', [Buffer.from('staging secrets')]);
    // The Role of runner/role.example.yaml, bound in the object's own namespace only.
    h.fake.rbac = [
      { verbs: ['create'], apiGroups: [''], resources: ['secrets'], namespaces: [NAMESPACE] },
      { verbs: ['get', 'list', 'delete'], apiGroups: [''], resources: ['secrets'], namespaces: [NAMESPACE] },
    ];
    await putObject(backupStore(h), 'backup-1', [Buffer.from('prod')]);
    for (const read of [
      () => other.getManifest('plan-1'),
      () => other.getChunk('plan-1', 0),
      () => other.listObjects(),
    ]) {
      await assert.rejects(
        read(),
        (error: unknown) => error instanceof RunnerError && error.reason === KubeReason.Forbidden,
      );
    }
  });

  test("a chunk over the Secret limit gets the API server's 422, explained", async (t) => {
    const h = await startFakeCluster(t);
    const write = await backupStore(h).create('obj');
    await assert.rejects(write.putChunk(0, Buffer.alloc(1_048_577)), (error: unknown) => {
      assert.ok(error instanceof RunnerError);
      assert.equal(error.reason, KubeReason.Invalid);
      assert.match(error.message, /data is over 1 MiB/);
      return true;
    });
  });

  test('long object names still make valid Secret names and labels, and list under their full name', async (t) => {
    const h = await startFakeCluster(t);
    const store = backupStore(h);
    const object = `backup-${'x'.repeat(193)}`;
    await putObject(store, object, [Buffer.from('a')], Buffer.from('m'));
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

  test("object names take the directory store's rule; those that are no Secret name are mapped apart", async (t) => {
    const h = await startFakeCluster(t);
    const store = backupStore(h);
    await putPartial(store, 'Backup_1', [Buffer.from('upper')]);
    await putPartial(store, 'backup-1', [Buffer.from('lower')]);
    assert.deepEqual(await store.getChunk('Backup_1', 0), Buffer.from('upper'));
    assert.deepEqual(await store.getChunk('backup-1', 0), Buffer.from('lower'));
    assert.deepEqual((await store.listObjects()).map((o) => o.name).sort(), ['Backup_1', 'backup-1']);
  });

  test('invalid object names and prefixes are refused before any request', async (t) => {
    const h = await startFakeCluster(t);
    for (const object of ['../x', '', '-lead', 'x'.repeat(201)]) {
      await assert.rejects(backupStore(h).create(object), (error: unknown) => {
        assert.ok(error instanceof RunnerError);
        assert.equal(error.reason, 'InvalidObjectName');
        return true;
      });
    }
    assert.throws(() => backupStore(h, { prefix: 'Not/Valid' }), /not a valid Kubernetes name/);
    assert.equal(h.fake.requests.length, 0);
  });

  test('a state backup round-trips through writeArtifact/readArtifact, and retention prunes old ones', async (t) => {
    const h = await startFakeCluster(t);
    const store = backupStore(h);
    const dir = await mkdtemp(join(tmpdir(), 'captf-secret-store-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const state = randomBytes(250_000); // incompressible: three chunks of 100 000 bytes
    const meta = {
      kind: 'StateBackup',
      terraformVersion: '1.11.4',
      op: 'apply',
      stateFile: 'terraform.tfstate',
      serial: 7,
      lineage: 'l-1',
    } as const;
    const at = (iso: string) => (h.fake.now = () => new Date(iso));

    at('2025-01-01T00:00:00Z');
    await writeArtifact(store, 'backup-1', [{ name: 'terraform.tfstate', data: randomBytes(10) }], meta);
    at('2025-01-02T00:00:00Z');
    const manifest = await writeArtifact(store, 'backup-2', [{ name: 'terraform.tfstate', data: state }], meta, {
      chunkBytes: 100_000,
    });
    assert.equal(manifest.chunkCount, 3);

    const { paths } = await readArtifact(store, 'backup-2', {
      into: join(dir, 'out'),
      expect: { kind: 'StateBackup' },
    });
    assert.deepEqual(await readFile(paths['terraform.tfstate']!), state);

    assert.deepEqual(await pruneObjects(store, { keep: 1 }), { deleted: ['backup-1'] });
    assert.ok(h.fake.secrets(NAMESPACE).every((secret) => !secret.metadata.name.includes('backup-1-')));
  });
});

describe('SecretChunkStore: names of a long object', () => {
  test('the documented rule: a prefix past 253 characters keeps 242 and a digest of it all; an invalid prefix is blamed for its length or its characters', async () => {
    const { shortenedName } = await import('../../src/util/kube-names.ts');
    const prefix = `captf-backup-tc-cluster-${'x'.repeat(232)}`;
    assert.equal(shortenedName(prefix), `${prefix.slice(0, 242)}-14329e2c48`);
    assert.equal(shortenedName('captf-backup-tc-short'), 'captf-backup-tc-short');
    const client = {} as SecretChunkStoreOptions['client'];
    assert.throws(
      () => new SecretChunkStore({ client, namespace: 'ns', prefix, artifactKind: 'backup' }),
      (error: unknown) => {
        assert.ok(error instanceof RunnerError && error.reason === 'InvalidStoreLocation');
        assert.match(error.message, /is 256 characters, more than the 253 a Kubernetes name may have/);
        return true;
      },
    );
    assert.throws(
      () => new SecretChunkStore({ client, namespace: 'ns', prefix: 'Captf_Backup', artifactKind: 'backup' }),
      /is not a valid Kubernetes name/,
    );
  });
});
