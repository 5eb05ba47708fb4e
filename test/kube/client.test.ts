import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { describe, test } from 'node:test';
import { RunnerError } from '../../src/errors.ts';
import { KubeReason } from '../../src/kube/api-errors.ts';
import { KubeClient, type Secret } from '../../src/kube/client.ts';
import { parseRetryAfter } from '../../src/kube/retry.ts';
import { apiServerUrl, loadInClusterConfig } from '../../src/kube/config.ts';
import { NAMESPACE, startFakeCluster } from './fake-cluster.support.ts';

const secret = (
  name: string,
  data: Record<string, string> = { key: 'dmFsdWU=' },
  labels: Record<string, string> = {},
): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, labels },
  data,
});

const isKube = (reason: string, message?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof RunnerError, `expected a RunnerError, got ${String(error)}`);
  assert.equal(error.kind, 'kube');
  assert.equal(error.reason, reason);
  if (message) assert.match(error.message, message);
  return true;
};

describe('loadInClusterConfig', () => {
  const withDir = async (files: Record<string, string>) => {
    const dir = await mkdtemp(join(tmpdir(), 'captf-sa-'));
    for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
    return dir;
  };
  const ca = rootCertificates[0];
  const env = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

  test('reads token file, CA, namespace and the service address', async (t) => {
    const dir = await withDir({ token: 'abc\n', 'ca.crt': ca, namespace: 'captf-prod' });
    t.after(() => rm(dir, { recursive: true }));
    const config = loadInClusterConfig({ serviceAccountDir: dir, env });
    assert.equal(config.server, 'https://10.96.0.1:443');
    assert.equal(config.namespace, 'captf-prod');
    assert.equal(config.tokenFile, join(dir, 'token'));
  });

  test('brackets IPv6 hosts in the URL and not in the host', async (t) => {
    const dir = await withDir({ token: 'abc', 'ca.crt': ca });
    t.after(() => rm(dir, { recursive: true }));
    const config = loadInClusterConfig({
      serviceAccountDir: dir,
      env: { KUBERNETES_SERVICE_HOST: 'fd00:10:96::1', KUBERNETES_SERVICE_PORT: '443' },
    });
    assert.equal(config.server, 'https://[fd00:10:96::1]:443');
    assert.equal(config.host, 'fd00:10:96::1');
    assert.equal(apiServerUrl('[::1]', 6443), 'https://[::1]:6443');
    assert.equal(apiServerUrl('kubernetes.default.svc', 443), 'https://kubernetes.default.svc:443');
  });

  const invalid = (pattern: RegExp) => (error: unknown) => {
    assert.ok(error instanceof RunnerError);
    assert.equal(error.kind, 'usage');
    assert.equal(error.reason, 'KubeConfigInvalid');
    assert.match(error.message, pattern);
    return true;
  };

  test('a Job identity without a usable token or address is a usage error', async (t) => {
    const good = await withDir({ token: 'abc', 'ca.crt': ca });
    const emptyToken = await withDir({ token: '  \n', 'ca.crt': ca });
    const noCa = await withDir({ token: 'abc' });
    t.after(async () => {
      for (const dir of [good, emptyToken, noCa]) await rm(dir, { recursive: true });
    });
    assert.throws(
      () => loadInClusterConfig({ serviceAccountDir: good, env: {} }),
      invalid(/KUBERNETES_SERVICE_HOST is not set/),
    );
    assert.throws(
      () => loadInClusterConfig({ serviceAccountDir: good, env: { ...env, KUBERNETES_SERVICE_PORT: 'https' } }),
      invalid(/"https" is not a port number/),
    );
    assert.throws(
      () => loadInClusterConfig({ serviceAccountDir: join(good, 'missing'), env }),
      invalid(/no readable token/),
    );
    assert.throws(() => loadInClusterConfig({ serviceAccountDir: emptyToken, env }), invalid(/is empty/));
    assert.throws(() => loadInClusterConfig({ serviceAccountDir: noCa, env }), invalid(/no PEM CA certificate/));
  });
});

describe('KubeClient', () => {
  test('talks to an API server on an IPv6 loopback address', async (t) => {
    const { client, config, fake } = await startFakeCluster(t, { ipv6: true });
    assert.equal(config.server, `https://[::1]:${fake.port}`);
    await client.createSecret(NAMESPACE, secret('over-ipv6'));
    assert.equal((await client.getSecret(NAMESPACE, 'over-ipv6'))?.metadata?.name, 'over-ipv6');
  });

  test('getSecret answers undefined for a missing Secret, deleteSecret false', async (t) => {
    const { client } = await startFakeCluster(t);
    assert.equal(await client.getSecret(NAMESPACE, 'nope'), undefined);
    assert.equal(await client.deleteSecret(NAMESPACE, 'nope'), false);
  });

  test('retries 429 after the Retry-After the server asked for, then succeeds', async (t) => {
    const { client, fake, sleeps } = await startFakeCluster(t);
    fake.injectFaults(
      { verb: 'create', resource: 'secrets' },
      { status: 429, retryAfter: '3' },
      { status: 429, retryAfter: '1' },
    );
    await client.createSecret(NAMESPACE, secret('after-throttle'));
    assert.deepEqual(sleeps, [3000, 1000]);
    assert.ok(fake.secret(NAMESPACE, 'after-throttle'));
    assert.deepEqual(
      fake.requests.map((r) => r.status),
      [429, 429, 201],
    );
  });

  test('retries 503 and dropped connections with growing, capped backoff', async (t) => {
    const events: unknown[] = [];
    const { fake, sleeps, newClient } = await startFakeCluster(t);
    const client = newClient({
      retry: { baseDelayMs: 100, maxDelayMs: 300 },
      onRetry: (event) => events.push(event.cause),
    });
    fake.addJob(NAMESPACE, 'job-1');
    fake.injectFaults(
      { verb: 'get', resource: 'jobs' },
      { status: 503 },
      { reset: true },
      { status: 503 },
      { status: 500 },
    );
    const job = await client.getJob(NAMESPACE, 'job-1');
    assert.equal(job.metadata?.name, 'job-1');
    // random() = 0.5 takes 75% of the capped exponential delay: 100, 200, 300(cap), 300.
    assert.deepEqual(sleeps, [75, 150, 225, 225]);
    assert.equal(events.length, 4);
    assert.equal(events[0], 503);
    assert.equal(typeof events[1], 'string'); // the network error's message
  });

  test('gives up after the attempt limit with a message that says so', async (t) => {
    const { fake, newClient } = await startFakeCluster(t);
    const client = newClient({ retry: { maxAttempts: 3 } });
    fake.injectFaults({ verb: 'get' }, { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 });
    await assert.rejects(
      client.getSecret(NAMESPACE, 'x'),
      isKube(KubeReason.ServerError, /503 .*gave up after 3 attempts/),
    );
    assert.equal(fake.requests.length, 3);
  });

  test('does not wait for a Retry-After beyond the total time budget', async (t) => {
    const { fake, newClient, sleeps } = await startFakeCluster(t);
    const client = newClient({ retry: { maxTotalMs: 10_000 } });
    fake.injectFaults({ verb: 'get' }, { status: 429, retryAfter: '60' });
    await assert.rejects(client.getSecret(NAMESPACE, 'x'), isKube(KubeReason.Throttled, /gave up after 1 attempt /));
    assert.deepEqual(sleeps, []);
  });

  test('a 403 names the verb, resource and namespace the Role lacks, and is not retried', async (t) => {
    const { client, fake } = await startFakeCluster(t);
    fake.rbac = [{ verbs: ['get', 'list'], resources: ['secrets'] }];
    await assert.rejects(
      client.createSecret(NAMESPACE, secret('forbidden')),
      isKube(
        KubeReason.Forbidden,
        /lacks "create" on "secrets" \(API group ""\) in namespace "captf-prod": secrets is forbidden: User "system:serviceaccount:captf-prod:captf-runner-prod" cannot create resource "secrets" in API group "" in the namespace "captf-prod"\. Add verb "create"/,
      ),
    );
    fake.addJob(NAMESPACE, 'job-1');
    await assert.rejects(
      client.patchJob(NAMESPACE, 'job-1', { metadata: { annotations: { a: 'b' } } }),
      (error: unknown) => {
        isKube(KubeReason.Forbidden, /lacks "patch" on "jobs" \(API group "batch"\)/)(error);
        assert.deepEqual((error as RunnerError).detail?.verb, 'patch');
        assert.deepEqual((error as RunnerError).detail?.resource, 'jobs.batch');
        return true;
      },
    );
    assert.equal(fake.requests.length, 2);
  });

  test('a bad token gives a clear 401 error, not retried', async (t) => {
    const { client, fake, serviceAccountDir } = await startFakeCluster(t);
    await writeFile(join(serviceAccountDir, 'token'), 'not-a-valid-token');
    await assert.rejects(
      client.getSecret(NAMESPACE, 'x'),
      isKube(KubeReason.Unauthorized, /rejected the service account token \(401 Unauthorized\)/),
    );
    assert.equal(fake.requests.length, 1);
  });

  test('re-reads the token on every request, so a rotated token is used at once', async (t) => {
    const { client, fake, serviceAccountDir } = await startFakeCluster(t);
    const [first] = fake.validTokens;
    await client.getSecret(NAMESPACE, 'x');
    fake.validTokens.clear();
    fake.validTokens.add('rotated-token');
    await writeFile(join(serviceAccountDir, 'token'), 'rotated-token\n');
    await client.getSecret(NAMESPACE, 'x');
    assert.deepEqual(
      fake.requests.map((r) => [r.token, r.status]),
      [
        [first, 404],
        ['rotated-token', 404],
      ],
    );
  });

  test('a missing token file fails without a request', async (t) => {
    const { client, fake, serviceAccountDir } = await startFakeCluster(t);
    await rm(join(serviceAccountDir, 'token'));
    await assert.rejects(
      client.getSecret(NAMESPACE, 'x'),
      isKube(KubeReason.TokenUnreadable, /token .* is missing or empty/),
    );
    assert.equal(fake.requests.length, 0);
  });

  test('a CA that did not sign the server fails at once, naming ca.crt', async (t) => {
    const { config, fake } = await startFakeCluster(t);
    const client = new KubeClient(
      { ...config, ca: Buffer.from(rootCertificates[0]) },
      { sleep: async () => assert.fail('must not retry') },
    );
    t.after(() => client.close());
    await assert.rejects(
      client.getSecret(NAMESPACE, 'x'),
      isKube(KubeReason.Unreachable, /failed TLS verification .*ca\.crt/),
    );
    assert.equal(fake.requests.length, 0);
  });

  test('422 and 413 say which limit was hit', async (t) => {
    const { client } = await startFakeCluster(t);
    const overSecretLimit = Buffer.alloc(1_048_577).toString('base64');
    await assert.rejects(
      client.createSecret(NAMESPACE, secret('too-big', { blob: overSecretLimit })),
      isKube(
        KubeReason.Invalid,
        /data is over 1 MiB \(1,048,576 bytes\).*Secret "too-big" is invalid: data: Too long: must have at most 1048576 bytes/,
      ),
    );
    const overBodyLimit = Buffer.alloc(2_400_000).toString('base64');
    await assert.rejects(
      client.createSecret(NAMESPACE, secret('way-too-big', { blob: overBodyLimit })),
      isKube(KubeReason.RequestTooLarge, /request body is over the API server's limit .*limit is 3145728/),
    );
    const annotations = { 'captf.io/big': 'x'.repeat(262_145) };
    await assert.rejects(
      client.createSecret(NAMESPACE, { ...secret('annotated'), metadata: { name: 'annotated', annotations } }),
      isKube(KubeReason.Invalid, /annotations are over 256 KiB \(262,144 bytes\)/),
    );
  });

  test('AlreadyExists and Conflict are told apart', async (t) => {
    const { client, fake } = await startFakeCluster(t);
    await client.createSecret(NAMESPACE, secret('twice'));
    await assert.rejects(
      client.createSecret(NAMESPACE, secret('twice')),
      isKube(KubeReason.AlreadyExists, /secrets "twice" already exists/),
    );
    const job = fake.addJob(NAMESPACE, 'job-1');
    await assert.rejects(
      client.patchJob(NAMESPACE, 'job-1', { metadata: { resourceVersion: '1', annotations: { a: 'b' } } }),
      isKube(KubeReason.Conflict, /the object has been modified/),
    );
    await assert.rejects(
      client.patchJob(NAMESPACE, 'job-1', { metadata: { uid: 'another-uid', annotations: { a: 'b' } } }),
      isKube(KubeReason.Conflict, /Precondition failed: UID in precondition: another-uid/),
    );
    const patched = await client.patchJob(NAMESPACE, 'job-1', {
      metadata: { uid: job.metadata.uid, resourceVersion: job.metadata.resourceVersion, annotations: { a: 'b' } },
    });
    assert.equal(patched.metadata?.annotations?.a, 'b');
  });

  test('deleteSecret with a uid deletes only that very object', async (t) => {
    const { client } = await startFakeCluster(t);
    const created = await client.createSecret(NAMESPACE, secret('replaced'));
    await client.deleteSecret(NAMESPACE, 'replaced');
    await client.createSecret(NAMESPACE, secret('replaced'));
    await assert.rejects(
      client.deleteSecret(NAMESPACE, 'replaced', { uid: created.metadata?.uid }),
      isKube(KubeReason.Conflict, /Precondition failed/),
    );
    assert.ok(await client.getSecret(NAMESPACE, 'replaced'));
  });

  test('listSecretMetadata pages through every match and asks for metadata only', async (t) => {
    const { client, fake } = await startFakeCluster(t);
    for (let i = 0; i < 260; i++)
      await client.createSecret(NAMESPACE, secret(`s-${i}`, { key: 'dmFsdWU=' }, { group: i % 2 ? 'odd' : 'even' }));
    const odd = await client.listSecretMetadata(NAMESPACE, 'group=odd');
    assert.equal(odd.length, 130);
    assert.ok(odd.every((meta) => meta.labels?.group === 'odd'));
    const all = await client.listSecretMetadata(NAMESPACE, 'group');
    assert.equal(all.length, 260);
    const lists = fake.requests.filter((r) => r.verb === 'list');
    assert.equal(lists.length, 3); // one page of odd, two pages of all
    assert.ok(lists.every((r) => r.accept?.startsWith('application/json;as=PartialObjectMetadataList')));

    // A listing longer than the runner's bound fails, after that many pages, with the way out.
    await assert.rejects(
      client.listSecretMetadata(NAMESPACE, 'group', 1),
      isKube(KubeReason.RequestFailed, /took 1 pages \(250 Secrets\) and still had more.*kubectl get secrets/),
    );
    assert.equal(fake.requests.filter((r) => r.verb === 'list').length, 4);
  });
});

test('parseRetryAfter reads seconds and HTTP dates', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.equal(parseRetryAfter('5', now), 5000);
  assert.equal(parseRetryAfter('Wed, 01 Jan 2025 00:00:02 GMT', now), 2000);
  assert.equal(parseRetryAfter(undefined, now), undefined);
  assert.equal(parseRetryAfter('soon', now), undefined);
});

describe('KubeClient: an API server that takes requests and never answers', () => {
  test('an attempt ends at its timeout (from the request to the last byte, not once per socket phase), and a call within its total time', async (t) => {
    const h = await startFakeCluster(t);
    h.fake.silent = true;
    // Short times (the test waits 300 ms, not 1.5 s), the bound above them 1 s of slack; the backoff (15 ms, not
    // slept: the cluster's client records it) leaves room for the second attempt within the total.
    const client = h.newClient({ requestTimeoutMs: 200, retry: { maxTotalMs: 300, baseDelayMs: 20 } });
    const started = Date.now();
    await assert.rejects(
      client.getJob(NAMESPACE, 'job'),
      // Two attempts on an idle machine; one when the first attempt's timer fires so late (a loaded machine) that no
      // room is left for a backoff: either way the call ends unreachable within its total time.
      isKube(KubeReason.Unreachable, /no answer within \d+ ms\); gave up after [12] attempts? in /),
    );
    const took = Date.now() - started;
    // One attempt of 200 ms, then what is left of the 300 ms: never a second full attempt, nor two per attempt.
    assert.ok(took >= 200 && took < 1_300, `the call took ${took} ms`);
  });

  test('setDeadline: no attempt runs past it, whatever the per-attempt timeout', async (t) => {
    const h = await startFakeCluster(t);
    h.fake.silent = true;
    const client = h.newClient();
    client.setDeadline(Date.now() + 300, 'the hand-back budget');
    const started = Date.now();
    await assert.rejects(
      client.createSecret(NAMESPACE, secret('s')),
      (error) => error instanceof RunnerError && error.kind === 'kube',
    );
    assert.ok(Date.now() - started < 1_500, `the call took ${Date.now() - started} ms`);
    await assert.rejects(
      client.getJob(NAMESPACE, 'job'),
      isKube(KubeReason.TimeBudgetExceeded, /no time is left of the hand-back budget/),
    );
  });
});
