import { it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { readLineBatches } from '../../src/util/lines.ts';

it('reads every line across chunk boundaries and multi-byte characters, with a slow consumer', async () => {
  const text = Array.from({ length: 2000 }, (_, i) => `line ${i} é€😀`).join('\r\n') + '\nlast without newline';
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 7) chunks.push(bytes.subarray(at, at + 7)); // splits characters too
  const seen: string[] = [];
  let batches = 0;
  for await (const lines of readLineBatches(Readable.from(chunks))) {
    seen.push(...lines);
    if (++batches % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.equal(seen.length, 2001);
  assert.equal(seen[1999], 'line 1999 é€😀');
  assert.equal(seen[2000], 'last without newline');
  assert.ok(seen.every((line) => !line.endsWith('\r')));
});

it('a batch is the whole lines one chunk ended: none for a chunk inside a line, empty lines kept', async () => {
  const chunks = ['one\ntw', 'o', '\n\nthree\nfour', '\n'];
  const batches: string[][] = [];
  for await (const lines of readLineBatches(Readable.from(chunks))) batches.push(lines);
  assert.deepEqual(batches, [['one'], ['two', '', 'three'], ['four']]);
});
