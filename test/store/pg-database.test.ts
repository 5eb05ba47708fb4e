// Where the PostgreSQL store connects and which schema holds its tables: pure, no database.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PgDatabase, pgTarget } from '../../src/store/pg-database.ts';
import { rejectsWith } from './stores.support.ts';

describe('pgTarget', () => {
  it('a URL: its connection (schema taken out), tables in ?schema= or captf, a location without credentials', () => {
    const target = pgTarget(
      'postgres://captf:s3cret@db.example:6543/artifacts?schema=captf_tc_prod&sslmode=verify-full',
      {},
    );
    assert.equal(
      target.config.connectionString,
      'postgres://captf:s3cret@db.example:6543/artifacts?sslmode=verify-full',
    );
    assert.equal(target.schema, 'captf_tc_prod');
    assert.equal(target.location, 'postgres://db.example:6543/artifacts/captf_tc_prod');
    assert.equal(pgTarget('postgresql://db/artifacts', {}).schema, 'captf');
    assert.equal(pgTarget('postgresql://db/artifacts', {}).location, 'postgres://db:5432/artifacts/captf');
  });

  it('what the URL lacks comes from the PG* variables, as node-postgres (and libpq) read them', () => {
    assert.equal(
      pgTarget('postgres://', { PGHOST: 'pg.internal', PGPORT: '5433', PGDATABASE: 'state' }).location,
      'postgres://pg.internal:5433/state/captf',
    );
  });

  it("`postgres`: the settings terraform's pg backend reads, PG_CONN_STR and PG_SCHEMA_NAME (default terraform_remote_state)", () => {
    const target = pgTarget('postgres', {
      PG_CONN_STR: 'postgres://tf:pw@state-db/tfstate?sslmode=disable',
      PG_SCHEMA_NAME: 'tc_prod',
    });
    assert.equal(target.config.connectionString, 'postgres://tf:pw@state-db/tfstate?sslmode=disable');
    assert.equal(target.schema, 'tc_prod');
    assert.equal(target.location, 'postgres://state-db:5432/tfstate/tc_prod');
    const libpqOnly = pgTarget('postgres', { PGHOST: 'h', PGUSER: 'u', PGDATABASE: 'd' });
    assert.equal(libpqOnly.config.connectionString, undefined, 'node-postgres reads the PG* variables itself');
    assert.equal(libpqOnly.location, 'postgres://h:5432/d/terraform_remote_state');
  });

  it('refuses a connection string that is not a URL, and a schema that is not a plain name', () => {
    assert.throws(() => pgTarget('postgres', { PG_CONN_STR: 'host=db user=tf' }), {
      reason: 'InvalidStoreLocation',
      message: /PG_CONN_STR is not a postgres:\/\/.* URL/,
    });
    assert.throws(() => pgTarget('postgres://db/x?schema=a";drop', {}), {
      reason: 'InvalidStoreLocation',
      message: /not a plain SQL name/,
    });
    assert.throws(() => pgTarget('postgres', { PG_SCHEMA_NAME: 'has space' }), { reason: 'InvalidStoreLocation' });
  });

  it('bounds every wait: a store that is down or hangs fails the op, it never holds it', () => {
    const { config } = pgTarget('postgres://db/x', {});
    assert.equal(config.connectionTimeoutMillis, 10_000);
    assert.equal(config.query_timeout, 30_000);
    assert.equal(config.allowExitOnIdle, true);
  });
});

describe('PgDatabase failures', () => {
  const db = new PgDatabase(pgTarget('postgres://u:pw@db.example/x', {}));
  const error = (code: string | undefined, message: string) => Object.assign(new Error(message), code ? { code } : {});
  it('names what went wrong, the store, and never the credentials', async () => {
    await rejectsWith(
      Promise.reject(db.failure(error('ECONNREFUSED', 'connect ECONNREFUSED'))),
      'io',
      'StoreUnreachable',
      /postgres:\/\/db\.example:5432\/x\/captf could not be reached .*a retry can help/,
    );
    await rejectsWith(
      Promise.reject(db.failure(error(undefined, 'Connection terminated due to connection timeout'))),
      'io',
      'StoreUnreachable',
    );
    await rejectsWith(
      Promise.reject(db.failure(error('57014', 'canceling statement due to statement timeout'))),
      'io',
      'StoreUnreachable',
    );
    const denied = await rejectsWith(
      Promise.reject(db.failure(error('42501', 'permission denied for schema captf'))),
      'io',
      'StoreAccessDenied',
      /USAGE on the schema/,
    );
    assert.ok(!denied.message.includes('pw'));
    await rejectsWith(
      Promise.reject(db.failure(error('28P01', 'password authentication failed for user "u"'))),
      'io',
      'StoreAccessDenied',
    );
    await rejectsWith(Promise.reject(db.failure(error('22001', 'value too long'))), 'io', 'StoreFailed');
  });
});
