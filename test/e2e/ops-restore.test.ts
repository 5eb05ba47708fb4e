// State backups and restore with terraform's pg backend, end to end: a real PostgreSQL (started and
// stopped by this file, shared by its tests, one database each), the real terraform, real modules.
// Every refusal is checked on the state row afterwards: unchanged.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { cp, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { usePostgres, type TestDatabase } from '../support/pg.ts';
import {
  modules,
  resourceIds,
  tempDir,
  withPgBackend,
  writeTree,
  type FileTree,
  type TerraformState,
} from '../support/tf-modules.ts';
import { explain, recordedInputsHash, runRunner, type RunnerRun } from '../support/runner.ts';
import { unpackArtifactDir } from '../support/artifacts.ts';
import { sharedSetup } from '../support/suite-setup.ts';

const CANARY = 'CANARY-restore-5ecret-Bn6';
const IMAGE = 'registry.example/captf-module:1.0.0';
const pg = usePostgres();
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

interface PgScenario {
  dir: string;
  db: TestDatabase;
  backups: string;
  /** The runner's --out. */
  out: string;
  useModule(tree: FileTree): Promise<void>;
  run(op: string, args?: string[]): Promise<RunnerRun>;
  /** The state the pg backend holds now, undefined when there is none. */
  state(): Promise<TerraformState | undefined>;
  /** The raw state row text, to compare byte for byte. */
  row(): Promise<string | undefined>;
}

/** A module whose backend is pg (backend.tf), its own database, and --backend-config FILE (no --state). */
async function pgScenario(t: TestContext, db?: TestDatabase): Promise<PgScenario> {
  const dir = await tempDir(t, 'captf-e2e-pg-');
  const database = db ?? (await pg.newDatabase());
  const module = join(dir, 'module');
  const inputs = join(dir, 'inputs');
  const out = join(dir, 'out');
  const termination = join(dir, 'termination-log');
  const backendConfig = join(dir, 'backend.hcl');
  await writeFile(backendConfig, `conn_str = ${JSON.stringify(database.connString)}\n`);
  await mkdir(inputs, { recursive: true });
  await writeFile(join(inputs, 'terraform.tfvars.json'), JSON.stringify({ admin_token: CANARY }));
  const row = async () => {
    try {
      return (await pg.server().stateRows(database.name))[0]?.data;
    } catch {
      return undefined; // no states table yet: terraform creates it on first use
    }
  };
  const s: PgScenario = {
    dir,
    db: database,
    backups: join(dir, 'backups'),
    out,
    async useModule(tree) {
      await rm(module, { recursive: true, force: true });
      await mkdir(module, { recursive: true });
      await writeTree(module, withPgBackend(tree));
    },
    run: (op, args = []) =>
      runRunner(
        [
          op,
          '--module',
          module,
          '--inputs',
          inputs,
          '--out',
          out,
          '--termination-log',
          termination,
          '--log-format',
          'json',
          '--backend-config',
          backendConfig,
          ...args,
        ],
        {},
        { out, termination },
      ),
    row,
    async state() {
      const data = await row();
      return data === undefined ? undefined : (JSON.parse(data) as TerraformState);
    },
  };
  await s.useModule(modules.base);
  return s;
}

async function mustRun(s: PgScenario, op: string, args: string[]): Promise<RunnerRun> {
  const run = await s.run(op, args);
  assert.equal(run.exitCode, 0, `${op} ${args.join(' ')}: ${explain(run)}`);
  return run;
}

/**
 * The applies the tests start from, made once: base into an empty backend (a copy of the database as
 * it left it kept as `firstApplied`), then the in-place `update`, both with --backups: the update's
 * backup holds the state of the first apply. Tests change only copies; they may read the runs.
 */
const applied = sharedSetup(async (suite) => {
  const s = await pgScenario(suite);
  const first = await mustRun(s, 'apply', ['--image', IMAGE, '--backups', s.backups]);
  const firstApplied = await pg.newDatabase(s.db);
  const backedUp = (await s.state())!;
  await s.useModule(modules.update);
  const second = await mustRun(s, 'apply', ['--image', IMAGE, '--backups', s.backups, '--chunk-bytes', '1024']);
  return {
    s,
    first,
    second,
    firstApplied,
    updated: s.db,
    backups: s.backups,
    object: second.result!.backup!.object,
    backedUp,
  };
});

/**
 * A scenario whose database is a copy of the updated one and whose backups dir a copy of the one
 * the update wrote: the backup holds the state of the first apply. Returns the backup dir and that state.
 */
async function withBackup(t: TestContext): Promise<{ s: PgScenario; backup: string; backedUp: TerraformState }> {
  const made = await applied();
  const s = await pgScenario(t, await pg.newDatabase(made.updated));
  await cp(made.backups, s.backups, { recursive: true });
  return { s, backup: join(s.backups, made.object), backedUp: made.backedUp };
}

const clusterGeneration = (state: TerraformState) =>
  (
    state.resources.find((r) => r.name === 'cluster')!.instances[0]!.attributes.input as {
      value: { generation: number };
    }
  ).value.generation;

describe('backups (pg backend)', () => {
  it('an apply writes a complete backup of the state before it changes anything', async () => {
    // The file's setup runs exactly these two applies: the test reads what they did.
    const { s, first, second, backedUp: before } = await applied();
    assert.equal(first.result!.backup, undefined, 'no state yet: nothing to back up');
    assert.equal(first.result!.steps.find((step) => step.name === 'backup')?.status, 'skipped');

    const names = second.result!.steps.map((step) => step.name);
    assert.ok(names.indexOf('backup') < names.indexOf('apply'), names.join(','));
    const ref = second.result!.backup!;
    const objectDir = join(ref.location, ref.object);
    assert.equal(ref.ref, objectDir, 'the reference --backup and captf.io/restore-state take, ready');
    const { manifest, files } = await unpackArtifactDir(objectDir);
    assert.equal(manifest.kind, 'StateBackup');
    assert.equal(manifest.serial, before.serial);
    assert.equal(manifest.lineage, before.lineage);
    assert.equal(manifest.op, 'apply');
    assert.equal(manifest.chunkCount, ref.chunks);
    assert.ok(ref.chunks > 1, 'small chunks: several');
    const backedUp = JSON.parse(files['terraform.tfstate']!.toString('utf8')) as TerraformState;
    assert.deepEqual(backedUp, before, 'the backup is the state as it was before the apply');
    assert.equal((manifest.files as Array<{ sha256: string }>)[0]!.sha256, sha256(files['terraform.tfstate']!));
    for (const dir of [s.backups, objectDir]) assert.equal((await stat(dir)).mode & 0o777, 0o700, dir);
    for (const name of await readdir(objectDir))
      assert.equal((await stat(join(objectDir, name))).mode & 0o777, 0o600, name);
    assert.equal(clusterGeneration((await s.state())!), 2, 'and then the apply went on');
  });

  it('a backup store that cannot be used stops the apply before it plans or changes anything', async (t) => {
    const s = await pgScenario(t, await pg.newDatabase((await applied()).firstApplied));
    const row = await s.row();
    assert.ok(row, 'the first apply stored a state');
    await s.useModule(modules.update);
    await mkdir(s.out, { recursive: true, mode: 0o700 });
    // The default backups dir, <out>/backups, taken by a file (an explicit --backups dir is probed in preflight, see disk.test.ts).
    await writeFile(join(s.out, 'backups'), 'not a directory');
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 1, explain(run));
    // The store is first read before the plan: every op that plans looks there for a kept errored state (faults §4),
    // a guarded apply in its step backup store.
    assert.equal(run.result!.error!.step, 'backup store');
    assert.ok(!run.result!.steps.some((step) => step.name === 'plan'), 'nothing planned');
    assert.equal(run.result!.applied, false);
    assert.ok(!run.result!.steps.some((step) => step.name === 'apply'));
    assert.equal(await s.row(), row, 'the state is untouched');
  });
});

describe('restore (pg backend)', () => {
  it('the backup being restored survives the retention of the backup the restore takes first', async (t) => {
    const { s, backup } = await withBackup(t);
    const run = await mustRun(s, 'restore', ['--backup', backup, '--backups', s.backups, '--keep-backups', '1']);
    assert.equal(run.result!.backup!.location, s.backups, 'the current state was kept in the same store');
    assert.ok(existsSync(backup), 'retention kept the backup that was restored');
    assert.ok(existsSync(join(s.backups, run.result!.backup!.object)));
  });

  it("into the same database after later applies: same lineage, the backup's content as the newest serial", async (t) => {
    const { s, backup, backedUp } = await withBackup(t);
    // A later apply: another change again.
    await s.useModule(modules.replace);
    await mustRun(s, 'apply', [
      '--image',
      'registry.example/captf-module:2.0.0',
      '--kind',
      'machine',
      '--guard',
      'off',
    ]);
    const current = (await s.state())!;
    assert.notEqual(recordedInputsHash(current), recordedInputsHash(backedUp));

    // Without --backups (and outside a cluster) the state a restore replaces is kept under the out dir.
    const run = await mustRun(s, 'restore', ['--backup', backup]);
    const r = run.result!;
    assert.equal(r.outcome, 'succeeded');
    assert.equal(r.reason, 'RestoreSucceeded');
    assert.equal(r.restoredFrom!.object, backup.split('/').at(-1));
    assert.equal(r.backup!.location, join(s.out, 'backups'));
    const kept = await unpackArtifactDir(join(s.out, 'backups', r.backup!.object));
    assert.deepEqual(
      JSON.parse(kept.files['terraform.tfstate']!.toString('utf8')).resources,
      current.resources,
      'the replaced state was kept first',
    );
    const restored = (await s.state())!;
    assert.equal(restored.lineage, backedUp.lineage);
    assert.ok(restored.serial > current.serial, `serial ${restored.serial} above the current ${current.serial}`);
    assert.deepEqual(restored.resources, backedUp.resources);
    assert.deepEqual(restored.outputs, backedUp.outputs);
    assert.equal(clusterGeneration(restored), 1);
    assert.equal(
      recordedInputsHash(restored),
      recordedInputsHash(backedUp),
      "the recorded inputs hash is the backup's",
    );
    assert.equal(r.stateInputsHash, recordedInputsHash(backedUp));
    assert.deepEqual(r.state, {
      serialBefore: current.serial,
      serialAfter: restored.serial,
      lineage: backedUp.lineage,
    });
    assert.ok(!run.allBytes.includes(CANARY));

    // terraform works on from the restored state: the base module is what it records.
    await s.useModule(modules.base);
    const drift = await mustRun(s, 'drift', ['--image', IMAGE]);
    assert.equal(drift.result!.drift!.found, false, 'the restored state matches the module it was made with');
  });

  it('into a fresh database (no state yet)', async (t) => {
    const { backup, backedUp } = await withBackup(t);
    const fresh = await pgScenario(t);
    assert.equal(await fresh.state(), undefined);
    const run = await mustRun(fresh, 'restore', ['--backup', backup]);
    assert.ok(
      [0, null].includes(run.result!.state!.serialBefore),
      'no state before (pg shows an empty one at serial 0)',
    );
    const restored = (await fresh.state())!;
    assert.equal(restored.lineage, backedUp.lineage);
    assert.deepEqual(restored.resources, backedUp.resources);
    assert.deepEqual(resourceIds(restored), resourceIds(backedUp));
    assert.equal(recordedInputsHash(restored), recordedInputsHash(backedUp));
  });

  it('a backup of another lineage is refused without --force (nothing pushed) and accepted with it', async (t) => {
    const { s: other, backup, backedUp } = await withBackup(t);
    // The backend's state (the update's) given a lineage of its own, as a state started afresh there would have.
    const otherLineage = randomUUID();
    await pg
      .server()
      .query(
        `UPDATE terraform_remote_state.states SET data = replace(data, '"${backedUp.lineage}"', '"${otherLineage}"')`,
        other.db.name,
      );
    const row = await other.row();
    assert.equal((await other.state())!.lineage, otherLineage);
    assert.notDeepEqual((await other.state())!.resources, backedUp.resources, 'the backup holds another state');

    const refused = await other.run('restore', ['--backup', backup]);
    // Only --force passes it, so a retry never does: exit 2, in the step decide.
    assert.equal(refused.exitCode, 2, explain(refused));
    assert.equal(refused.result!.reason, 'LineageMismatch');
    assert.equal(refused.result!.error?.step, 'decide');
    assert.equal(refused.result!.steps.at(-1)?.name, 'decide');
    assert.match(refused.result!.message, /Nothing was pushed/);
    assert.match(refused.result!.message, /--force/);
    assert.equal(refused.result!.mayHaveChanged, false);
    assert.equal(await other.row(), row, 'the state is untouched');

    const forced = await mustRun(other, 'restore', ['--backup', backup, '--force', '--backups', other.backups]);
    assert.equal(
      forced.result!.backup
        ? (await unpackArtifactDir(join(other.backups, forced.result!.backup.object))).manifest.lineage
        : undefined,
      otherLineage,
      'the state of another lineage was kept before it was replaced',
    );
    assert.equal(forced.result!.reason, 'RestoreSucceeded');
    const restored = (await other.state())!;
    assert.equal(restored.lineage, backedUp.lineage);
    assert.deepEqual(restored.resources, backedUp.resources);
  });

  it('a corrupt, partial or unsafe backup is refused before terraform init and nothing is pushed', async (t) => {
    const { s, backup } = await withBackup(t);
    const row = await s.row();
    assert.ok(row, 'the backend holds a state');
    const work = await tempDir(t, 'captf-backups-');
    const object = backup.split('/').at(-1)!;
    let copies = 0;
    const damaged = async (damage: (dir: string) => Promise<void>) => {
      const dir = join(work, String(++copies), object);
      await cp(backup, dir, { recursive: true });
      await damage(dir);
      return dir;
    };
    /** A backup whose tar holds `entries` (a manifest that lists terraform.tfstate as it is in the real backup). */
    const forged = async (entries: Array<{ header: Partial<tar.Header> & { name: string }; data?: Buffer }>) => {
      const manifest = JSON.parse(await readFile(join(backup, 'manifest.json'), 'utf8'));
      const pack = tar.pack();
      for (const { header, data } of entries) pack.entry(header as tar.Header, data ?? '');
      pack.finalize();
      const parts: Buffer[] = [];
      for await (const piece of pack) parts.push(piece as Buffer);
      const payload = gzipSync(Buffer.concat(parts));
      const dir = join(work, String(++copies), object);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'chunk-00000'), payload);
      Object.assign(manifest, {
        chunks: [{ index: 0, bytes: payload.length, sha256: sha256(payload) }],
        chunkCount: 1,
        totalBytes: payload.length,
        sha256: sha256(payload),
      });
      await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
      return dir;
    };
    const realState = (await unpackArtifactDir(backup)).files['terraform.tfstate']!;
    const cases: Array<{ name: string; dir: () => Promise<string>; reason: string }> = [
      {
        name: 'manifest missing',
        dir: () => damaged((dir) => rm(join(dir, 'manifest.json'))),
        reason: 'ArtifactIncomplete',
      },
      {
        name: 'a corrupted chunk',
        dir: () =>
          damaged(async (dir) => {
            const data = await readFile(join(dir, 'chunk-00000'));
            data[20]! ^= 0x01;
            await writeFile(join(dir, 'chunk-00000'), data);
          }),
        reason: 'ArtifactCorrupt',
      },
      {
        name: 'a missing chunk',
        dir: () => damaged((dir) => rm(join(dir, 'chunk-00001'))),
        reason: 'ArtifactIncomplete',
      },
      { name: 'no such backup', dir: async () => join(work, 'nothing-here', object), reason: 'ArtifactIncomplete' },
      {
        name: 'a symlink entry',
        dir: () => forged([{ header: { name: 'terraform.tfstate', type: 'symlink', linkname: '/etc/passwd' } }]),
        reason: 'ArtifactUnsafe',
      },
      {
        name: 'a path climbing out',
        dir: () => forged([{ header: { name: '../terraform.tfstate', size: realState.length }, data: realState }]),
        reason: 'ArtifactUnsafe',
      },
      {
        name: 'an entry not in the manifest',
        dir: () => forged([{ header: { name: 'evil.tf', size: 3 }, data: Buffer.from('abc') }]),
        reason: 'ArtifactUnsafe',
      },
      {
        name: 'an entry bigger than the manifest says',
        dir: () =>
          forged([
            {
              header: { name: 'terraform.tfstate', size: realState.length + 100 },
              data: Buffer.concat([realState, Buffer.alloc(100, 32)]),
            },
          ]),
        reason: 'ArtifactUnsafe',
      },
    ];
    for (const c of cases) {
      const run = await s.run('restore', ['--backup', await c.dir(), '--backups', s.backups]);
      assert.equal(run.exitCode, 1, `${c.name}: ${explain(run)}`);
      assert.equal(run.result!.reason, c.reason, `${c.name}: ${run.result!.message}`);
      assert.equal(run.result!.mayHaveChanged, false, c.name);
      assert.ok(!run.result!.steps.some((step) => step.name === 'state push'), c.name);
      assert.ok(!run.result!.steps.some((step) => step.name === 'init'), `${c.name}: refused before terraform init`);
      assert.equal(await s.row(), row, `${c.name}: the state is untouched`);
    }
    // The genuine backup restores: the refusals were the damage.
    await mustRun(s, 'restore', ['--backup', backup, '--backups', s.backups]);
    assert.notEqual(await s.row(), row);
  });
});
