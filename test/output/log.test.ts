// The runner's own log writer against a log reader that stops reading (a stalled kubelet or collector).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeSync } from 'node:fs';
import { maskingWriter } from '../../src/output/log.ts';
import { Masker } from '../../src/output/mask.ts';

describe('output: the log writer', () => {
  it('a reader that does not read holds a log line up for about a second, then the line is dropped', async (t) => {
    // `sleep` never reads its stdin: a pipe nobody drains, non-blocking on this side as stderr is.
    const sleeper = spawn('sleep', ['60'], { stdio: ['pipe', 'ignore', 'ignore'] });
    t.after(() => sleeper.kill('SIGKILL'));
    const fd = (sleeper.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    const filler = Buffer.alloc(64 * 1024, 'x');
    for (let full = false; !full; ) {
      try {
        writeSync(fd, filler);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        full = true;
      }
    }
    const writer = maskingWriter(fd, new Masker());
    const started = Date.now();
    await new Promise<void>((resolve, reject) => writer.write('{"msg":"stopping terraform"}\n', (error) => (error ? reject(error) : resolve())));
    const took = Date.now() - started;
    // Signals and the deadline wait while a log line waits: never as long as the reader stalls.
    assert.ok(took >= 900 && took < 10_000, `the line held the runner up for ${took} ms`);
  });
});
