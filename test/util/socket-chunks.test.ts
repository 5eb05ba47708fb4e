// openOutputChannels: a child's output read into one buffer a channel. The bytes arrive whole and in
// order, every chunk a view of that one buffer (no Buffer made a read, which Node 24 lets pile up outside
// its heap: bench/HISTORY.md, issue 44); nothing more is read until the next chunk is asked for (the child
// waits); a child writing a line at a time is gathered into few reads, and what it left at its exit is read
// at once; a consumer that stops early leaves the rest for chunks() again; the directory of the listening
// socket is gone before the child starts, and one that cannot be made fails as it is.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openOutputChannels, type OutputChannel } from '../../src/util/socket-chunks.ts';
import { tempDir } from '../support/tf-modules.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A node child that writes `file` to its stdout in pieces of 700,000 bytes, logging when each write returned to `log`. */
function writer(channel: OutputChannel, file: string, log?: string) {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const fs = require('node:fs'); const bytes = fs.readFileSync(${JSON.stringify(file)});
       for (let at = 0; at < bytes.length; at += 700000) {
         let piece = bytes.subarray(at, at + 700000);
         while (piece.length) { try { piece = piece.subarray(fs.writeSync(1, piece)); } catch (e) { if (e.code !== 'EAGAIN') throw e; } }
         ${log ? `fs.appendFileSync(${JSON.stringify(log)}, Date.now() + '\\n');` : ''}
       }`,
    ],
    { stdio: ['ignore', channel.childEnd, 'inherit'] },
  );
  const exited = new Promise<number | null>((resolve, reject) => child.on('error', reject).on('close', resolve));
  return exited.finally(() => channel.closeChildEnd());
}

/** Runs `body` with TMPDIR set to a new empty directory, restored after. */
async function inTmpdir<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await tempDir(undefined, 'captf-socket-chunks-');
  const before = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  try {
    return await body(dir);
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    await rm(dir, { recursive: true, force: true });
  }
}

describe('openOutputChannels', () => {
  it("reads a child's output whole and in order, every chunk a view of one buffer; the socket's directory is gone before the child starts", async () => {
    const dir = await tempDir(undefined, 'captf-socket-chunks-data-');
    const sent = randomBytes(5 * 2 ** 20 + 123);
    await writeFile(join(dir, 'sent'), sent);
    const [channel] = await inTmpdir(async (tmp) => {
      const channels = await openOutputChannels(1);
      assert.deepEqual(await readdir(tmp), [], 'the listening socket and its directory are removed');
      return channels;
    });
    const exited = writer(channel!, join(dir, 'sent'));
    const hash = createHash('sha256');
    const buffers = new Set<ArrayBufferLike>();
    let bytes = 0;
    let chunks = 0;
    for await (const chunk of channel!.chunks()) {
      hash.update(chunk);
      buffers.add(chunk.buffer);
      bytes += chunk.length;
      chunks++;
    }
    assert.equal(await exited, 0);
    assert.equal(bytes, sent.length);
    assert.equal(hash.digest('hex'), sha256(sent));
    assert.ok(chunks >= sent.length / 2 ** 16, `${chunks} chunks of 64 KiB at most`);
    assert.equal(buffers.size, 1, 'every chunk a view of one buffer');
    await rm(dir, { recursive: true, force: true });
  });

  it('reads nothing more until the next chunk is asked for (the child waits), and a consumer that stops early leaves the rest', async () => {
    const dir = await tempDir(undefined, 'captf-socket-chunks-data-');
    const sent = randomBytes(8 * 2 ** 20);
    await writeFile(join(dir, 'sent'), sent);
    const log = join(dir, 'writes');
    await writeFile(log, '');
    const [channel] = await openOutputChannels(1);
    const exited = writer(channel!, join(dir, 'sent'), log);
    const first: Buffer[] = [];
    for await (const chunk of channel!.chunks()) {
      first.push(Buffer.from(chunk));
      break;
    }
    // Stalled: the child fills the socket's buffer and waits; its writes do not all return.
    const stalledAt = Date.now();
    await sleep(1000);
    const written = readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
    assert.ok(written < sent.length / 700_000 - 1, `the child wrote ${written} of its pieces while nothing was read`);
    const rest: Buffer[] = [];
    for await (const chunk of channel!.chunks()) rest.push(Buffer.from(chunk));
    assert.equal(await exited, 0);
    assert.ok(Date.now() - stalledAt >= 1000);
    assert.equal(sha256(Buffer.concat([...first, ...rest])), sha256(sent), 'every byte, once, in order');
    await rm(dir, { recursive: true, force: true });
  });

  it('gathers a child that writes a line at a time: after a small read the next waits 25 ms, so no more reads than 25 ms periods', async () => {
    const [channel] = await openOutputChannels(1);
    const lines = 400;
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs'); const pause = new Int32Array(new SharedArrayBuffer(4));
         for (let i = 0; i < ${lines}; i++) { fs.writeSync(1, 'line ' + i + '\\n'); Atomics.wait(pause, 0, 0, 2); }`,
      ],
      { stdio: ['ignore', channel!.childEnd, 'inherit'] },
    );
    const exited = new Promise<number | null>((resolve, reject) => child.on('error', reject).on('close', resolve));
    void exited.finally(() => channel!.closeChildEnd());
    let text = '';
    let reads = 0;
    for await (const chunk of channel!.chunks()) {
      text += chunk.toString();
      reads++;
    }
    const elapsed = Date.now() - started;
    assert.equal(await exited, 0);
    assert.equal(text, Array.from({ length: lines }, (_, i) => `line ${i}\n`).join(''), 'every line, once, in order');
    // Read as they come (before the gathering), the ${lines} lines 2 ms apart took a read each.
    assert.ok(reads <= elapsed / 25 + 3, `${reads} reads in ${elapsed} ms`);
  });

  it('reads what is left without waiting once the child has exited (closeChildEnd)', async () => {
    // A wait of ten minutes after a small read: the test ends only if the child's exit cuts it short.
    const [channel] = await openOutputChannels(1, 600_000);
    const child = spawn(
      process.execPath,
      ['-e', `process.stdout.write('first\\n'); setTimeout(() => process.stdout.write('last\\n'), 100);`],
      { stdio: ['ignore', channel!.childEnd, 'inherit'] },
    );
    const exited = new Promise<number | null>((resolve, reject) => child.on('error', reject).on('close', resolve));
    void exited.finally(() => channel!.closeChildEnd());
    let text = '';
    for await (const chunk of channel!.chunks()) text += chunk.toString();
    assert.equal(await exited, 0);
    assert.equal(text, 'first\nlast\n');
  });

  it('fails as the directory does when it cannot be made (TMPDIR missing)', async () => {
    await inTmpdir(async (tmp) => {
      process.env.TMPDIR = join(tmp, 'missing');
      await assert.rejects(openOutputChannels(2), { code: 'ENOENT' });
    });
  });

  it('refuses a socket path too long for bind(2) instead of cutting it', async () => {
    await inTmpdir(async (tmp) => {
      const long = join(tmp, 'x'.repeat(100));
      await mkdir(long);
      process.env.TMPDIR = long;
      await assert.rejects(openOutputChannels(1), { code: 'ENAMETOOLONG' });
      assert.deepEqual(await readdir(long), [], 'its directory removed');
    });
  });
});
