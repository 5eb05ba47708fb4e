import { it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { readLines } from '../../src/util/lines.ts';

it('reads every line across chunk boundaries and multi-byte characters, with a slow consumer', async () => {
  const text = Array.from({ length: 2000 }, (_, i) => `line ${i} é€😀`).join('\r\n') + '\nlast without newline';
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 7) chunks.push(bytes.subarray(at, at + 7)); // splits characters too
  const seen: string[] = [];
  for await (const line of readLines(Readable.from(chunks))) {
    seen.push(line);
    if (seen.length % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.equal(seen.length, 2001);
  assert.equal(seen[1999], 'line 1999 é€😀');
  assert.equal(seen[2000], 'last without newline');
  assert.ok(seen.every((line) => !line.endsWith('\r')));
});
