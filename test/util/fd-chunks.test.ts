// fdChunks reads a descriptor to its end into one buffer: the bytes arrive whole and in order, every
// chunk a view of that one buffer (no Buffer made a chunk, which Node 24 lets pile up outside its heap:
// bench/HISTORY.md, issue 44), and a descriptor left non-blocking is waited for, not failed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { constants, openSync, closeSync, writeSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runChecked } from '../support/exec.ts';
import { fdChunks } from '../../src/util/fd-chunks.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('fdChunks', () => {
  it('reads a pipe on stdin whole, written in pieces, every chunk a view of one buffer', async () => {
    const sent = randomBytes(5 * 2 ** 20 + 123);
    // A process of its own, its stdin a real pipe (as `classify -` reads terraform's show -json).
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { createHash } from 'node:crypto';
         import { fdChunks } from ${JSON.stringify(new URL('../../src/util/fd-chunks.ts', import.meta.url).href)};
         const hash = createHash('sha256'); const buffers = new Set(); let bytes = 0, chunks = 0;
         for await (const chunk of fdChunks(0)) { hash.update(chunk); buffers.add(chunk.buffer); bytes += chunk.length; chunks++; }
         console.log(JSON.stringify({ sha256: hash.digest('hex'), bytes, chunks, buffers: buffers.size }));`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    for (let at = 0; at < sent.length; at += 700_000) {
      if (!child.stdin.write(sent.subarray(at, at + 700_000)))
        await new Promise((resolve) => child.stdin.once('drain', resolve));
      await sleep(5);
    }
    child.stdin.end();
    assert.equal(await exited, 0);
    const got = JSON.parse(out) as { sha256: string; bytes: number; chunks: number; buffers: number };
    assert.equal(got.bytes, sent.length);
    assert.equal(got.sha256, sha256(sent));
    assert.ok(got.chunks >= sent.length / 2 ** 16, `${got.chunks} chunks of 64 KiB at most`);
    assert.equal(got.buffers, 1, 'every chunk a view of one buffer');
  });

  it('waits for a descriptor someone left non-blocking (EAGAIN) instead of failing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'captf-fd-chunks-'));
    const fifo = join(dir, 'fifo');
    await runChecked('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY);
    try {
      const read: Buffer[] = [];
      const reading = (async () => {
        for await (const chunk of fdChunks(reader, 4)) read.push(Buffer.from(chunk));
      })();
      // Nothing to read yet: read(2) says EAGAIN, and again after each piece until the writer closes.
      await sleep(50);
      writeSync(writer, 'first ');
      await sleep(50);
      writeSync(writer, 'second');
      closeSync(writer);
      await reading;
      assert.equal(Buffer.concat(read).toString(), 'first second');
    } finally {
      closeSync(reader);
    }
  });
});
