// The PostgreSQL side of the PostgreSQL store: the connection (`--store postgres://…`, or the
// settings terraform's pg backend reads), the three tables it creates when they are missing, and
// what a failure means. The client (`pg`) loads on the first query: only a run that uses this
// store pays for it. contract/sections/artifacts.md has the tables and the grants they need.
import type { Pool, PoolClient, PoolConfig } from 'pg';
import { RunnerError, usageError } from '../errors.ts';
import { artifactExists } from './artifact-errors.ts';

/** Where the store lives: the connection, and the schema that holds its tables. */
export interface PgTarget {
  /** The client's configuration, credentials included: never shown. */
  config: PoolConfig;
  /** `postgres://host:port/database/schema`, without user or password: what messages and results show. */
  location: string;
  schema: string;
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;
/** terraform's pg backend keeps its states in this schema unless PG_SCHEMA_NAME says otherwise. */
const PG_BACKEND_SCHEMA = 'terraform_remote_state';
const DEFAULT_SCHEMA = 'captf';

/**
 * `--store postgres://…?schema=NAME` (or `postgresql://`): the URL as node-postgres reads it (what it
 * lacks, the password say, from the PG* variables libpq reads), the tables in NAME (default `captf`).
 * `--store postgres`: the settings terraform's pg backend reads, PG_CONN_STR (else the PG* variables
 * alone) and PG_SCHEMA_NAME (default terraform_remote_state): the artifacts beside the object's state.
 */
export function pgTarget(store: string, env: NodeJS.ProcessEnv): PgTarget {
  const fromBackend = store === 'postgres';
  const connectionString = fromBackend ? env.PG_CONN_STR || undefined : store;
  let url: URL | undefined;
  if (connectionString !== undefined) {
    try {
      url = new URL(connectionString);
      if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new Error('not a postgres URL');
    } catch {
      const where = fromBackend ? 'PG_CONN_STR' : '--store (CAPTF_STORE)';
      throw usageError(
        'InvalidStoreLocation',
        `${where} is not a postgres://user@host:port/database URL: write the connection as a URL (the key=value form is not read)`,
      );
    }
  }
  const schema = fromBackend
    ? env.PG_SCHEMA_NAME || PG_BACKEND_SCHEMA
    : (url!.searchParams.get('schema') ?? DEFAULT_SCHEMA);
  if (!SCHEMA_NAME.test(schema)) {
    throw usageError(
      'InvalidStoreLocation',
      `the PostgreSQL store's schema ${JSON.stringify(schema)} is not a plain SQL name: use letters, digits and "_" (up to 63), starting with a letter or "_"`,
    );
  }
  url?.searchParams.delete('schema');
  const host = url?.hostname || env.PGHOST || 'localhost';
  const port = url?.port || env.PGPORT || '5432';
  const database =
    decodeURIComponent(url?.pathname.slice(1) ?? '') || env.PGDATABASE || url?.username || env.PGUSER || '';
  return {
    config: {
      ...(url && { connectionString: url.toString() }),
      application_name: 'captf-runner',
      // A store that is down or hangs fails the op before it changes anything: bounded, never waited on.
      connectionTimeoutMillis: 10_000,
      query_timeout: 30_000,
      lock_timeout: 20_000,
      keepAlive: true,
      max: 2,
      idleTimeoutMillis: 1_000,
      allowExitOnIdle: true,
    },
    location: `postgres://${host.includes(':') ? `[${host}]` : host}:${port}/${database}/${schema}`,
    schema,
  };
}

/** One run's connections to the store's database (shared by its backup and plan stores), and its tables. */
export class PgDatabase {
  private pool: Promise<Pool> | undefined;
  private tablesReady: Promise<void> | undefined;

  constructor(readonly target: PgTarget) {}

  /** `"schema".table`: the schema name passed SCHEMA_NAME, quoted all the same. */
  table(name: 'captf_objects' | 'captf_chunks' | 'captf_records'): string {
    return `"${this.target.schema}".${name}`;
  }

  async query<R extends Record<string, unknown>>(text: string, values: unknown[] = []): Promise<R[]> {
    const pool = await this.ready();
    try {
      return (await pool.query<R>(text, values)).rows;
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** A transaction on a connection of its own, ended by its commit or rollback. */
  async transaction(): Promise<PgTransaction> {
    const pool = await this.ready();
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw this.failure(error);
    }
    // A connection the server drops reports it as an event (the process would die of it unheard) and
    // to the query waiting on it, which fails the write. Heard for as long as the client lives.
    if (!client.listenerCount('error')) client.on('error', () => undefined);
    let open = true;
    const end = async (statement: 'COMMIT' | 'ROLLBACK') => {
      if (!open) return;
      open = false;
      try {
        await client.query(statement);
        client.release();
      } catch (error) {
        client.release(error as Error);
        throw this.failure(error);
      }
    };
    const query: PgTransaction['query'] = async (text, values = []) => {
      try {
        return (await client.query(text, values)).rows;
      } catch (error) {
        throw this.failure(error);
      }
    };
    await query('BEGIN');
    return { query, commit: () => end('COMMIT'), rollback: () => end('ROLLBACK').catch(() => undefined) };
  }

  /** Closes the connections (tests; a run's process ends without waiting on idle ones). */
  async close(): Promise<void> {
    const pool = await this.pool?.catch(() => undefined);
    await pool?.end();
  }

  private ready(): Promise<Pool> {
    this.pool ??= import('pg').then(({ default: pg }) => {
      const pool = new pg.Pool(this.target.config);
      // An idle connection the server drops must not crash the run: the next query reports it.
      pool.on('error', () => undefined);
      return pool;
    });
    return this.pool.then(async (pool) => {
      this.tablesReady ??= this.ensureTables(pool);
      await this.tablesReady;
      return pool;
    });
  }

  /**
   * The tables, created when missing (the role needs CREATE on the schema then; with the tables in
   * place, only the grants on them). One runner at a time creates them: a transaction-level advisory
   * lock of two keys, a space apart from the one-key locks terraform's pg backend takes.
   */
  private async ensureTables(pool: Pool): Promise<void> {
    const exists = async () =>
      (
        await pool.query<{ found: boolean }>(
          `SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AND to_regclass($3) IS NOT NULL AS found`,
          [this.table('captf_objects'), this.table('captf_chunks'), this.table('captf_records')],
        )
      ).rows[0]!.found;
    try {
      if (await exists()) return;
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [CREATE_LOCK_KEY, this.target.schema]);
        const schemaFound = (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.target.schema]))
          .rowCount;
        if (!schemaFound) await client.query(`CREATE SCHEMA "${this.target.schema}"`);
        for (const statement of this.tableStatements()) await client.query(statement);
        await client.query('COMMIT');
        client.release();
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        client.release();
        throw error;
      }
    } catch (error) {
      this.tablesReady = undefined;
      throw this.failure(error);
    }
  }

  private tableStatements(): string[] {
    const objects = this.table('captf_objects');
    const chunks = this.table('captf_chunks');
    return [
      `CREATE TABLE IF NOT EXISTS ${objects} (
        store text NOT NULL,
        object text NOT NULL,
        manifest bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (store, object))`,
      // A chunk cannot outlive its object's manifest, nor be committed without one (the check is
      // deferred to the commit that writes the manifest): no partial object can exist.
      `CREATE TABLE IF NOT EXISTS ${chunks} (
        store text NOT NULL,
        object text NOT NULL,
        idx integer NOT NULL CHECK (idx >= 0),
        data bytea NOT NULL,
        PRIMARY KEY (store, object, idx),
        FOREIGN KEY (store, object) REFERENCES ${objects} (store, object) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED)`,
      // Gzipped already: stored out of line without compression, and read in slices (at most a byte past the size listed).
      `ALTER TABLE ${chunks} ALTER COLUMN data SET STORAGE EXTERNAL`,
      `CREATE TABLE IF NOT EXISTS ${this.table('captf_records')} (
        store text NOT NULL,
        name text NOT NULL,
        data bytea NOT NULL,
        written_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (store, name))`,
    ];
  }

  /** What a failure of the database means, as a RunnerError naming the store (never its credentials). */
  failure(error: unknown, object?: string): RunnerError {
    if (error instanceof RunnerError) return error;
    const { code, message } = error as { code?: string; message?: string };
    const location = this.target.location;
    const detail = { location, ...(code && { code }) };
    if (code === '23505' && object !== undefined) return artifactExists(location, object);
    if (code === '42501' || code === '28000' || code === '28P01') {
      return new RunnerError({
        kind: 'io',
        reason: 'StoreAccessDenied',
        message: `the PostgreSQL store ${location} refused the runner (${message}): its role needs USAGE on the schema and SELECT, INSERT, DELETE on its tables (INSERT, UPDATE on captf_records), or CREATE on the schema to create them (contract/sections/artifacts.md). Nothing was changed`,
        detail,
        cause: error,
      });
    }
    // No SQLSTATE (ECONNREFUSED, a timeout, a dropped connection), a connection exception, the server shutting down, a statement or lock timeout.
    const unreachable =
      !SQLSTATE.test(code ?? '') ||
      code!.startsWith('08') ||
      ['57P01', '57P02', '57P03', '57014', '55P03'].includes(code!);
    return new RunnerError({
      kind: 'io',
      reason: unreachable ? 'StoreUnreachable' : 'StoreFailed',
      message: unreachable
        ? `the PostgreSQL store ${location} could not be reached or did not answer in time (${message}): check that it is up and reachable from the Job; a retry can help`
        : `the PostgreSQL store ${location} failed (${message})`,
      detail,
      cause: error,
    });
  }
}

export interface PgTransaction {
  query<R extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  commit(): Promise<void>;
  /** Idempotent, never throws: a transaction given up on. */
  rollback(): Promise<void>;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** The first key of the advisory lock that guards creating the tables ("CAPT" in ASCII). */
const CREATE_LOCK_KEY = 0x43415054;
