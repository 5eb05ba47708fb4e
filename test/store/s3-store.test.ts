// The S3 store through the AWS SDK against the loopback S3 fake (test/support/fake-s3.ts: SigV4
// checked, conditional writes, list paging, injected faults): the store contract, then what the S3
// API adds. test/store/s3-radosgw.e2e.test.ts runs the same contract against a real server (radosgw);
// the faults, credentials and grants are the fake's to show.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { writeArtifact } from '../../src/store/artifact-write.ts';
import { pruneObjects } from '../../src/store/retention.ts';
import { S3Bucket, S3ChunkStore, s3Target } from '../../src/store/s3-store.ts';
import { FakeS3, REGION } from '../support/fake-s3.ts';
import { storeContract } from './store-contract.support.ts';
import { backupMeta, putObject, putPartial, rejectsWith } from './stores.support.ts';
import { tempDir } from '../support/tf-modules.ts';

const BUCKET = 'captf-artifacts';
const IRSA_ROLE = 'arn:aws:iam::123456789012:role/captf-tc-prod';
let fake: FakeS3;
const buckets: S3Bucket[] = [];
let stores = 0;
/** The retries the SDK waited for, by their number (0 the first): the tests' clients wait none. */
const retries: number[] = [];
const noWait = (retry: number) => {
  retries.push(retry);
  return 0;
};

before(async () => {
  fake = await FakeS3.start({
    grants: {
      AKIDFAKES3EXAMPLE: { secretAccessKey: 'fake-secret-key', prefixes: [''] },
      // As an IAM policy per CAPTF object: its own keys only.
      AKIDPRODONLY: {
        secretAccessKey: 'prod-secret',
        prefixes: [`${BUCKET}/fleet/captf-plan-tc-prod/`, `${BUCKET}/fleet/captf-backup-tc-prod/`],
      },
    },
    podIdentities: {
      'pod-token-prod': { secretAccessKey: 'pod-temporary-secret', prefixes: [`${BUCKET}/fleet/captf-plan-tc-prod/`] },
    },
    webIdentities: {
      'irsa-token-prod': {
        roleArn: IRSA_ROLE,
        grant: { secretAccessKey: 'temporary-secret', prefixes: [`${BUCKET}/fleet/captf-plan-tc-prod/`] },
      },
    },
  });
});
// The S3 store sets this variable as it loads the SDK (src/store/s3-store.ts): a runner's own setting, put back
// here for the test files that share this process (test/support/shard.ts).
const sdkWarningSetting = process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
after(async () => {
  for (const bucket of buckets) await bucket.close();
  await fake.stop();
  if (sdkWarningSetting === undefined) delete process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
  else process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = sdkWarningSetting;
});

/** A client as the runner makes it, told the fake's endpoint and a key explicitly (the e2e tests give them as the environment the SDK reads). */
function openBucket(
  location = `s3://${BUCKET}/fleet`,
  config: S3ClientConfig = {},
  accessKeyId = 'AKIDFAKES3EXAMPLE',
  maxListPages?: number,
) {
  const bucket = new S3Bucket(
    s3Target(location),
    {
      endpoint: fake.endpoint,
      region: REGION,
      credentials: { accessKeyId, secretAccessKey: fake.grants.get(accessKeyId)!.secretAccessKey },
      ...config,
    },
    { AWS_ENDPOINT_URL_S3: fake.endpoint },
    maxListPages,
    noWait,
  );
  buckets.push(bucket);
  return bucket;
}

/** The AWS_* variables of this process. */
const awsVariables = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('AWS_')));
/** The tests that replaced the AWS_* variables: each puts back what it found, once, however many clients it made. */
const replacedAws = new WeakSet<TestContext>();

/** A client as the runner makes it in a pod: nothing given but the environment (the AWS_* variables replaced by `environment` for the test). */
function bucketInPod(t: TestContext, environment: Record<string, string>): S3Bucket {
  if (!replacedAws.has(t)) {
    replacedAws.add(t);
    const found = awsVariables();
    t.after(() => {
      for (const key of Object.keys(awsVariables())) delete process.env[key];
      Object.assign(process.env, found);
    });
  }
  for (const key of Object.keys(awsVariables())) delete process.env[key];
  Object.assign(process.env, environment);
  const bucket = new S3Bucket(s3Target(`s3://${BUCKET}/fleet`));
  buckets.push(bucket);
  return bucket;
}

storeContract('S3', {
  partialObjects: true,
  async newStore() {
    const prefix = `captf-backup-tc-test-${++stores}`;
    const store = new S3ChunkStore(openBucket(), prefix);
    const key = (object: string, file: string) => `fleet/${prefix}/${object}/${file}`;
    const chunkKey = (object: string, index: number) => key(object, `chunk-${String(index).padStart(5, '0')}`);
    return {
      store,
      tamper: {
        setChunk: async (object, index, data) => fake.setObject(BUCKET, chunkKey(object, index), data),
        removeChunk: async (object, index) => fake.removeObject(BUCKET, chunkKey(object, index)),
        setManifest: async (object, data) => fake.setObject(BUCKET, key(object, 'manifest.json'), data),
        corruptChunkWrites: async (index) => {
          fake.alterPut = (k, data) =>
            k.startsWith(`fleet/${prefix}/`) && k.endsWith(`chunk-${String(index).padStart(5, '0')}`)
              ? Buffer.concat([Buffer.from([data[0]! ^ 0xff]), data.subarray(1)])
              : data;
        },
      },
    };
  },
  async keyedStores(_t, keys) {
    const bucket = openBucket();
    return keys.map((prefix) => new S3ChunkStore(bucket, prefix));
  },
});

describe('s3Target', () => {
  it('a bucket and a key prefix; the location as given, without credentials', () => {
    assert.deepEqual(s3Target('s3://captf-artifacts/fleet/eu/'), {
      bucket: 'captf-artifacts',
      keyPrefix: 'fleet/eu/',
      location: 's3://captf-artifacts/fleet/eu',
    });
    assert.deepEqual(s3Target('s3://captf-artifacts'), {
      bucket: 'captf-artifacts',
      keyPrefix: '',
      location: 's3://captf-artifacts',
    });
    for (const bad of [
      's3://Bucket/x',
      's3://a/x',
      's3://captf/../x',
      's3://captf/a//b',
      's3://user:pw@captf/x',
      'http://captf/x',
    ]) {
      assert.throws(() => s3Target(bad), { reason: 'InvalidStoreLocation' }, bad);
    }
  });
});

describe('S3 store: what the S3 API adds', () => {
  const newStore = (config: S3ClientConfig = {}) =>
    new S3ChunkStore(openBucket(undefined, config), `captf-backup-tc-test-${++stores}`);
  const KEYS = (store: S3ChunkStore) => fake.keys(BUCKET, `fleet/${store.location.split('/').at(-1)}/`);

  it('lays out an object as chunk-NNNNN keys and a manifest.json put last, each with If-None-Match: * and its SHA-256', async () => {
    const store = newStore();
    const from = fake.requests.length;
    await putObject(store, 'backup-1', [Buffer.from('a'), Buffer.from('b')], Buffer.from('{}'));
    assert.equal(store.location, `s3://${BUCKET}/fleet/${store.location.split('/').at(-1)}`);
    assert.deepEqual(
      KEYS(store).map((k) => k.split('/').slice(2).join('/')),
      ['backup-1/chunk-00000', 'backup-1/chunk-00001', 'backup-1/manifest.json'],
    );
    const puts = fake.requests
      .slice(from)
      .filter((r) => r.method === 'PUT')
      .map((r) => r.key.split('/').at(-1));
    assert.deepEqual(puts, ['chunk-00000', 'chunk-00001', 'manifest.json']);
  });

  it('a put whose answer was lost is retried by the SDK, finds its own object (412), and succeeds', async () => {
    const store = newStore();
    fake.injectFaults({ method: 'PUT' }, { loseAnswer: true });
    const from = fake.requests.length;
    await putObject(store, 'backup-1', [Buffer.from('once')]);
    assert.deepEqual(await store.getChunk('backup-1', 0), Buffer.from('once'));
    const statuses = fake.requests
      .slice(from)
      .filter((r) => r.method === 'PUT')
      .map((r) => r.status);
    assert.deepEqual(statuses.slice(0, 2), [-3, 412], 'served, answer lost, then refused as existing');
  });

  it('503 SlowDown and 500 are retried with backoff; past the attempts they fail StoreUnreachable, nothing complete', async () => {
    const store = newStore();
    fake.injectFaults({ method: 'PUT' }, { status: 503 }, { status: 500 });
    let from = retries.length;
    await putObject(store, 'backup-1', [Buffer.from('x')]);
    assert.deepEqual(await store.getChunk('backup-1', 0), Buffer.from('x'));
    assert.deepEqual(retries.slice(from), [0, 1], 'two retries, each after the delay the client was given');
    fake.injectFaults({ method: 'PUT' }, { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 });
    from = retries.length;
    await rejectsWith(
      writeArtifact(store, 'backup-2', [{ name: 'terraform.tfstate', data: Buffer.from('{}') }], backupMeta()),
      'io',
      'StoreUnreachable',
      /SlowDown.*a retry can help/,
    );
    assert.equal(retries.slice(from).length, 3, 'four attempts: three retries');
    assert.equal(await store.getManifest('backup-2'), undefined);
  });

  it('a socket taken and never answered fails within the request timeout, not never', async () => {
    const store = newStore({ requestHandler: { requestTimeout: 300, connectionTimeout: 300 }, maxAttempts: 2 });
    fake.injectFaults({ method: 'GET' }, { hang: true }, { hang: true });
    const started = Date.now();
    await rejectsWith(store.listObjects(), 'io', 'StoreUnreachable', /did not answer in time|could not be reached/);
    assert.ok(Date.now() - started < 5_000);
  });

  it('lists in pages: every object, whatever the page size', async () => {
    const store = newStore();
    for (const object of ['b-1', 'b-2', 'b-3']) await putObject(store, object, [Buffer.from('1'), Buffer.from('2')]);
    fake.pageSize = 2;
    try {
      const from = fake.requests.length;
      assert.deepEqual(
        (await store.listObjects()).map((o) => o.name),
        ['b-1', 'b-2', 'b-3'],
      );
      assert.equal(
        fake.requests.slice(from).filter((r) => r.list !== undefined).length,
        5,
        'nine keys in pages of two',
      );
      assert.deepEqual(await pruneObjects(store, { keep: 1, prefix: 'b-' }), { deleted: ['b-1', 'b-2'] });
      assert.deepEqual(
        (await store.listObjects()).map((o) => o.name),
        ['b-3'],
      );
    } finally {
      fake.pageSize = 1000;
    }
  });

  it('a listing that never ends is given up after its bound of pages: StoreFailed, the prefix named', async () => {
    const store = new S3ChunkStore(openBucket(undefined, {}, undefined, 20), 'captf-backup-tc-endless');
    fake.endlessLists = true;
    try {
      const from = fake.requests.length;
      await rejectsWith(
        store.listObjects(),
        'io',
        'StoreFailed',
        /listed 20 pages under fleet\/captf-backup-tc-endless\/ and still had more/,
      );
      assert.equal(fake.requests.length - from, 20);
    } finally {
      fake.endlessLists = false;
    }
  });

  it('retention lists only the family it prunes, by its prefix', async () => {
    const store = newStore();
    await putObject(store, 'backup-a-1', [Buffer.from('x')]);
    await putObject(store, 'backup-a-2', [Buffer.from('x')]);
    await putObject(store, 'backup-b-1', [Buffer.from('x')]);
    const from = fake.requests.length;
    assert.deepEqual(await pruneObjects(store, { keep: 1, prefix: 'backup-a-' }), { deleted: ['backup-a-1'] });
    const lists = fake.requests
      .slice(from)
      .filter((r) => r.list !== undefined)
      .map((r) => r.list!.split('/').at(-1));
    assert.deepEqual(lists, ['backup-a-']);
  });

  it('records sit beside the objects, are replaced whole, and never list as objects', async () => {
    const store = newStore();
    await putObject(store, 'backup-1', [Buffer.from('x')]);
    await store.putRecord('blocked-a.json', Buffer.from('first'));
    await store.putRecord('blocked-a.json', Buffer.from('second'));
    assert.deepEqual(await store.getRecord('blocked-a.json', 100), Buffer.from('second'));
    assert.deepEqual(await store.listRecords('blocked-'), ['blocked-a.json']);
    assert.deepEqual(
      (await store.listObjects()).map((o) => o.name),
      ['backup-1'],
    );
    await assert.rejects(store.getRecord('blocked-a.json', 3), /more than 3 bytes/);
    await store.deleteRecord('blocked-a.json');
    assert.equal(await store.getRecord('blocked-a.json', 100), undefined);
  });

  it('a partial object left by a writer that died is removed before the name is written again', async () => {
    const store = newStore();
    await putPartial(store, 'backup-1', [Buffer.from('a'), Buffer.from('b'), Buffer.from('c')]);
    await putObject(store, 'backup-1', [Buffer.from('new')]);
    assert.deepEqual(await store.listChunks('backup-1'), [0]);
  });

  it('every request is signed (SigV4): a wrong secret is refused, StoreAccessDenied, nothing written', async () => {
    const bucket = new S3Bucket(s3Target(`s3://${BUCKET}/fleet`), {
      endpoint: fake.endpoint,
      region: REGION,
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIDFAKES3EXAMPLE', secretAccessKey: 'not-the-secret' },
    });
    buckets.push(bucket);
    const store = new S3ChunkStore(bucket, 'captf-backup-tc-signed');
    await rejectsWith(store.create('backup-1'), 'io', 'StoreAccessDenied', /SignatureDoesNotMatch/);
    assert.deepEqual(fake.keys(BUCKET, 'fleet/captf-backup-tc-signed/'), []);
  });

  it('credentials as the SDK finds them: a web identity token (IRSA) exchanged at STS for temporary ones, nothing given but the environment', async (t) => {
    const token = join(await tempDir(t), 'token');
    await writeFile(token, 'irsa-token-prod');
    // The environment an EKS pod with IRSA gets (the endpoints point at the fake), and nothing else.
    const bucket = bucketInPod(t, fake.webIdentityEnv(IRSA_ROLE, token));
    const store = new S3ChunkStore(bucket, 'captf-plan-tc-prod');
    const from = fake.requests.length;
    await putObject(store, 'plan-irsa', [Buffer.from('via web identity')]);
    assert.deepEqual(await store.getChunk('plan-irsa', 0), Buffer.from('via web identity'));
    const keys = new Set(
      fake.requests
        .slice(from)
        .map((r) => r.accessKeyId)
        .filter(Boolean),
    );
    assert.equal(keys.size, 1);
    const temporaryKey = [...keys][0]!;
    assert.match(temporaryKey, /^ASIA/, 'the temporary credentials STS gave for the role');
    await rejectsWith(
      new S3ChunkStore(bucket, 'captf-backup-tc-prod').listObjects(),
      'io',
      'StoreAccessDenied',
      /AccessDenied/,
    );
    // The temporary key is worth nothing without the session token STS gave with it.
    const tokenless = openBucket(undefined, {
      credentials: { accessKeyId: temporaryKey, secretAccessKey: 'temporary-secret' },
    });
    await rejectsWith(
      new S3ChunkStore(tokenless, 'captf-plan-tc-prod').getChunk('plan-irsa', 0),
      'io',
      'StoreAccessDenied',
      /InvalidToken/,
    );
    // A token STS does not accept for the role: no credentials, nothing written.
    await writeFile(token, 'irsa-token-forged');
    const forged = bucketInPod(t, fake.webIdentityEnv(IRSA_ROLE, token));
    await rejectsWith(
      putObject(new S3ChunkStore(forged, 'captf-plan-tc-prod'), 'plan-forged', [Buffer.from('x')]),
      'io',
      'StoreAccessDenied',
      /sts:AssumeRoleWithWebIdentity|AccessDenied/,
    );
    assert.deepEqual(fake.keys(BUCKET, 'fleet/captf-plan-tc-prod/plan-forged/'), []);
  });

  it("credentials as the SDK finds them: EKS Pod Identity (its agent's URL and the pod's token), nothing given but the environment", async (t) => {
    const token = join(await tempDir(t), 'eks-pod-identity-token');
    await writeFile(token, 'pod-token-prod');
    const store = new S3ChunkStore(bucketInPod(t, fake.podIdentityEnv(token)), 'captf-plan-tc-prod');
    const from = fake.requests.length;
    await putObject(store, 'plan-pod-identity', [Buffer.from('via pod identity')]);
    assert.deepEqual(await store.getChunk('plan-pod-identity', 0), Buffer.from('via pod identity'));
    const keys = new Set(
      fake.requests
        .slice(from)
        .map((r) => r.accessKeyId)
        .filter(Boolean),
    );
    assert.equal(keys.size, 1);
    assert.match([...keys][0]!, /^ASIA/, "the temporary credentials the agent gave for the pod's role");
    await rejectsWith(
      new S3ChunkStore(bucketInPod(t, fake.podIdentityEnv(token)), 'captf-backup-tc-prod').listObjects(),
      'io',
      'StoreAccessDenied',
      /AccessDenied/,
    );
  });

  it("one object's credentials reach only its own keys: another object's artifacts are AccessDenied", async () => {
    const other = new S3ChunkStore(openBucket(), 'captf-plan-tc-staging');
    await putObject(other, 'plan-1', [randomBytes(100)]);
    const prodBucket = openBucket(undefined, {}, 'AKIDPRODONLY');
    const own = new S3ChunkStore(prodBucket, 'captf-plan-tc-prod');
    await putObject(own, 'plan-1', [Buffer.from('prod')]);
    assert.deepEqual(await own.getChunk('plan-1', 0), Buffer.from('prod'));
    const intruder = new S3ChunkStore(prodBucket, 'captf-plan-tc-staging');
    const denied = await rejectsWith(
      intruder.getChunk('plan-1', 0),
      'io',
      'StoreAccessDenied',
      /AccessDenied.*s3:GetObject/,
    );
    assert.ok(!denied.message.includes('prod-secret'));
    await rejectsWith(intruder.listObjects(), 'io', 'StoreAccessDenied');
  });
});
