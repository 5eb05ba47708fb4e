// The PostgreSQL store against a real PostgreSQL 15 (one server and one database for the file, a
// store prefix per test): the store contract, then what only a database store promises: no partial
// object can exist, retention in one statement, each object's role kept to its own schema, and a
// store that is down or hangs failing fast.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { writeArtifact } from '../../src/store/artifact-write.ts';
import { PgDatabase, pgTarget } from '../../src/store/pg-database.ts';
import { PgChunkStore } from '../../src/store/pg-store.ts';
import { pruneObjects } from '../../src/store/retention.ts';
import { usePostgres, type TestDatabase } from '../support/pg.ts';
import { storeContract } from './store-contract.support.ts';
import { backupMeta, putObject, rejectsWith } from './stores.support.ts';

let database: TestDatabase;
let db: PgDatabase;
/** The superuser's own connection: what someone with access to the database can change. */
let admin: pg.Client;
let stores = 0;
const databases: PgDatabase[] = [];

// Registered before usePostgres's own: the connections close before the server stops.
after(async () => {
  await admin.end();
  for (const opened of databases) await opened.close();
});
const shared = usePostgres();
before(async () => {
  database = await shared.newDatabase();
  db = openDatabase(database.connString);
  admin = new pg.Client({ connectionString: database.connString });
  await admin.connect();
});

function openDatabase(connString: string, schema?: string): PgDatabase {
  const url = new URL(connString);
  if (schema) url.searchParams.set('schema', schema);
  const opened = new PgDatabase(pgTarget(url.toString(), {}));
  databases.push(opened);
  return opened;
}

const newPrefix = () => `captf-backup-tc-test-${++stores}`;

storeContract('PostgreSQL', {
  partialObjects: false,
  async newStore() {
    const prefix = newPrefix();
    const store = new PgChunkStore(db, prefix);
    await store.listObjects(); // the tables exist from here
    const key = [prefix];
    return {
      store,
      tamper: {
        setChunk: async (object, index, data) =>
          void (await admin.query(
            'INSERT INTO captf.captf_chunks (store, object, idx, data) VALUES ($1, $2, $3, $4) ON CONFLICT (store, object, idx) DO UPDATE SET data = excluded.data',
            [...key, object, index, data],
          )),
        removeChunk: async (object, index) =>
          void (await admin.query('DELETE FROM captf.captf_chunks WHERE store = $1 AND object = $2 AND idx = $3', [
            ...key,
            object,
            index,
          ])),
        setManifest: async (object, data) =>
          void (await admin.query('UPDATE captf.captf_objects SET manifest = $3 WHERE store = $1 AND object = $2', [
            ...key,
            object,
            data,
          ])),
        corruptChunkWrites: async (index) => {
          // A database that keeps other bytes than it was sent: a trigger flips the first byte of one chunk of this store.
          await admin.query(`CREATE OR REPLACE FUNCTION captf.flip_first_byte() RETURNS trigger AS $$
            BEGIN NEW.data := set_byte(NEW.data, 0, get_byte(NEW.data, 0) # 255); RETURN NEW; END $$ LANGUAGE plpgsql`);
          await admin.query(`CREATE OR REPLACE TRIGGER flip_${stores} BEFORE INSERT ON captf.captf_chunks FOR EACH ROW
            WHEN (NEW.store = '${prefix}' AND NEW.idx = ${Number(index)}) EXECUTE FUNCTION captf.flip_first_byte()`);
        },
      },
    };
  },
  async keyedStores(_t, keys) {
    return keys.map((prefix) => new PgChunkStore(db, prefix));
  },
});

describe('PostgreSQL store: what a database adds', () => {
  it('names its location without credentials: postgres://host:port/database/schema/prefix', () => {
    const target = pgTarget(
      'postgres://captf:s3cret@db.example:6543/artifacts?schema=captf_tc_prod&sslmode=verify-full',
      {},
    );
    assert.equal(
      new PgChunkStore(new PgDatabase(target), 'captf-plan-tc-prod').location,
      'postgres://db.example:6543/artifacts/captf_tc_prod/captf-plan-tc-prod',
    );
  });

  it('a write is one transaction: nothing of it is visible before the commit, and a writer that dies leaves nothing', async () => {
    const prefix = newPrefix();
    const store = new PgChunkStore(db, prefix);
    const write = await store.create('backup-1');
    await write.putChunk(0, randomBytes(1000));
    await write.putChunk(1, randomBytes(1000));
    const seen = await admin.query('SELECT count(*)::int AS n FROM captf.captf_chunks WHERE store = $1', [prefix]);
    assert.equal(seen.rows[0].n, 0, 'another session sees no chunk of an uncommitted write');
    // The writer's connection dies (a pod killed mid-write): its transaction goes with it.
    const writer = await admin.query(
      `SELECT pid FROM pg_stat_activity WHERE state = 'idle in transaction' AND datname = $1 AND query LIKE 'INSERT INTO "captf".captf_chunks%'`,
      [database.name],
    );
    assert.equal(writer.rowCount, 1);
    await admin.query('SELECT pg_terminate_backend($1)', [writer.rows[0].pid]);
    await assert.rejects(write.commit(Buffer.from('{}')));
    assert.deepEqual(await store.listChunks('backup-1'), []);
    assert.deepEqual(await store.listObjects(), []);
    await putObject(store, 'backup-1', [Buffer.from('again')]);
    assert.deepEqual(await store.getChunk('backup-1', 0), Buffer.from('again'));
  });

  it("the database itself refuses a chunk without its manifest, and removes an object's chunks with it", async () => {
    const prefix = newPrefix();
    const store = new PgChunkStore(db, prefix);
    await store.listObjects();
    await assert.rejects(
      admin.query('INSERT INTO captf.captf_chunks (store, object, idx, data) VALUES ($1, $2, 0, $3)', [
        prefix,
        'orphan',
        Buffer.from('x'),
      ]),
      /foreign key/,
    );
    await putObject(store, 'gone', [Buffer.from('a'), Buffer.from('b')]);
    await admin.query('DELETE FROM captf.captf_objects WHERE store = $1 AND object = $2', [prefix, 'gone']);
    assert.deepEqual(await store.listChunks('gone'), []);
  });

  it('retention is one statement', async () => {
    const prefix = newPrefix();
    const store = new PgChunkStore(db, prefix);
    for (const object of ['backup-1', 'backup-2', 'backup-3', 'backup-4'])
      await putObject(store, object, [Buffer.from(object)]);
    const statements: string[] = [];
    const counting = Object.assign(Object.create(db) as PgDatabase, {
      query: (text: string, values?: unknown[]) => {
        statements.push(text);
        return db.query(text, values);
      },
    });
    const watched = new PgChunkStore(counting, prefix);
    assert.deepEqual(await pruneObjects(watched, { keep: 2, prefix: 'backup-', protect: ['backup-1'] }), {
      deleted: ['backup-2'],
    });
    assert.equal(statements.length, 1, statements.join('\n'));
    assert.match(statements[0]!, /^DELETE/);
  });

  it('blocked records: written whole, replaced by a newer one, listed newest first, bounded on read', async () => {
    const store = new PgChunkStore(db, newPrefix());
    await store.putRecord('blocked-a.json', Buffer.from('first'));
    await store.putRecord('blocked-b.json', Buffer.from('second'));
    await store.putRecord('blocked-a.json', Buffer.from('third'));
    assert.deepEqual(await store.listRecords('blocked-'), ['blocked-a.json', 'blocked-b.json']);
    assert.deepEqual(await store.getRecord('blocked-a.json', 100), Buffer.from('third'));
    assert.equal(await store.getRecord('blocked-c.json', 100), undefined);
    await assert.rejects(store.getRecord('blocked-a.json', 3), /more than 3 bytes/);
    await store.deleteRecord('blocked-a.json');
    assert.deepEqual(await store.listRecords('blocked-'), ['blocked-b.json']);
  });
});

describe("PostgreSQL store: one object's role cannot read another's artifacts", () => {
  // The grants contract/sections/artifacts.md gives: a role per CAPTF object owning its schema, nothing on any other.
  let prod: string;
  let staging: string;
  before(async () => {
    for (const role of ['captf_tc_prod', 'captf_tc_staging']) {
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      await admin.query(`GRANT CONNECT ON DATABASE ${database.name} TO ${role}`);
      await admin.query(`CREATE SCHEMA ${role} AUTHORIZATION ${role}`);
    }
    const as = (role: string) => {
      const url = new URL(database.connString);
      url.username = role;
      return url.toString();
    };
    prod = as('captf_tc_prod');
    staging = as('captf_tc_staging');
  });

  it('a role creates its tables in its own schema and uses them', async () => {
    const store = new PgChunkStore(openDatabase(prod, 'captf_tc_prod'), 'captf-backup-tc-prod');
    await writeArtifact(
      store,
      'backup-1',
      [{ name: 'terraform.tfstate', data: Buffer.from('{"prod":true}') }],
      backupMeta(),
    );
    assert.deepEqual(
      (await store.listObjects()).map((o) => o.name),
      ['backup-1'],
    );
    const owner = await admin.query(
      `SELECT tableowner FROM pg_tables WHERE schemaname = 'captf_tc_prod' AND tablename = 'captf_chunks'`,
    );
    assert.equal(owner.rows[0].tableowner, 'captf_tc_prod');
  });

  it("pointed at another object's schema, it reads and writes nothing: StoreAccessDenied", async () => {
    const prodStore = new PgChunkStore(openDatabase(prod, 'captf_tc_prod'), 'captf-plan-tc-prod');
    await putObject(prodStore, 'plan-1', [Buffer.from('prod secrets')]);
    const intruder = new PgChunkStore(openDatabase(staging, 'captf_tc_prod'), 'captf-plan-tc-prod');
    const denied = await rejectsWith(
      intruder.getChunk('plan-1', 0),
      'io',
      'StoreAccessDenied',
      /refused the runner .*permission denied for schema captf_tc_prod.*USAGE on the schema/,
    );
    assert.ok(!denied.message.includes('staging@'), 'no user or password in the message');
    await rejectsWith(intruder.create('plan-2'), 'io', 'StoreAccessDenied');
    // Its own schema works, and holds nothing of prod's.
    const own = new PgChunkStore(openDatabase(staging, 'captf_tc_staging'), 'captf-plan-tc-prod');
    assert.deepEqual(await own.listObjects(), []);
  });
});

describe('PostgreSQL store: down or hung', () => {
  /** A loopback port that takes connections and never answers (a hung server), or refuses them once closed. */
  async function silentServer() {
    const sockets: Socket[] = [];
    const server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return {
      port,
      close: () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          server.close(() => resolve());
        }),
    };
  }

  const quick = (port: number) => {
    const target = pgTarget(`postgres://captf@127.0.0.1:${port}/captf`, {});
    return new PgChunkStore(
      new PgDatabase({ ...target, config: { ...target.config, connectionTimeoutMillis: 500, query_timeout: 500 } }),
      'captf-backup-tc-prod',
    );
  };

  it('a server that takes the connection and never answers: StoreUnreachable within the timeout', async () => {
    const silent = await silentServer();
    try {
      const started = Date.now();
      await rejectsWith(
        quick(silent.port).create('backup-1'),
        'io',
        'StoreUnreachable',
        /postgres:\/\/127\.0\.0\.1:\d+\/captf\/captf\/captf-backup-tc-prod|could not be reached/,
      );
      assert.ok(Date.now() - started < 5_000);
    } finally {
      await silent.close();
    }
  });

  it('nothing listening: StoreUnreachable, saying a retry can help', async () => {
    const closed = await silentServer();
    await closed.close();
    await rejectsWith(
      quick(closed.port).listObjects(),
      'io',
      'StoreUnreachable',
      /could not be reached.*a retry can help/,
    );
  });
});
