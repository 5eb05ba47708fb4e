// The --summary-md FILE: a regular file of its own, opened without following a link or blocking,
// never one of the run's files or inside one of its directories; appended to at the end.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { link, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunnerError } from '../../src/errors.ts';
import { openSummaryMd, type RunPlaces } from '../../src/output/summary-md-file.ts';

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'captf-summary-md-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const NONE: RunPlaces = { files: [], dirs: [] };

async function refusal(path: string, places: RunPlaces = NONE): Promise<string> {
  const error = await openSummaryMd(path, places).then(
    () => assert.fail(`${path} was accepted`),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof RunnerError, String(error));
  assert.equal(error.kind, 'usage');
  assert.equal(error.reason, 'SummaryMdUnusable');
  return error.message;
}

describe('summary-md: the file', () => {
  it('appends, as GitHub expects of $GITHUB_STEP_SUMMARY, and makes a file that is not there yet', async (t) => {
    const dir = await tempDir(t);
    const existing = join(dir, 'existing.md');
    await writeFile(existing, 'one\n');
    assert.equal(await (await openSummaryMd(existing, NONE)).append('two\n'), undefined);
    assert.equal(await readFile(existing, 'utf8'), 'one\ntwo\n');
    const fresh = join(dir, 'fresh.md');
    assert.equal(await (await openSummaryMd(fresh, NONE)).append('first\n'), undefined);
    assert.equal(await readFile(fresh, 'utf8'), 'first\n');
  });

  it('refuses a link (to the state, too), a directory, a device, a hard link and a missing directory, naming what it found', async (t) => {
    const dir = await tempDir(t);
    const state = join(dir, 'terraform.tfstate');
    await writeFile(state, '{"version":4}');
    await symlink(state, join(dir, 'to-state.md'));
    assert.match(
      await refusal(join(dir, 'to-state.md')),
      /is a symbolic link: nothing was run\. Give --summary-md a regular file of its own/,
    );
    assert.match(await refusal(dir), /cannot be opened \(EISDIR\)/);
    assert.match(await refusal('/dev/null'), /is not a regular file/);
    await link(state, join(dir, 'hard.md'));
    assert.match(await refusal(join(dir, 'hard.md')), /has 2 names \(hard links\)/);
    assert.match(
      await refusal(join(dir, 'no-such-dir', 'summary.md')),
      /is in a directory that cannot be used \(ENOENT\)/,
    );
    assert.equal(await readFile(state, 'utf8'), '{"version":4}', 'nothing was written through a link');
  });

  it('refuses a FIFO at once, with or without a reader: opening it never waits', async (t) => {
    const dir = await tempDir(t);
    const fifo = join(dir, 'fifo.md');
    await new Promise<void>((resolve, reject) =>
      spawn('mkfifo', [fifo]).once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`mkfifo exited ${code}`)),
      ),
    );
    assert.match(await refusal(fifo), /is a FIFO or socket/);
    const cat = spawn('sh', ['-c', `exec cat "$0" > /dev/null`, fifo], { stdio: 'ignore' });
    t.after(() => cat.kill('SIGKILL'));
    await new Promise((resolve) => setTimeout(resolve, 200)); // cat has the FIFO open for reading
    assert.match(await refusal(fifo), /is a FIFO/);
  });

  it("refuses the run's own files, by any name, and anything inside its directories; nothing is created there", async (t) => {
    const dir = await tempDir(t);
    const state = join(dir, 'state', 'terraform.tfstate');
    const out = join(dir, 'out');
    await mkdir(join(dir, 'state'));
    await mkdir(join(out, 'nested'), { recursive: true });
    await writeFile(state, '{"version":4}');
    await symlink(join(dir, 'state'), join(dir, 'state-link'));
    const places: RunPlaces = {
      files: [
        { flag: '--state', path: state },
        { flag: '--termination-log', path: join(dir, 'termination-log') },
      ],
      dirs: [{ flag: '--out', path: out }],
    };
    assert.match(await refusal(state, places), new RegExp(`is the file of --state ${state}`));
    assert.match(await refusal(join(dir, 'state-link', 'terraform.tfstate'), places), /is the file of --state/);
    assert.match(await refusal(join(dir, 'termination-log'), places), /is the file of --termination-log/);
    assert.match(
      await refusal(join(out, 'result.json'), places),
      new RegExp(`is inside the directory of --out ${out}`),
    );
    assert.match(await refusal(join(out, 'nested', 'summary.md'), places), /is inside the directory of --out/);
    await assert.rejects(readFile(join(dir, 'termination-log')), { code: 'ENOENT' });
    await assert.rejects(readFile(join(out, 'result.json')), { code: 'ENOENT' });
    assert.equal(await readFile(state, 'utf8'), '{"version":4}');
    await (await openSummaryMd(join(dir, 'summary.md'), places)).append('ok\n');
  });
});
