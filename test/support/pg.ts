// A real PostgreSQL 15 server for tests: terraform's `pg` backend (state rows, advisory locks).
//
// Each server lives in its own temp dir (`<tmpdir>/captf-pg-XXXXXX`), listens on a free loopback
// port with trust auth for 127.0.0.1 only (no unix socket), and runs as a non-root user: postgres
// refuses to run as root, and tests run as root in CI. Three nets make sure no server outlives its
// test process: node:test `after` hooks (usePostgres, startPostgres(t)), an `exit`/signal handler,
// and a reaper that removes servers whose test process died by SIGKILL (see reapOrphanedServers).
import { execa } from 'execa';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, type TestContext } from 'node:test';
import { isProcessRunning, processEnds } from './tf-modules.ts';
import { freeLoopbackPort, markOwner, reapOrphanedServers, releaseAtExit, stopAtExit } from './server-nets.ts';

/** Where Debian's postgresql-15 package puts its binaries. */
export const PG_BIN_DIR = process.env.CAPTF_PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
/** The system user servers run as when the tests run as root. */
export const PG_OS_USER = 'captf-pg';

const DIR_PREFIX = 'captf-pg-';
const SUPERUSER = 'postgres';
// Identifiers we interpolate into SQL: restricted instead of quoted, so no quoting rules to get wrong.
const SAFE_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
// Postgres refuses to run as root: as root we run its binaries as PG_OS_USER.
const RUN_AS_SERVER_USER = process.getuid?.() === 0;
// Absolute where present: root's PATH in CI does not always hold the sbin dirs.
const sbin = (name: string) => (existsSync(`/usr/sbin/${name}`) ? `/usr/sbin/${name}` : name);

export interface AdvisoryLock {
  database: string;
  /** The bigint key given to pg_advisory_lock: terraform uses the state row id, -1 while creating it. */
  key: bigint;
  /** Backend pid of the session holding or waiting for the lock. */
  pid: number;
  granted: boolean;
}

export interface StateRow {
  id: number;
  /** The workspace name ("default"). */
  name: string;
  /** The state document as terraform stored it (JSON text). */
  data: string;
}

export interface PostgresServer {
  readonly port: number;
  /** The temp dir holding the data dir and the server log; removed by stop(). */
  readonly dir: string;
  connString(database: string): string;
  /** Creates a database (a copy of `template` when given) and returns its connection string. */
  createDatabase(name: string, template?: string): Promise<string>;
  /** Runs SQL with psql as the superuser; returns stdout in unaligned tuples-only form, trimmed. */
  query(sql: string, database?: string): Promise<string>;
  /** Advisory locks currently held or awaited, in every database unless one is named. */
  advisoryLocks(database?: string): Promise<AdvisoryLock[]>;
  /** Polls until an advisory lock is granted in the database; throws after timeoutMs. */
  waitForAdvisoryLock(database: string, timeoutMs?: number): Promise<AdvisoryLock>;
  /** Rows of `<schema>.states`, where the pg backend keeps one row per workspace. */
  stateRows(database: string, schema?: string): Promise<StateRow[]>;
  /** Pids of the running postmaster and its children (Linux /proc), to check that none survive stop(). */
  processIds(): number[];
  /** An outage: a fast shutdown (every session ends) that keeps the data dir, the port and the databases; resume() starts it again. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Fast shutdown, then removes the temp dir. Idempotent; never throws for an already dead server. */
  stop(): Promise<void>;
}

export interface TestDatabase {
  name: string;
  connString: string;
}

export interface SharedPostgres {
  /** The running server (started by the first newDatabase call). */
  server(): PostgresServer;
  /**
   * A fresh database on the file's shared server, one per test; with `from`, a copy of that database
   * (CREATE DATABASE … TEMPLATE: its state rows as terraform left them), which nobody may be using.
   */
  newDatabase(from?: TestDatabase): Promise<TestDatabase>;
}

/**
 * One server shared by the tests of a suite (a test file when called at top level), started on
 * first use and stopped by an `after` hook of that suite. Call at module level or in a describe().
 */
export function usePostgres(): SharedPostgres {
  let starting: Promise<PostgresServer> | undefined;
  let started: PostgresServer | undefined;
  let databases = 0;
  after(async () => {
    if (starting) await (await starting.catch(() => undefined))?.stop();
  });
  return {
    server() {
      if (!started) throw new Error('usePostgres: call newDatabase() before server()');
      return started;
    },
    async newDatabase(from) {
      starting ??= startPostgres();
      started = await starting;
      const name = `test_${++databases}`;
      return { name, connString: await started.createDatabase(name, from?.name) };
    },
  };
}

/** Starts a server; with a test context, the server is stopped when that test ends. */
export async function startPostgres(t?: TestContext): Promise<PostgresServer> {
  reapOrphanedServers(DIR_PREFIX, stopSync);
  const runAs = await serverUser();
  const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  const dataDir = join(dir, 'data');
  const stopNow = () => stopSync(dir);
  stopAtExit(stopNow);
  try {
    await markOwner(dir);
    if (runAs) await chown(dir, runAs.uid, runAs.gid);
    await execa(
      ...asServerUser('initdb', [
        `--pgdata=${dataDir}`,
        `--username=${SUPERUSER}`,
        '--auth=trust',
        '--encoding=UTF8',
        '--locale=C',
        '--no-sync',
        '--no-instructions',
      ]),
    );
    // Replace initdb's rules (which also trust ::1 and local sockets) with exactly one.
    await writeOwned(join(dataDir, 'pg_hba.conf'), 'host all all 127.0.0.1/32 trust\n', runAs);
    await writeOwned(
      join(dataDir, 'postgresql.conf'),
      `${await readFile(join(dataDir, 'postgresql.conf'), 'utf8')}\ninclude 'captf-test.conf'\n`,
      runAs,
    );
    const port = await startOnFreePort(dir, dataDir, runAs);
    const server = makeServer(dir, port, async () => {
      releaseAtExit(stopNow);
      await stopServer(dir);
    });
    t?.after(() => server.stop());
    return server;
  } catch (error) {
    stopNow();
    releaseAtExit(stopNow);
    throw error;
  }
}

function makeServer(dir: string, port: number, stopOnce: () => Promise<void>): PostgresServer {
  let stopping: Promise<void> | undefined;
  const server: PostgresServer = {
    port,
    dir,
    connString: (database) => `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}?sslmode=disable`,
    async createDatabase(name, template) {
      await server.query(
        `CREATE DATABASE ${safeIdentifier(name)}${template ? ` TEMPLATE ${safeIdentifier(template)}` : ''}`,
      );
      return server.connString(name);
    },
    async query(sql, database = 'postgres') {
      const { stdout } = await execa(join(PG_BIN_DIR, 'psql'), [
        '--no-psqlrc',
        '--quiet',
        '--no-align',
        '--tuples-only',
        '--set=ON_ERROR_STOP=1',
        '--host=127.0.0.1',
        `--port=${port}`,
        `--username=${SUPERUSER}`,
        `--dbname=${database}`,
        '--command',
        sql,
      ]);
      return stdout.trim();
    },
    async advisoryLocks(database) {
      const where = database ? ` AND d.datname = '${safeIdentifier(database)}'` : '';
      const rows = JSON.parse(
        await server.query(
          `SELECT coalesce(json_agg(json_build_object('database', d.datname, 'classid', l.classid,
           'objid', l.objid, 'pid', l.pid, 'granted', l.granted)), '[]')
         FROM pg_locks l JOIN pg_database d ON d.oid = l.database
         WHERE l.locktype = 'advisory'${where}`,
        ),
      ) as Array<{
        database: string;
        classid: number;
        objid: number;
        pid: number;
        granted: boolean;
      }>;
      // A bigint key is split into classid (high 32 bits) and objid (low 32 bits).
      return rows.map(({ classid, objid, ...rest }) => ({
        ...rest,
        key: BigInt.asIntN(64, (BigInt(classid) << 32n) | BigInt(objid)),
      }));
    },
    async waitForAdvisoryLock(database, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const held = (await server.advisoryLocks(database)).find((lock) => lock.granted);
        if (held) return held;
        if (Date.now() > deadline) throw new Error(`no advisory lock in ${database} after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stateRows(database, schema = 'terraform_remote_state') {
      return JSON.parse(
        await server.query(
          `SELECT coalesce(json_agg(json_build_object('id', id, 'name', name, 'data', data) ORDER BY id), '[]')
         FROM ${safeIdentifier(schema)}.states`,
          database,
        ),
      ) as StateRow[];
    },
    processIds: () => postmasterAndChildren(join(dir, 'data')),
    async pause() {
      const processes = server.processIds();
      await execa(...asServerUser('pg_ctl', ['stop', '--wait', '--mode=fast', `--pgdata=${join(dir, 'data')}`]));
      // pg_ctl returns once the pid file is gone, a moment before the processes have exited (as in stopServer).
      const ended = await Promise.all(processes.map((pid) => processEnds(pid)));
      const running = processes.filter((_, i) => !ended[i]);
      if (running.length > 0)
        throw new Error(`pause: server processes ${running.join(', ')} still run 5 s after pg_ctl stop`);
    },
    async resume() {
      await execa(
        ...asServerUser('pg_ctl', [
          'start',
          '--wait',
          '--timeout=30',
          `--pgdata=${join(dir, 'data')}`,
          `--log=${join(dir, 'postgres.log')}`,
        ]),
      );
    },
    stop: () => (stopping ??= stopOnce()),
  };
  return server;
}

// ---- starting and stopping ------------------------------------------------------------------

interface OsUser {
  uid: number;
  gid: number;
}

/** The owner of the server's files: `captf-pg` (created if missing) when root, else ourselves. */
async function serverUser(): Promise<OsUser | undefined> {
  if (!RUN_AS_SERVER_USER) return undefined;
  const existing = await lookupUser(PG_OS_USER);
  if (existing) return existing;
  const created = await execa(
    sbin('useradd'),
    [
      '--system',
      '--user-group',
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      PG_OS_USER,
    ],
    { reject: false },
  );
  // A concurrent test file may have created it first: that is fine.
  const user = await lookupUser(PG_OS_USER);
  if (!user) throw new Error(`cannot create system user ${PG_OS_USER}: ${created.stderr}`);
  return user;
}

async function lookupUser(name: string): Promise<OsUser | undefined> {
  const uid = await execa('id', ['-u', name], { reject: false });
  const gid = await execa('id', ['-g', name], { reject: false });
  if (uid.exitCode !== 0 || gid.exitCode !== 0) return undefined;
  return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
}

/** [file, args] running a postgres binary, through runuser when we are root. */
function asServerUser(binary: string, args: string[]): [string, string[]] {
  const path = join(PG_BIN_DIR, binary);
  return RUN_AS_SERVER_USER ? [sbin('runuser'), ['-u', PG_OS_USER, '--', path, ...args]] : [path, args];
}

async function writeOwned(path: string, content: string, runAs: OsUser | undefined) {
  await writeFile(path, content, { mode: 0o600 });
  if (runAs) await chown(path, runAs.uid, runAs.gid);
}

/** The port is free when we pick it but another process may take it first: retry with another. */
async function startOnFreePort(dir: string, dataDir: string, runAs: OsUser | undefined): Promise<number> {
  const logFile = join(dir, 'postgres.log');
  for (let attempt = 1; ; attempt++) {
    const port = await freeLoopbackPort();
    await writeOwned(
      join(dataDir, 'captf-test.conf'),
      [
        "listen_addresses = '127.0.0.1'",
        `port = ${port}`,
        "unix_socket_directories = ''",
        // Durability is worthless for a throwaway server; these make startup and commits fast.
        'fsync = off',
        'synchronous_commit = off',
        'full_page_writes = off',
        'max_connections = 40',
        'shared_buffers = 16MB',
        '',
      ].join('\n'),
      runAs,
    );
    const started = await execa(
      ...asServerUser('pg_ctl', ['start', '--wait', '--timeout=30', `--pgdata=${dataDir}`, `--log=${logFile}`]),
      { reject: false },
    );
    if (started.exitCode === 0) return port;
    const log = existsSync(logFile) ? await readFile(logFile, 'utf8') : '';
    if (attempt < 5 && /could not bind|already in use/i.test(log)) continue;
    throw new Error(`pg_ctl start failed (exit ${started.exitCode}): ${started.stderr}\n${log.slice(-2000)}`);
  }
}

async function stopServer(dir: string) {
  const dataDir = join(dir, 'data');
  const processes = postmasterAndChildren(dataDir);
  if (processes.length > 0) {
    const fast = await execa(...asServerUser('pg_ctl', ['stop', '--wait', '--mode=fast', `--pgdata=${dataDir}`]), {
      reject: false,
    });
    if (fast.exitCode !== 0) stopSync(dir);
    // pg_ctl returns once the pid file is gone, a moment before the processes have exited.
    const ended = await Promise.all(processes.map((pid) => processEnds(pid)));
    for (const [i, pid] of processes.entries()) if (!ended[i]) killQuietly(pid, 'SIGKILL');
  }
  await rm(dir, { recursive: true, force: true });
}

/** Synchronous so it can run in an `exit` handler: immediate shutdown, then remove the dir. */
function stopSync(dir: string) {
  const dataDir = join(dir, 'data');
  if (existsSync(join(dataDir, 'postmaster.pid'))) {
    spawnSync(...asServerUser('pg_ctl', ['stop', '--wait', '--mode=immediate', `--pgdata=${dataDir}`]), {
      stdio: 'ignore',
    });
    for (const pid of postmasterAndChildren(dataDir)) killQuietly(pid, 'SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
}

// ---- the nets under node:test hooks -----------------------------------------------------------

function postmasterAndChildren(dataDir: string): number[] {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return [];
  }
  if (!postmaster || !isProcessRunning(postmaster)) return [];
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        // Field 4 of /proc/PID/stat is the parent pid; the command name before it may hold spaces.
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    });
  return [postmaster, ...children.map(Number)];
}

function killQuietly(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

function safeIdentifier(name: string): string {
  if (!SAFE_IDENTIFIER.test(name)) throw new Error(`not a simple SQL identifier: ${JSON.stringify(name)}`);
  return name;
}
