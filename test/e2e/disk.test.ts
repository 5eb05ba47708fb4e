// Disk problems: an out dir or workdir that cannot be written, a disk that fills while the result is
// written. The run must end with a clear error and the documented exit code, and the termination
// message (the controller's other way to learn the outcome) must still be written when it can be.
// Tests run as root, so file modes stop nothing: unwritable places are paths that cannot exist
// (under a regular file, under /proc) and, where mount works, a read-only or tiny full tmpfs.
import { after, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { runProcess, runChecked } from '../support/exec.ts';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Result } from '../../src/schemas/result.ts';
import { testTerraformEnv } from '../support/tf-modules.ts';
import { argsFor, explain, RUNNER, runRunner, scenario, type RunnerRun } from '../support/runner.ts';

const MODULE = { 'main.tf': 'resource "terraform_data" "x" {\n  input = "disk"\n}\n' };

/** Mount points this file made: unmounted when it ends, whatever happened. */
const mounts: string[] = [];
after(async () => {
  for (const dir of mounts.reverse()) await runProcess('umount', ['-l', dir]);
});

/** A tmpfs at a fresh dir, or undefined where mounting is not allowed (then the test says so and skips). */
async function tmpfs(t: TestContext, options: string): Promise<string | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'captf-disk-'));
  // One hook, in this order: unmount, then remove the mount point.
  t.after(async () => {
    await runProcess('umount', ['-l', dir]);
    await rm(dir, { recursive: true, force: true });
  });
  const mounted = await runProcess('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
  if (mounted.exitCode !== 0) return undefined;
  mounts.push(dir);
  return dir;
}

function termination(path: string) {
  const text = readFileSync(path, 'utf8');
  assert.ok(Buffer.byteLength(text) <= 4096);
  return JSON.parse(text) as { outcome: string; reason: string; exitCode: number };
}

function assertResultNotWritten(run: RunnerRun) {
  assert.equal(run.exitCode, 1, `a run that cannot write its result fails (exit 1)\n${explain(run)}`);
  assert.match(run.stderr, /could not write .*result\.json.*writable --out/, 'the error says what and how to fix it');
  assert.match(run.stderr, /"reason":"ResultNotWritten"/);
}

/** A place the run must write found unusable before anything ran: usage, exit 2, the termination message says so. */
function assertFoundInPreflight(
  run: Pick<RunnerRun, 'exitCode' | 'stderr'>,
  terminationLog: string,
  reason: string,
  message: RegExp,
) {
  assert.equal(run.exitCode, 2, `found in preflight: exit 2\n${run.stderr.slice(-3000)}`);
  assert.match(run.stderr, message);
  const compact = termination(terminationLog);
  assert.equal(compact.outcome, 'invalid');
  assert.equal(compact.reason, reason);
  assert.doesNotMatch(run.stderr, /"step":"init"/, 'nothing ran after preflight');
}

describe('disk problems', { concurrency: 2 }, () => {
  it('--out under a regular file (cannot be created): found in preflight, exit 2, nothing run, the termination message written', async (t) => {
    const s = await scenario(t, MODULE);
    const blocker = join(s.dir, 'a-file');
    await writeFile(blocker, 'not a dir');
    const run = await s.run('apply', ['--out', join(blocker, 'out')]);
    assertFoundInPreflight(
      run,
      s.termination,
      'OutDirUnusable',
      /--out .*a-file\/out .*cannot be created or written \(ENOTDIR\).*writable --out/,
    );
    assert.ok(!existsSync(s.state), 'nothing was applied');
  });

  it('<out>/result.json a directory, or a FIFO: found in preflight, exit 2, nothing applied', async (t) => {
    const s = await scenario(t, MODULE);
    // Not s.run: it removes a result.json left by an earlier run.
    const apply = () => runRunner(s.runArgs('apply'));
    await mkdir(join(s.out, 'result.json'), { recursive: true });
    assertFoundInPreflight(
      await apply(),
      s.termination,
      'OutDirUnusable',
      /result\.json is a directory: the result could not be written there\. Nothing was run/,
    );
    assert.ok(!existsSync(s.state), 'nothing was applied');
    await rm(join(s.out, 'result.json'), { recursive: true });
    await runChecked('mkfifo', [join(s.out, 'result.json')]);
    assertFoundInPreflight(await apply(), s.termination, 'OutDirUnusable', /result\.json is not a regular file/);
    assert.ok(!existsSync(s.state), 'nothing was applied');
  });

  it('--out under /proc: ends (no hang), exit 2, nothing run', async (t) => {
    const s = await scenario(t, MODULE);
    // Node 20's mkdir({recursive:true}) loops forever under /proc (mkdir there answers ENOENT for
    // every level): the runner must not hang on an out dir it cannot create.
    const run = await runProcess(
      process.execPath,
      [
        RUNNER,
        ...argsFor(
          { ...s, out: '/proc/captf-runner-no-such-dir/out' },
          'apply',
          ['--state', s.state, '--new-state'],
          [],
        ),
      ],
      { env: testTerraformEnv(), timeoutMs: 60_000 },
    );
    assert.equal(run.timedOut, false, 'the runner hangs creating its out dir');
    assertFoundInPreflight(
      { exitCode: run.exitCode ?? -1, stderr: run.stderr },
      s.termination,
      'OutDirUnusable',
      /--out \/proc\/captf-runner-no-such-dir\/out/,
    );
    assert.ok(!existsSync(s.state), 'nothing was applied');
  });

  it('--out that exists but cannot be written (/proc/self): the dir itself is probed, exit 2, nothing run', async (t) => {
    const s = await scenario(t, MODULE);
    const run = await s.run('apply', ['--out', '/proc/self']);
    assertFoundInPreflight(run, s.termination, 'OutDirUnusable', /--out \/proc\/self/);
    assert.ok(!existsSync(s.state), 'nothing was applied');
  });

  it('--out on a read-only filesystem (where mount is allowed): exit 2, nothing run', async (t) => {
    const ro = await tmpfs(t, 'ro,size=1m');
    if (!ro) return t.skip('mount is not permitted here');
    const s = await scenario(t, MODULE);
    const run = await s.run('apply', ['--out', ro]);
    assertFoundInPreflight(run, s.termination, 'OutDirUnusable', /EROFS/);
    assert.ok(!existsSync(s.state), 'nothing was applied');
  });

  it('--backups given explicitly under a regular file: found in preflight, exit 2, nothing run', async (t) => {
    const s = await scenario(t, MODULE);
    const blocker = join(s.dir, 'a-file');
    await writeFile(blocker, 'not a dir');
    const run = await s.run('apply', ['--backups', join(blocker, 'backups')]);
    assertFoundInPreflight(
      run,
      s.termination,
      'BackupsDirUnusable',
      /--backups .*a-file\/backups .*cannot be created or written/,
    );
    assert.equal(run.result!.error!.step, 'preflight');
    assert.deepEqual(
      run.result!.steps.map((step) => step.name),
      ['preflight'],
    );
    assert.ok(
      !existsSync(s.state),
      'nothing was applied (the first apply has no state to back up, so the old runner applied)',
    );
  });

  it('a full disk while the result is written: ENOSPC is a clear error, no partial result.json is left', async (t) => {
    const full = await tmpfs(t, 'size=64k');
    if (!full) return t.skip('mount is not permitted here');
    // Fill it to the last block.
    await runProcess('dd', ['if=/dev/zero', `of=${join(full, 'filler')}`, 'bs=4k']);
    const s = await scenario(t, MODULE);
    const run = await s.run('apply', ['--out', full]);
    assertResultNotWritten(run);
    assert.match(run.stderr, /ENOSPC|no space/i);
    assert.doesNotMatch(run.stdout, /the run did its job$/m, 'exit 1 is never "nothing to do"');
    assert.match(
      run.stdout,
      /^next: the run did its job, but result\.json could not be written \(the warning above says why\).*writable --out/m,
    );
    // <out>/backups is the backup store's dir, made when the apply's marker was written there (faults §4).
    assert.deepEqual(
      (await readdir(full)).filter((n) => n !== 'filler' && n !== 'backups'),
      [],
      'neither result.json nor its temp file is left half-written',
    );
    termination(s.termination);
  });

  it('a settings error with an unwritable --out still exits 2 (usage), the termination message written', async (t) => {
    const s = await scenario(t, MODULE);
    const blocker = join(s.dir, 'a-file');
    await writeFile(blocker, 'not a dir');
    const run = await s.run('apply', ['--kind', 'not-a-kind', '--out', join(blocker, 'out')]);
    assert.equal(run.exitCode, 2, explain(run));
    assert.equal(termination(s.termination).outcome, 'invalid');
  });

  it('--workdir that cannot be created: failed, exit 1, a clear io error naming the workdir (not an internal error)', async (t) => {
    const s = await scenario(t, MODULE);
    const blocker = join(s.dir, 'a-file');
    await writeFile(blocker, 'not a dir');
    const workdir = join(blocker, 'work');
    const run = await s.run('apply', ['--workdir', workdir]);
    assert.equal(run.exitCode, 1, explain(run));
    const r = Result.parse(run.result);
    assert.equal(r.outcome, 'failed');
    assert.equal(r.error?.step, 'workspace');
    assert.equal(
      r.error?.kind,
      'io',
      `a workdir the runner cannot create is an io problem the operator fixes, not a runner bug: ${JSON.stringify(r.error)}`,
    );
    assert.ok(r.message.includes(workdir), r.message);
    assert.equal(termination(s.termination).outcome, 'failed');
    assert.ok(!existsSync(s.state), 'nothing ran against the state');
  });

  it('--workdir on a read-only filesystem (where mount is allowed)', async (t) => {
    const ro = await tmpfs(t, 'ro,size=1m');
    if (!ro) return t.skip('mount is not permitted here');
    const s = await scenario(t, MODULE);
    const run = await s.run('apply', ['--workdir', join(ro, 'work')]);
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.error?.step, 'workspace');
    assert.equal(run.result!.error?.kind, 'io', JSON.stringify(run.result!.error));
  });

  it('a --workdir whose private dir is a symbolic link (to a dir someone else can read) is refused before anything runs', async (t) => {
    const s = await scenario(t, MODULE);
    const workdir = join(s.dir, 'work');
    const elsewhere = join(s.dir, 'world-readable');
    await mkdir(workdir, { mode: 0o700 });
    await mkdir(elsewhere, { mode: 0o777 });
    await symlink(elsewhere, join(workdir, 'private'));
    const run = await s.run('apply', ['--workdir', workdir]);
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.reason, 'WorkdirUnusable');
    assert.equal(run.result!.error?.step, 'workspace');
    assert.match(run.result!.message, /private is a symbolic link or not a directory/);
    assert.deepEqual(await readdir(elsewhere), [], 'no plan file or var file was written through the link');
    assert.ok(!existsSync(s.state), 'nothing ran against the state');
  });

  // Two things a successful apply must do, independent of each other: one run proves both.
  it('a termination log that cannot be written (/dev/full) does not fail the run (result.json is the record); a given --workdir is made 0700 and its private dir is removed at the end', async (t) => {
    const s = await scenario(t, MODULE);
    const workdir = join(s.dir, 'work');
    await mkdir(workdir, { mode: 0o755 });
    const run = await s.run('apply', ['--termination-log', '/dev/full', '--workdir', workdir]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(Result.parse(run.result).outcome, 'succeeded');
    assert.equal(statSync(workdir).mode & 0o777, 0o700);
    assert.ok(!existsSync(join(workdir, 'private')), 'plan files and state copies do not outlive the run');
  });
});
