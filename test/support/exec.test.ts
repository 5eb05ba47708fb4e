import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runProcess } from './exec.ts';

const node = (script: string, options: Parameters<typeof runProcess>[2] = {}) => runProcess(process.execPath, ['-e', script], options);

describe('runProcess', () => {
  it('gives back what the process printed (one final newline off, as execa gives it), its exit code, and no signal', async () => {
    const run = await node('process.stdout.write("out\\n\\n"); process.stderr.write("err é\\n"); process.exitCode = 3');
    assert.deepEqual(run, { exitCode: 3, signal: undefined, stdout: 'out\n', stderr: 'err é', timedOut: false });
  });

  it('passes exactly the environment given, the cwd, and the input on stdin; without input stdin is empty', async () => {
    const run = await node('let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => console.log(JSON.stringify([Object.keys(process.env).sort(), process.cwd(), s])))', { env: { ONLY: '1' }, cwd: '/', input: 'in' });
    assert.deepEqual(JSON.parse(run.stdout), [['ONLY'], '/', 'in']);
    const empty = await node('let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => console.log(JSON.stringify(s)))');
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
