import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { runProcess, startInBackground } from './exec.ts';
import { processEnds } from './tf-modules.ts';

const node = (script: string, options: Parameters<typeof runProcess>[2] = {}) =>
  runProcess(process.execPath, ['-e', script], options);

describe('runProcess', () => {
  it('gives back what the process printed (one final newline off, as execa gives it), its exit code, and no signal', async () => {
    const run = await node('process.stdout.write("out\\n\\n"); process.stderr.write("err é\\n"); process.exitCode = 3');
    assert.deepEqual(run, { exitCode: 3, signal: undefined, stdout: 'out\n', stderr: 'err é', timedOut: false });
  });

  it('passes exactly the environment given, the cwd, and the input on stdin; without input stdin is empty', async () => {
    const run = await node(
      'let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => console.log(JSON.stringify([Object.keys(process.env).sort(), process.cwd(), s])))',
      { env: { ONLY: '1' }, cwd: '/', input: 'in' },
    );
    assert.deepEqual(JSON.parse(run.stdout), [['ONLY'], '/', 'in']);
    const empty = await node(
      'let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => console.log(JSON.stringify(s)))',
    );
    assert.equal(empty.stdout, '""');
  });

  it('stops a process that outlives its timeout: SIGTERM, and SIGKILL when it ignores that', async () => {
    const polite = await node('setInterval(() => {}, 1000)', { timeoutMs: 200 });
    assert.deepEqual([polite.exitCode, polite.signal, polite.timedOut], [undefined, 'SIGTERM', true]);
    // The shell ignores SIGTERM from its first instruction (a node would first have to start), and sleep inherits that.
    const stubborn = await runProcess('/bin/sh', ['-c', 'trap "" TERM; exec sleep 30'], { timeoutMs: 200 });
    assert.deepEqual([stubborn.exitCode, stubborn.signal, stubborn.timedOut], [undefined, 'SIGKILL', true]);
  });

  it('rejects when the file cannot be started', async () => {
    await assert.rejects(runProcess('/nonexistent/captf-test-binary', []), /ENOENT/);
  });
});

describe('startInBackground', () => {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

  it('resolves once the process printed the mark (on stdout or stderr), in a process group of its own; exited gives what it printed', async () => {
    const run = await startInBackground('/bin/sh', ['-c', 'echo before; echo MARK >&2; exec sleep 30'], {
      env,
      mark: 'MARK',
      killAfterMs: 30_000,
    });
    const stat = readFileSync(`/proc/${run.child.pid}/stat`, 'utf8');
    const processGroup = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    assert.equal(processGroup, run.child.pid, 'it leads its own group');
    const early = await Promise.race([
      run.exited.then(() => 'exited'),
      new Promise((r) => setTimeout(() => r('running'), 200)),
    ]);
    assert.equal(early, 'running', 'it was still running when the mark came');
    run.child.kill('SIGTERM');
    const end = await run.exited;
    assert.equal(end.stdout, 'before\n');
    assert.equal(end.stderr, 'MARK\n');
  });

  it('rejects when the process exits before the mark, naming it and what it printed', async () => {
    await assert.rejects(
      startInBackground('/bin/sh', ['-c', 'echo oops >&2'], { env, mark: 'MARK', killAfterMs: 30_000 }),
      /exited before it printed MARK: oops/,
    );
  });

  it('kills the whole group after killAfterMs', async () => {
    const run = await startInBackground('/bin/sh', ['-c', 'trap "" TERM; sleep 30 & echo "MARK $!"; wait'], {
      env,
      mark: 'MARK',
      killAfterMs: 300,
    });
    const end = await run.exited;
    assert.equal(end.exitCode, null, 'ended by a signal');
    assert.equal(run.child.signalCode, 'SIGKILL');
    const sleeper = Number(/MARK (\d+)/.exec(end.stdout)![1]);
    assert.ok(await processEnds(sleeper), `the group's other process (${sleeper}) was killed too`);
  });
});
