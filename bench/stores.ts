// What each artifact store keeps per CAPTF object and moves per op (bench/stores.md):
// real runner runs (dist/, real terraform) in-cluster against the fake API server, one object's
// life in each store: first apply, applies that take backups (and prune them), a blocked apply and
// its approved apply, the Manual flow (plan, then apply --plan-artifact), a restore. For a small
// state and a 5 MB one. Nothing here is a test: it prints figures and writes them to a JSON file.
//
//   node --import tsx bench/stores.ts [--stores secret,dir,postgres,s3] [--sizes small,5mb] [--json-out FILE]
//
// Bytes kept: what the store holds for the object when the life above is over, and at its peak
// (a plan artifact waiting for its apply). For Secrets, as etcd holds them: the data's bytes (etcd
// keeps them decoded) and the objects' metadata (its JSON, about what the protobuf takes); the
// blocked Job's result Secret, the record an approved apply reads, counts with them. PostgreSQL:
// the rows' bytes, and the tables' size on disk (pg_total_relation_size: TOAST and indexes). S3:
// the objects' sizes. Bytes moved: the bodies of the store's requests and answers (Secrets: as the
// fake API server counts them, the Job's annotations and the result Secret left out, every store
// writes those; S3: as the fake counts them), or for PostgreSQL every byte both ways through a
// counting proxy (the protocol's framing included).
import { mkdir, readdir, stat } from 'node:fs/promises';
import { createServer, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { FakeApiServer } from '../test/support/fake-apiserver.ts';
import { FakeS3 } from '../test/support/fake-s3.ts';
import { startPostgres } from '../test/support/pg.ts';
import { tempDir } from '../test/support/tf-modules.ts';
import { explain, scenario, type RunnerRun, type Scenario } from '../test/support/runner.ts';

const { values: opts } = parseArgs({
  options: {
    stores: { type: 'string', default: 'secret,dir' },
    sizes: { type: 'string', default: 'small,5mb' },
    'json-out': { type: 'string', default: join(import.meta.dirname, 'results/stores.json') },
  },
});

const NS = 'bench';

/** The module: a blob (none, or 2.5 MB of sha512 hex: a state of about 5 MB, as terraform keeps it twice), an in-place input, a replace trigger. */
const MODULE = {
  'main.tf': `variable "n" {
  type    = number
  default = 0
}
variable "gen" {
  type    = number
  default = 0
}
variable "blob_thousands" {
  type    = number
  default = 0
}
locals {
  # range() makes at most 1024 values: thousands of 128-character digests, 125 KiB each.
  blob = join("", flatten([for i in range(var.blob_thousands) : [for j in range(1000) : sha512("block-\${i}-\${j}")]]))
}
resource "terraform_data" "blob" { input = local.blob }
resource "terraform_data" "updated" { input = var.n }
resource "terraform_data" "replaced" { triggers_replace = var.gen }
`,
};
const SIZES: Record<string, number> = { small: 0, '5mb': 20 };

interface Traffic {
  requests: number;
  byVerb: Record<string, number>;
  bytesUp: number;
  bytesDown: number;
}

interface Footprint {
  items: number;
  dataBytes: number;
  /** Data plus metadata (Secrets), or on-disk bytes. */
  keptBytes: number;
  /** Every Secret of the namespace, data and metadata (the result Secrets of every Job included): what the object costs etcd. */
  etcdBytes?: number;
}

/** What every Secret in the namespace takes: decoded data plus the metadata's JSON. */
const secretBytes = (secrets: { data?: Record<string, string>; metadata: unknown }[]) =>
  secrets.reduce(
    (sum, secret) =>
      sum +
      Object.values(secret.data ?? {}).reduce((n, value) => n + Buffer.from(value, 'base64').length, 0) +
      Buffer.byteLength(JSON.stringify(secret.metadata)),
    0,
  );

/** One store under measurement: the runner's flags for a Job, what the store holds, what crossed the wire since the last mark. */
interface StoreUnderTest {
  name: string;
  jobArgs(job: string): Promise<{ args: string[]; env: Record<string, string> }>;
  footprint(): Promise<Footprint>;
  mark(): void;
  traffic(): Traffic;
}

async function secretStore(api: FakeApiServer, dir: string): Promise<StoreUnderTest> {
  let from = 0;
  const isStoreSecret = (name: string | undefined) => !!name && /^captf-(backup|plan)-/.test(name);
  return {
    name: 'secret',
    jobArgs: (job) => api.runAsJob(NS, job, join(dir, job)),
    async footprint() {
      const secrets = api
        .secrets(NS)
        .filter((secret) => isStoreSecret(secret.metadata.name) || isBlockedRecord(secret));
      let dataBytes = 0;
      let keptBytes = 0;
      for (const secret of secrets) {
        const data = Object.values<string>(secret.data ?? {}).reduce(
          (sum, value) => sum + Buffer.from(value, 'base64').length,
          0,
        );
        dataBytes += data;
        keptBytes += data + Buffer.byteLength(JSON.stringify(secret.metadata));
      }
      return { items: secrets.length, dataBytes, keptBytes };
    },
    mark: () => void (from = api.requests.length),
    traffic() {
      const requests = api.requests
        .slice(from)
        .filter(
          (request) =>
            request.resource === 'secrets' &&
            (isStoreSecret(request.name ?? request.created) || isStoreList(request.path)),
        );
      return summarize(
        requests.map((request) => ({ verb: request.verb, up: request.requestBytes, down: request.responseBytes })),
      );
    },
  };
}

/** The result Secret of a blocked apply: the record an approved apply reads. */
const isBlockedRecord = (secret: { metadata: { labels?: Record<string, string> } }) =>
  secret.metadata.labels?.['captf.io/artifact-kind'] === 'result' &&
  secret.metadata.labels?.['captf.io/outcome'] === 'blocked';

/** A list of the store's Secrets (by its labels), not of result Secrets. */
const isStoreList = (path: string) => path.includes('captf.io%2Fstore') || path.includes('captf.io/store');

async function dirStore(api: FakeApiServer, dir: string): Promise<StoreUnderTest> {
  const backups = join(dir, 'store', 'backups');
  const artifacts = join(dir, 'store', 'artifacts');
  return {
    name: 'dir',
    async jobArgs(job) {
      const cluster = await api.runAsJob(NS, job, join(dir, job));
      return { args: [...cluster.args, '--backups', backups], env: cluster.env };
    },
    async footprint() {
      let items = 0;
      let bytes = 0;
      for (const root of [backups, artifacts]) {
        for (const object of await readdir(root).catch(() => [] as string[])) {
          const path = join(root, object);
          const info = await stat(path);
          if (!info.isDirectory()) {
            items++;
            bytes += info.size;
            continue;
          }
          for (const file of await readdir(path)) {
            items++;
            bytes += (await stat(join(path, file))).size;
          }
        }
      }
      return { items, dataBytes: bytes, keptBytes: bytes };
    },
    mark: () => undefined,
    traffic: () => ({ requests: 0, byVerb: {}, bytesUp: 0, bytesDown: 0 }),
  };
}

/** A loopback TCP proxy that counts the bytes each way: what a PostgreSQL client moves. */
async function countingProxy(targetPort: number) {
  const counts = { up: 0, down: 0, connections: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    counts.connections++;
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (data: Buffer) => void (counts.up += data.length));
    upstream.on('data', (data: Buffer) => void (counts.down += data.length));
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function postgresStore(
  api: FakeApiServer,
  dir: string,
  connString: string,
  database: pg.Client,
): Promise<StoreUnderTest & { close(): Promise<void> }> {
  const url = new URL(connString);
  const proxy = await countingProxy(Number(url.port));
  url.port = String(proxy.port);
  let from = { up: 0, down: 0, connections: 0 };
  return {
    name: 'postgres',
    async jobArgs(job) {
      const cluster = await api.runAsJob(NS, job, join(dir, job));
      return { args: cluster.args, env: { ...cluster.env, CAPTF_STORE: url.toString() } };
    },
    async footprint() {
      const rows = await database
        .query(`SELECT
        (SELECT count(*) FROM captf.captf_objects) + (SELECT count(*) FROM captf.captf_records) AS items,
        (SELECT coalesce(sum(length(manifest)), 0) FROM captf.captf_objects) + (SELECT coalesce(sum(length(data)), 0) FROM captf.captf_chunks) + (SELECT coalesce(sum(length(data)), 0) FROM captf.captf_records) AS data,
        pg_total_relation_size('captf.captf_objects') + pg_total_relation_size('captf.captf_chunks') + pg_total_relation_size('captf.captf_records') AS kept`)
        .catch(() => ({ rows: [{ items: 0, data: 0, kept: 0 }] }));
      const row = rows.rows[0] as { items: string; data: string; kept: string };
      return { items: Number(row.items), dataBytes: Number(row.data), keptBytes: Number(row.kept) };
    },
    mark: () => void (from = { ...proxy.counts }),
    traffic: () => ({
      requests: proxy.counts.connections - from.connections,
      byVerb: { connections: proxy.counts.connections - from.connections },
      bytesUp: proxy.counts.up - from.up,
      bytesDown: proxy.counts.down - from.down,
    }),
    close: proxy.close,
  };
}

async function s3Store(api: FakeApiServer, dir: string, s3: FakeS3): Promise<StoreUnderTest> {
  let from = 0;
  return {
    name: 's3',
    async jobArgs(job) {
      const cluster = await api.runAsJob(NS, job, join(dir, job));
      return { args: cluster.args, env: { ...cluster.env, ...s3.env(), CAPTF_STORE: 's3://captf-bench/fleet' } };
    },
    async footprint() {
      const keys = s3.keys('captf-bench', 'fleet/');
      const bytes = keys.reduce((sum, key) => sum + s3.object('captf-bench', key)!.length, 0);
      return { items: keys.length, dataBytes: bytes, keptBytes: bytes };
    },
    mark: () => void (from = s3.requests.length),
    traffic() {
      const requests = s3.requests.slice(from);
      return summarize(
        requests.map((r) => ({
          verb: r.list !== undefined ? 'list' : r.method,
          up: r.requestBytes,
          down: r.responseBytes,
        })),
      );
    },
  };
}

function summarize(requests: { verb: string; up: number; down: number }[]): Traffic {
  const byVerb: Record<string, number> = {};
  for (const { verb } of requests) byVerb[verb] = (byVerb[verb] ?? 0) + 1;
  return {
    requests: requests.length,
    byVerb,
    bytesUp: requests.reduce((sum, r) => sum + r.up, 0),
    bytesDown: requests.reduce((sum, r) => sum + r.down, 0),
  };
}

interface OpFigure {
  op: string;
  exitCode: number;
  traffic: Traffic;
  footprintAfter: Footprint;
}

async function life(
  api: FakeApiServer,
  store: StoreUnderTest,
  s: Scenario,
  blobThousands: number,
  artifacts: string,
): Promise<{ ops: OpFigure[]; peak: Footprint; end: Footprint; stateBytes: number }> {
  const ops: OpFigure[] = [];
  let jobs = 0;
  let peak: Footprint = { items: 0, dataBytes: 0, keptBytes: 0 };
  let lastBackup: { location: string; object: string } | undefined;
  const run = async (label: string, op: string, extra: string[], expectExit: number): Promise<RunnerRun> => {
    const { args, env } = await store.jobArgs(`job-${++jobs}`);
    store.mark();
    const result = await s.run(op, [...args, ...extra], env);
    if (result.exitCode !== expectExit) throw new Error(`${store.name} ${label}: ${explain(result)}`);
    const footprintAfter = { ...(await store.footprint()), etcdBytes: secretBytes(api.secrets(NS)) };
    if (footprintAfter.keptBytes > peak.keptBytes) peak = footprintAfter;
    ops.push({ op: label, exitCode: result.exitCode, traffic: store.traffic(), footprintAfter });
    if (result.result?.backup) lastBackup = result.result.backup;
    return result;
  };
  const inputs = (n: number, gen: number) =>
    s.setInputs({ 'terraform.tfvars.json': { n, gen, blob_thousands: blobThousands } });

  await inputs(0, 0);
  await run('apply (first: no backup)', 'apply', [], 0);
  for (let n = 1; n <= 4; n++) {
    await inputs(n, 0);
    await run(`apply ${n} (backup${n > 3 ? ', retention deletes one' : ''})`, 'apply', [], 0);
  }
  await inputs(4, 1);
  const blocked = await run('apply blocked (the record)', 'apply', [], 3);
  await run(
    'apply approved (the record read, a backup)',
    'apply',
    ['--approved-hash', blocked.result!.approvalHash!],
    0,
  );
  await inputs(5, 1);
  const planned = await run('plan (the plan artifact)', 'plan', artifacts ? ['--artifacts', artifacts] : [], 0);
  const artifact = planned.result!.planArtifact!;
  const reference = `${artifact.location}/${artifact.object}`;
  await run(
    'apply --plan-artifact (read, backup)',
    'apply',
    ['--plan-artifact', reference, '--approved-plan-hash', planned.result!.planHash!],
    0,
  );
  if (!lastBackup) throw new Error(`${store.name}: no backup was written`);
  await run(
    'restore (read a backup, back up the current state)',
    'restore',
    ['--backup', `${lastBackup.location}/${lastBackup.object}`],
    0,
  );
  const stateBytes = (await stat(s.state)).size;
  return { ops, peak, end: { ...(await store.footprint()), etcdBytes: secretBytes(api.secrets(NS)) }, stateBytes };
}

async function main() {
  const stores = opts.stores.split(',');
  const sizes = opts.sizes.split(',');
  const api = await FakeApiServer.start({ serviceAccount: { namespace: NS, name: 'captf-runner' } });
  const figures: unknown[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const t = { after: (fn: () => Promise<void>) => void cleanups.push(fn) } as Parameters<typeof scenario>[0];
  const server = stores.includes('postgres') ? await startPostgres() : undefined;
  if (server) cleanups.push(() => server.stop());
  const s3 = stores.includes('s3') ? await FakeS3.start({ buckets: ['captf-bench'] }) : undefined;
  if (s3) cleanups.push(() => s3.stop());
  let databases = 0;
  try {
    for (const size of sizes) {
      for (const name of stores) {
        const dir = await tempDir(t, 'captf-bench-stores-');
        await mkdir(join(dir, 'jobs'), { recursive: true });
        let store: StoreUnderTest;
        if (name === 'secret') store = await secretStore(api, dir);
        else if (name === 'dir') store = await dirStore(api, dir);
        else if (name === 's3') {
          for (const key of s3!.keys('captf-bench')) s3!.removeObject('captf-bench', key);
          store = await s3Store(api, dir, s3!);
        } else {
          const connString = await server!.createDatabase(`bench_${++databases}`);
          const client = new pg.Client({ connectionString: connString });
          await client.connect();
          const pgStore = await postgresStore(api, dir, connString, client);
          cleanups.push(async () => {
            await client.end();
            await pgStore.close();
          });
          store = pgStore;
        }
        const s = await scenario(t, MODULE);
        const artifacts = name === 'dir' ? join(dir, 'store', 'artifacts') : '';
        for (const secret of api.secrets(NS)) api.removeSecret(NS, secret.metadata.name);
        const measured = await life(api, store, s, SIZES[size]!, artifacts);
        figures.push({ store: name, size, ...measured });
        print(name, size, measured);
      }
    }
  } finally {
    await api.stop();
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
  if (opts['json-out'] !== '-')
    writeFileSync(opts['json-out'], `${JSON.stringify({ machine: process.version, figures }, null, 2)}\n`);
}

function print(store: string, size: string, measured: Awaited<ReturnType<typeof life>>) {
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  console.log(`\n== ${store}, ${size} state (${kib(measured.stateBytes)})`);
  for (const op of measured.ops) {
    const { traffic } = op;
    console.log(
      `  ${op.op.padEnd(48)} requests ${String(traffic.requests).padStart(3)} ${JSON.stringify(traffic.byVerb).padEnd(40)} up ${kib(traffic.bytesUp).padStart(12)} down ${kib(traffic.bytesDown).padStart(12)}  kept after ${kib(op.footprintAfter.keptBytes)}`,
    );
  }
  console.log(
    `  kept at its peak ${kib(measured.peak.keptBytes)} (${measured.peak.items} items), at the end ${kib(measured.end.keptBytes)} (${measured.end.items} items); all Secrets of the namespace at the end ${kib(measured.end.etcdBytes ?? 0)}`,
  );
}

await main();
