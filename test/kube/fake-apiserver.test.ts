// The fake API server's own rules, through raw HTTPS: the runner's client never sends some of
// these requests (updates of Secrets), but the fake must still answer them as a real server would.
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { test } from 'node:test';
import { FakeApiServer } from '../support/fake-apiserver.ts';

async function call(
  fake: FakeApiServer,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = request(
      {
        host: fake.host,
        port: fake.port,
        method,
        path,
        ca: fake.ca,
        headers: {
          Authorization: `Bearer ${[...fake.validTokens][0]}`,
          'Content-Type': 'application/json',
          ...headers,
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString() || 'null') }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const SECRETS = '/api/v1/namespaces/ns/secrets';

test('the fake answers as the API server does', async (t) => {
  const fake = await FakeApiServer.start({ serviceAccount: { namespace: 'ns', name: 'sa' } });
  t.after(() => fake.stop());

  const created = await call(fake, 'POST', SECRETS, {
    metadata: { name: 's1', labels: { tier: 'a' } },
    immutable: true,
    stringData: { k: 'v' },
  });
  assert.equal(created.status, 201);
  assert.equal(created.body.data.k, Buffer.from('v').toString('base64'), 'stringData lands in data');

  const update = await call(fake, 'PUT', `${SECRETS}/s1`, { ...created.body, data: { k: 'dzI=' } });
  assert.equal(update.status, 422);
  assert.equal(update.body.reason, 'Invalid');
  assert.equal(
    update.body.message,
    'Secret "s1" is invalid: data: Forbidden: field is immutable when `immutable` is set',
  );

  const metadataOnly = await call(fake, 'PUT', `${SECRETS}/s1`, {
    ...created.body,
    metadata: { ...created.body.metadata, annotations: { a: 'b' } },
  });
  assert.equal(metadataOnly.status, 200, 'metadata of an immutable Secret may change');

  const stale = await call(fake, 'PUT', `${SECRETS}/s1`, created.body);
  assert.equal(stale.status, 409);
  assert.match(stale.body.message, /^Operation cannot be fulfilled on secrets "s1": the object has been modified/);

  await call(fake, 'POST', SECRETS, { metadata: { name: 's2', labels: { tier: 'b' } } });
  await call(fake, 'POST', SECRETS, { metadata: { name: 's3' } });
  const names = async (selector: string) =>
    (await call(fake, 'GET', `${SECRETS}?labelSelector=${encodeURIComponent(selector)}`)).body.items.map(
      (i: any) => i.metadata.name,
    );
  assert.deepEqual(await names('tier in (a,b)'), ['s1', 's2']);
  assert.deepEqual(await names('tier notin (a)'), ['s2', 's3']);
  assert.deepEqual(await names('!tier'), ['s3']);
  assert.deepEqual(await names('tier!=a,tier'), ['s2']);

  const badLabel = await call(fake, 'POST', SECRETS, { metadata: { name: 's4', labels: { x: 'v'.repeat(64) } } });
  assert.equal(badLabel.status, 422);
  assert.match(badLabel.body.message, /metadata.labels: Invalid value: "v+": must be no more than 63 characters/);

  const badName = await call(fake, 'POST', SECRETS, { metadata: { name: 'Upper' } });
  assert.equal(badName.status, 422);

  const noToken = await call(fake, 'GET', SECRETS, undefined, { Authorization: 'Bearer wrong' });
  assert.deepEqual(noToken, {
    status: 401,
    body: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    },
  });

  fake.rbac = [{ verbs: ['get'], resources: ['secrets'], resourceNames: ['s1'] }];
  assert.equal((await call(fake, 'GET', `${SECRETS}/s1`)).status, 200);
  const forbidden = await call(fake, 'GET', `${SECRETS}/s2`);
  assert.equal(forbidden.status, 403);
  assert.equal(
    forbidden.body.message,
    'secrets "s2" is forbidden: User "system:serviceaccount:ns:sa" cannot get resource "secrets" in API group "" in the namespace "ns"',
  );
  assert.equal((await call(fake, 'GET', SECRETS)).status, 403, 'resourceNames never allow a list');

  // A rule for the wrong API group grants nothing: Secrets are in the core group "".
  fake.rbac = [{ verbs: ['get', 'list'], apiGroups: ['batch'], resources: ['secrets'] }];
  assert.equal((await call(fake, 'GET', SECRETS)).status, 403);
  fake.rbac = [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'] }];
  assert.equal((await call(fake, 'GET', SECRETS)).status, 200);
});
