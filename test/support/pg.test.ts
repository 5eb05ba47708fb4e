// The PostgreSQL helper: a real server terraform's pg backend can use, and that never outlives its test.
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startPostgres, usePostgres } from './pg.ts';
import {
  isProcessRunning,
  modules,
  replaceConfiguration,
  resourceIds,
  runTestTerraform,
  slowApply,
  tempDir,
  testTerraformEnv,
  withPgBackend,
  writeModule,
  type TerraformState,
} from './tf-modules.ts';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PG_MODULE = fileURLToPath(new URL('./pg.ts', import.meta.url));

test('a server takes a terraform pg backend, then stops leaving no process and no dir', async (t) => {
  const pg = await startPostgres(t);
  const connString = await pg.createDatabase('tfstate');
  assert.equal(connString, `postgres://postgres@127.0.0.1:${pg.port}/tfstate?sslmode=disable`);

  const dir = await writeModule(modules.pgBackend, t);
  const init = await runTestTerraform(dir, ['init', '-no-color', `-backend-config=conn_str=${connString}`]);
  assert.equal(init.exitCode, 0, init.stderr);
  const apply = await runTestTerraform(dir, ['apply', '-no-color', '-auto-approve']);
  assert.equal(apply.exitCode, 0, apply.stderr);
  const rows = await pg.stateRows('tfstate');
  assert.deepEqual(
    rows.map(({ id, name }) => ({ id, name })),
    [{ id: 1, name: 'default' }],
  );
  const state = JSON.parse(rows[0]!.data) as TerraformState;
  assert.ok(resourceIds(state)['terraform_data.cluster']);
  assert.deepEqual(await pg.advisoryLocks('tfstate'), [], 'terraform released its lock');

  const processes = pg.processIds();
  assert.ok(processes.length > 1, 'the postmaster and its children are visible');
  await pg.stop();
  assert.deepEqual(processes.filter(isProcessRunning), []);
  assert.equal(existsSync(pg.dir), false);
  await pg.stop(); // idempotent
});

test('an outage: pause ends every session and refuses connections; resume brings the same databases back', async (t) => {
  const pg = await startPostgres(t);
  await pg.createDatabase('kept');
  await pg.query('CREATE TABLE t (v int); INSERT INTO t VALUES (7)', 'kept');
  const processes = pg.processIds();
  await pg.pause();
  assert.deepEqual(processes.filter(isProcessRunning), [], 'no server process runs while paused');
  await assert.rejects(pg.query('SELECT 1', 'kept'));
  await pg.resume();
  assert.equal(await pg.query('SELECT v FROM t', 'kept'), '7');
});

describe('a server shared by the tests of a suite', () => {
  const shared = usePostgres();

  test('gives each test its own database on the same server, empty or a copy of another', async () => {
    const first = await shared.newDatabase();
    const second = await shared.newDatabase();
    assert.notEqual(first.name, second.name);
    assert.equal(new URL(first.connString).port, new URL(second.connString).port);
    assert.equal(await shared.server().query("SELECT count(*) FROM pg_database WHERE datname LIKE 'test\\_%'"), '2');

    // A copy holds the rows of the database it was made from, and is a database of its own.
    await shared.server().query("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('from the first')", first.name);
    const copy = await shared.newDatabase(first);
    assert.notEqual(copy.name, first.name);
    assert.equal(await shared.server().query('SELECT v FROM kept', copy.name), 'from the first');
    await shared.server().query("INSERT INTO kept VALUES ('only in the copy')", copy.name);
    assert.equal(await shared.server().query('SELECT count(*) FROM kept', first.name), '1');
  });

  test('shows the advisory lock an apply holds, keyed by the state row, and its release after an interrupt', async (t) => {
    const db = await shared.newDatabase();
    const dir = await writeModule(modules.pgBackend, t);
    const init = await runTestTerraform(dir, ['init', '-no-color', `-backend-config=conn_str=${db.connString}`]);
    assert.equal(init.exitCode, 0, init.stderr);
    assert.equal((await runTestTerraform(dir, ['apply', '-no-color', '-auto-approve'])).exitCode, 0);
    await replaceConfiguration(dir, withPgBackend(slowApply({ resources: 2, seconds: 60 })));

    // Its own process group, so the local-exec sleeps it leaves behind can be ended with it.
    const apply = execa('terraform', ['apply', '-no-color', '-auto-approve'], {
      cwd: dir,
      env: testTerraformEnv(),
      extendEnv: false,
      reject: false,
      detached: true,
    });
    t.after(() => {
      try {
        process.kill(-apply.pid!, 'SIGKILL');
      } catch {
        // the group is already empty
      }
    });
    const lock = await shared.server().waitForAdvisoryLock(db.name);
    const [row] = await shared.server().stateRows(db.name);
    assert.equal(lock.key, BigInt(row!.id), 'the pg backend locks on the id of the state row');

    apply.kill('SIGINT');
    const { exitCode } = await apply;
    assert.equal(exitCode, 1);
    assert.deepEqual(await shared.server().advisoryLocks(db.name), []);
  });
});

describe('servers whose test process ends without running its hooks', () => {
  /** Starts a node process that starts a server, reports it, then does `then`. */
  async function childWithServer(t: TestContext, then: 'exit' | 'wait') {
    const dir = await tempDir(t);
    const script = join(dir, 'child.mts');
    await writeFile(
      script,
      `import { startPostgres } from ${JSON.stringify(PG_MODULE)};
const pg = await startPostgres();
console.log(JSON.stringify({ dir: pg.dir, processes: pg.processIds() }));
${then === 'exit' ? 'process.exit(0);' : 'setInterval(() => {}, 1000);'}
`,
    );
    const child = execa(process.execPath, ['--import', 'tsx', script], {
      cwd: REPO_ROOT,
      reject: false,
      buffer: false,
    });
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString()));
      child.once('exit', () => reject(new Error('the child exited before reporting its server')));
    });
    return { child, server: JSON.parse(line) as { dir: string; processes: number[] } };
  }

  function assertGone(server: { dir: string; processes: number[] }) {
    assert.ok(server.processes.length > 0);
    assert.deepEqual(server.processes.filter(isProcessRunning), []);
    assert.equal(existsSync(server.dir), false);
  }

  test('process.exit() stops the server', async (t) => {
    const { child, server } = await childWithServer(t, 'exit');
    assert.equal((await child).exitCode, 0);
    assertGone(server);
  });

  test('SIGTERM stops the server, and the process still dies by SIGTERM', async (t) => {
    const { child, server } = await childWithServer(t, 'wait');
    child.kill('SIGTERM');
    assert.equal((await child).signal, 'SIGTERM');
    assertGone(server);
  });

  test('after SIGKILL, the next server started reaps the orphan', async (t) => {
    const { child, server } = await childWithServer(t, 'wait');
    child.kill('SIGKILL');
    await child;
    assert.ok(server.processes.some(isProcessRunning), 'SIGKILL left the server running');
    assert.match(await readFile(join(server.dir, 'owner.pid'), 'utf8'), /^\d+\n$/);
    await startPostgres(t);
    assertGone(server);
  });
});
