// The backup store with the real terraform: what a forged or damaged backup can make `restore` do
// (a chunk swapped for a huge file is refused without being read into memory, a manifest that
// declares more than --max-artifact-bytes before anything is read or written), and retention when
// states share one store.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, readdir, readFile, rename, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import tar from 'tar-stream';
import type { Result } from '../../src/schemas/result.ts';
import { DirStore } from '../../src/store/dir-store.ts';
import { runChecked } from '../support/exec.ts';
import { sharedSetup } from '../support/suite-setup.ts';
import { modules, testTerraformEnv } from '../support/tf-modules.ts';
import { storeCraftedBackup } from '../store/stores.support.ts';
import { explain, RUNNER, scenario, type Scenario } from '../support/runner.ts';

interface MeasuredRun {
  exitCode: number | null;
  result: Result | undefined;
  stderr: string;
  /** The runner's peak resident memory (VmHWM) and what it wrote (wchar: files and pipes), as last sampled. */
  peakRssMiB: number;
  writtenMiB: number;
}

/** Runs the runner and samples /proc for its memory and the bytes it wrote. */
async function measuredRun(s: Scenario, [op, ...args]: [string, ...string[]]): Promise<MeasuredRun> {
  const child = spawn(process.execPath, [RUNNER, ...s.runArgs(op, args)], {
    env: testTerraformEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
  let peakKiB = 0;
  let written = 0;
  const sample = () => {
    try {
      peakKiB = Math.max(
        peakKiB,
        Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0),
      );
      written = Math.max(
        written,
        Number(/wchar:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/io`, 'utf8'))?.[1] ?? 0),
      );
    } catch {
      // exited
    }
  };
  const sampler = setInterval(sample, 20);
  const exitCode = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearInterval(sampler);
  const result = await readFile(join(s.out, 'result.json'), 'utf8').then(
    (text) => JSON.parse(text) as Result,
    () => undefined,
  );
  return { exitCode, result, stderr, peakRssMiB: peakKiB / 1024, writtenMiB: written / 1024 / 1024 };
}

const SECOND_INPUTS = { 'terraform.tfvars.json': { admin_token: 'second-token' } };

/**
 * An applied state and a backup of it, taken by a second apply: the same for every test, so the
 * file makes it once and each test gets a copy of both (terraform's state, the runner's backup).
 */
const backedUp = sharedSetup(async (suite) => {
  const s = await scenario(suite, modules.base, { 'terraform.tfvars.json': { admin_token: 'first-token' } });
  assert.equal((await s.run('apply')).exitCode, 0);
  await s.setInputs(SECOND_INPUTS);
  const second = await s.run('apply');
  assert.equal(second.exitCode, 0, explain(second));
  return {
    stateDir: dirname(s.state),
    backupDir: join(second.result!.backup!.location, second.result!.backup!.object),
  };
});

/** A scenario of its own holding a copy of the applied state, and its backup under <out>/backups. */
async function withBackup(
  t: Parameters<typeof scenario>[0],
): Promise<{ s: Scenario; backupDir: string; stateBefore: string }> {
  const made = await backedUp();
  const s = await scenario(t, modules.base, SECOND_INPUTS);
  await cp(made.stateDir, dirname(s.state), { recursive: true });
  const backupDir = join(s.out, 'backups', basename(made.backupDir));
  await cp(made.backupDir, backupDir, { recursive: true });
  return { s, backupDir, stateBefore: await readFile(s.state, 'utf8') };
}

describe('restore against a forged backup store', () => {
  it('a chunk swapped for a 1.5 GiB file is refused (ArtifactCorrupt) without being read into memory; the state is untouched', async (t) => {
    const { s, backupDir, stateBefore } = await withBackup(t);
    await truncate(join(backupDir, 'chunk-00000'), 1.5 * 1024 * 1024 * 1024); // sparse: no disk used
    const run = await measuredRun(s, ['restore', '--backup', backupDir]);
    assert.ok(
      run.peakRssMiB > 0 && run.peakRssMiB < 400,
      `peak RSS ${run.peakRssMiB.toFixed(0)} MiB: the chunk was read whole`,
    );
    assert.equal(run.exitCode, 1, run.stderr);
    assert.equal(run.result!.reason, 'ArtifactCorrupt');
    assert.match(run.result!.message, /chunk 0 of more than the \d+ bytes the manifest lists/);
    assert.equal(await readFile(s.state, 'utf8'), stateBefore);
  });

  it('a manifest declaring a 512 MiB state is refused (ArtifactTooLarge) before a chunk is read: nothing is written, and a raised --max-artifact-bytes lets the reader go on', async (t) => {
    const { s, stateBefore } = await withBackup(t);
    const STATE_BYTES = 512 * 1024 * 1024;
    // The manifest and the tar entry's header declare 512 MiB; the payload stops after 64 MiB of the
    // entry's zeros (a declared size needs no real bytes behind it): a reader that ignored the
    // declaration would write those 64 MiB before failing, far above the 16 MiB allowed below.
    const pack = tar.pack();
    pack.entry({ name: 'terraform.tfstate', size: STATE_BYTES, mode: 0o600, mtime: new Date(0) });
    let header: Buffer = Buffer.alloc(0);
    for await (const part of pack) {
      header = part as Buffer;
      break;
    }
    assert.equal(header.length, 512, 'the entry header is one tar block');
    const store = new DirStore(join(s.out, 'forged'));
    // The entry never ends, so its sha256 is never compared: any will do.
    await storeCraftedBackup(store, 'backup-huge', {
      tar: Buffer.concat([header, Buffer.alloc(64 * 1024 * 1024)]),
      chunkBytes: 700_000,
      files: [{ name: 'terraform.tfstate', bytes: STATE_BYTES, sha256: '0'.repeat(64) }],
    });

    const refused = await measuredRun(s, ['restore', '--backup', join(store.location, 'backup-huge')]);
    assert.equal(refused.exitCode, 1, refused.stderr);
    assert.equal(refused.result!.reason, 'ArtifactTooLarge');
    assert.match(
      refused.result!.message,
      /declares files of 536870912 bytes, more than the 134217728 an artifact may hold.*--max-artifact-bytes/,
    );
    assert.ok(refused.writtenMiB < 16, `the runner wrote ${refused.writtenMiB.toFixed(0)} MiB before refusing`);
    assert.equal(await readFile(s.state, 'utf8'), stateBefore);
    assert.deepEqual((await readdir(store.location)).sort(), ['backup-huge'], 'the store is as it was');

    // Allowed, the same backup is read: its chunks pass, and its tar ends inside the entry.
    const allowed = await measuredRun(s, [
      'restore',
      '--backup',
      join(store.location, 'backup-huge'),
      '--max-artifact-bytes',
      String(1024 * 1024 * 1024),
    ]);
    assert.equal(allowed.exitCode, 1, allowed.stderr);
    assert.notEqual(allowed.result!.reason, 'ArtifactTooLarge');
    assert.equal(allowed.result!.reason, 'ArtifactCorrupt', allowed.result!.message);
    assert.match(allowed.result!.message, /is not a valid gzipped tar/, 'the reader went on to the tar');
    assert.equal(await readFile(s.state, 'utf8'), stateBefore);
  });
});

describe('special files in the store', () => {
  // Whoever can write the store dir could plant these: a FIFO would make the read wait for a writer forever.
  it('a chunk swapped for a FIFO, a manifest swapped for a link: restore refuses at once (StoreReadFailed), the state untouched', async (t) => {
    const { s, backupDir, stateBefore } = await withBackup(t);
    await rm(join(backupDir, 'chunk-00000'));
    await runChecked('mkfifo', [join(backupDir, 'chunk-00000')]);
    const fifo = await measuredRun(s, ['restore', '--backup', backupDir]);
    assert.equal(fifo.exitCode, 1, fifo.stderr);
    assert.equal(fifo.result!.reason, 'StoreReadFailed');
    assert.match(
      fifo.result!.message,
      /chunk-00000 is a special file \(a device, FIFO or socket\), not a regular file/,
    );
    assert.equal(await readFile(s.state, 'utf8'), stateBefore);

    const manifest = join(backupDir, 'manifest.json');
    await rename(manifest, `${manifest}.real`);
    await symlink(`${manifest}.real`, manifest);
    const link = await measuredRun(s, ['restore', '--backup', backupDir]);
    assert.equal(link.exitCode, 1, link.stderr);
    assert.match(link.result!.message, /manifest\.json is a symbolic link, not a regular file/);
    assert.equal(await readFile(s.state, 'utf8'), stateBefore);
  });

  it("a FIFO as the blocked run's record: the approved apply never waits on it, names the record unreadable, and covers nothing destructive unless --expect-lineage names the state", async (t) => {
    const { s } = await withBackup(t);
    await s.useModule(modules.deleteByRemoval);
    const blocked = await s.run('apply');
    assert.equal(blocked.result!.reason, 'DestructivePlanBlocked', explain(blocked));
    const lineage = blocked.result!.state?.lineage;
    assert.ok(lineage, 'the blocked run names the state it planned against');
    const record = join(s.out, 'backups', `blocked-${blocked.result!.approvalHash}.json`);
    const plantFifo = async () => {
      await rm(record, { force: true });
      await runChecked('mkfifo', [record]);
      await rm(join(s.out, 'result.json'), { force: true }); // as after another run: the record is where the blocked run is found
    };
    const stateBefore = await readFile(s.state, 'utf8');
    await plantFifo();
    // Nothing records which state the approval was for: it fails closed, blocked again, nothing applied.
    const unnamed = await measuredRun(s, ['apply', '--approved-hash', blocked.result!.approvalHash!]);
    assert.equal(unnamed.exitCode, 3, unnamed.stderr);
    assert.ok(
      unnamed.result!.message.includes(`${record} (unreadable: ${record} is a special file`),
      unnamed.result!.message,
    );
    assert.equal(await readFile(s.state, 'utf8'), stateBefore, 'nothing applied');
    // With --expect-lineage the state was checked before the plan: the approval goes on, the record named unreadable.
    await plantFifo();
    const approved = await measuredRun(s, [
      'apply',
      '--approved-hash',
      blocked.result!.approvalHash!,
      '--expect-lineage',
      lineage,
    ]);
    assert.equal(approved.exitCode, 0, approved.stderr);
    assert.ok(
      approved.result!.warnings.some((w) => w.includes(`${record} (unreadable: ${record} is a special file`)),
      approved.result!.warnings.join('\n'),
    );
  });
});

describe('a state above --max-artifact-bytes', () => {
  it('cannot be backed up: the apply fails at backup (ArtifactTooLarge), nothing applied', async (t) => {
    const module = {
      'main.tf':
        'variable "blob" {\n  type = string\n}\nvariable "size" {\n  type = string\n}\nresource "terraform_data" "big" {\n  input = var.blob\n}\nresource "terraform_data" "small" {\n  input = var.size\n}\n',
    };
    // The smallest bound (1 MiB) and a state just above it: the blob twice (input and output) is 1.2 MB.
    const s = await scenario(t, module, { 'terraform.tfvars.json': { blob: 'x'.repeat(600_000), size: 'one' } });
    const first = await s.run('apply');
    assert.equal(first.exitCode, 0, explain(first));
    const stateBefore = await readFile(s.state, 'utf8');
    assert.ok(stateBefore.length > 1_048_576, 'the state holds the blob twice (input and output): more than the bound');
    await s.setInputs({ 'terraform.tfvars.json': { blob: 'x'.repeat(600_000), size: 'two' } });
    const run = await s.run('apply', ['--max-artifact-bytes', String(1_048_576)]);
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.reason, 'ArtifactTooLarge');
    assert.equal(run.result!.error!.step, 'backup');
    assert.ok(!run.result!.steps.some((step) => step.name === 'apply'), 'terraform apply never started');
    assert.equal(await readFile(s.state, 'utf8'), stateBefore, 'nothing applied');
  });
});

describe("retention keeps every state's backups", () => {
  it("two states sharing one --backups dir: applies of A never delete B's backups, and each keeps its newest --keep-backups", async (t) => {
    // B's backup: the one the file's setup wrote (B's state backed up by an apply), put in the shared dir.
    const made = await backedUp();
    const { s: a } = await withBackup(t);
    const shared = join(a.dir, 'shared-backups');
    await cp(made.backupDir, join(shared, basename(made.backupDir)), { recursive: true });
    // A: a copy of the applied state given a lineage of its own (as a state started afresh would have).
    const state = JSON.parse(await readFile(a.state, 'utf8')) as { lineage: string };
    const bLineage = state.lineage;
    const aLineage = randomUUID();
    await writeFile(a.state, JSON.stringify({ ...state, lineage: aLineage }, null, 2));
    // Two backups of A (a-1 and a-2 each back up the state before them): retention must drop the first.
    const apply = async (token: string) => {
      await a.setInputs({ 'terraform.tfvars.json': { admin_token: token } });
      const run = await a.run('apply', ['--backups', shared, '--keep-backups', '1']);
      assert.equal(run.exitCode, 0, explain(run));
      return run.result!.backup!.object;
    };
    const firstOfA = await apply('a-1');
    const newestOfA = await apply('a-2');
    assert.ok(
      firstOfA.startsWith(`backup-${aLineage}-`) && newestOfA.startsWith(`backup-${aLineage}-`),
      `${firstOfA}, ${newestOfA}`,
    );

    const objects = (await readdir(shared)).sort();
    assert.deepEqual(
      objects.filter((name) => name.startsWith(`backup-${bLineage}-`)),
      [basename(made.backupDir)],
      "B's only backup is still there",
    );
    assert.deepEqual(
      objects.filter((name) => name.startsWith(`backup-${aLineage}-`)),
      [newestOfA],
      'A keeps its newest one',
    );
    assert.equal(objects.length, 2, objects.join(', '));
  });
});
