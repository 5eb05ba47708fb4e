// The S3 store against a real S3 server: Ceph's radosgw on a one-OSD cluster on loopback (test/support/radosgw.ts),
// started once for this file and stopped after it. The store contract as test/store/s3-store.test.ts runs it
// against the fake (which keeps the injected faults and the store that changes what it is sent), then what this
// server does differently from AWS's documented S3 and the fake (contract/sections/artifacts.md, "S3-compatible
// services"). In the e2e group (its .e2e.test.ts name): it needs the radosgw, ceph-mon and ceph-osd
// packages, which .ci/run installs.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { before, describe, it } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { S3Bucket, S3ChunkStore, s3Target } from '../../src/store/s3-store.ts';
import { RGW_REGION, type RadosgwServer, useRadosgw } from '../support/radosgw.ts';
import { isProcessRunning } from '../support/tf-modules.ts';
import { storeContract } from './store-contract.support.ts';
import { putObject } from './stores.support.ts';

const BUCKET = 'captf-artifacts';
const radosgw = useRadosgw();
let server: RadosgwServer;
let stores = 0;
/** The commands each client sent, in order, by name (GetObjectCommand, PutObjectCommand, …). */
const sent = new Map<S3Client, string[]>();

/** A client as the runner makes it for an S3-compatible service: its endpoint in AWS_ENDPOINT_URL_S3, path-style. */
function openBucket(): S3Bucket {
  return new S3Bucket(
    s3Target(`s3://${BUCKET}/fleet`),
    { endpoint: server.endpoint, region: RGW_REGION, credentials: server.credentials },
    { AWS_ENDPOINT_URL_S3: server.endpoint },
  );
}

async function clientOf(bucket: S3Bucket) {
  const { sdk, client } = await bucket.sdk();
  if (!sent.has(client)) {
    const names: string[] = [];
    sent.set(client, names);
    client.middlewareStack.add(
      (next, context) => (args) => {
        names.push(context.commandName ?? '?');
        return next(args);
      },
      { step: 'initialize', name: 'captfRecordCommands' },
    );
  }
  return { sdk, client, sent: sent.get(client)! };
}

let admin: Awaited<ReturnType<typeof clientOf>>;

before(async () => {
  server = await radosgw();
  admin = await clientOf(openBucket());
  await admin.client.send(new admin.sdk.CreateBucketCommand({ Bucket: BUCKET }));
});

storeContract('S3 on radosgw', {
  partialObjects: true,
  async newStore() {
    const prefix = `captf-backup-tc-rgw-${++stores}`;
    const store = new S3ChunkStore(openBucket(), prefix);
    const key = (object: string, file: string) => `fleet/${prefix}/${object}/${file}`;
    const chunkKey = (object: string, index: number) => key(object, `chunk-${String(index).padStart(5, '0')}`);
    const { sdk, client } = admin;
    const put = async (Key: string, Body: Buffer) =>
      void (await client.send(new sdk.PutObjectCommand({ Bucket: BUCKET, Key, Body })));
    return {
      store,
      // As a person with the bucket's keys would (radosgw keeps what it is sent: no corruptChunkWrites).
      tamper: {
        setChunk: (object, index, data) => put(chunkKey(object, index), data),
        removeChunk: async (object, index) =>
          void (await client.send(new sdk.DeleteObjectCommand({ Bucket: BUCKET, Key: chunkKey(object, index) }))),
        setManifest: (object, data) => put(key(object, 'manifest.json'), data),
      },
    };
  },
});

describe('S3 on radosgw: where it differs from AWS and the fake', () => {
  it("keeps a put whose x-amz-checksum-sha256 is not its body's and answers no checksum: the store reads every put back", async () => {
    const { sdk, client } = admin;
    const body = Buffer.from('the bytes sent');
    const wrong = createHash('sha256').update('other bytes').digest('base64');
    const answer = await client.send(
      new sdk.PutObjectCommand({ Bucket: BUCKET, Key: 'checksums/wrong', Body: body, ChecksumSHA256: wrong }),
    );
    assert.equal(
      answer.ChecksumSHA256,
      undefined,
      'radosgw answers no checksum (AWS and the fake answer 400 BadDigest)',
    );
    const kept = await client.send(new sdk.GetObjectCommand({ Bucket: BUCKET, Key: 'checksums/wrong' }));
    assert.deepEqual(Buffer.from(await kept.Body!.transformToByteArray()), body);

    // So the store cannot take the service's word for what it stored: each chunk and the manifest are read back.
    const bucket = openBucket();
    const store = new S3ChunkStore(bucket, `captf-backup-tc-rgw-${++stores}`);
    const recorded = (await clientOf(bucket)).sent;
    await putObject(store, 'backup-1', [randomBytes(100), randomBytes(100)], Buffer.from('{}'));
    const puts = recorded.flatMap((name, i) => (name === 'PutObjectCommand' ? [recorded[i + 1]] : []));
    assert.deepEqual(puts, ['GetObjectCommand', 'GetObjectCommand', 'GetObjectCommand'], 'a read-back after each put');
  });

  it('LastModified to the millisecond: records written within one second list newest first, objects oldest first', async () => {
    const store = new S3ChunkStore(openBucket(), `captf-backup-tc-rgw-${++stores}`);
    // Names against the order of writing: a store that read LastModified to the second would order by name.
    await store.putRecord('blocked-a.json', Buffer.from('first'));
    await store.putRecord('blocked-b.json', Buffer.from('second'));
    assert.deepEqual(await store.listRecords('blocked-'), ['blocked-b.json', 'blocked-a.json']);
    for (const object of ['backup-c', 'backup-b', 'backup-a']) await putObject(store, object, [Buffer.from(object)]);
    const listed = await store.listObjects();
    assert.deepEqual(
      listed.map((o) => o.name),
      ['backup-c', 'backup-b', 'backup-a'],
    );
    for (const { created } of listed) assert.match(created ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(
      listed.some(({ created }) => !created?.endsWith('.000Z')),
      'the milliseconds of LastModified are kept',
    );
  });
});

describe('the radosgw helper', () => {
  it('stop() ends every daemon it started, by its pid, and removes its dir', async () => {
    const pids = server.processIds();
    assert.equal(pids.length, 3, 'ceph-mon, ceph-osd, radosgw');
    await server.stop();
    assert.deepEqual(
      pids.filter((pid) => isProcessRunning(pid)),
      [],
    );
    assert.equal(existsSync(server.dir), false);
  });
});
