// What no sink prints raw: control characters but tab and newline, C1, the bidirectional controls.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { printable, printableJson, printableLine } from '../../src/output/printable.ts';

const UNSAFE = [
  '\x00',
  '\x07',
  '\b',
  '\v',
  '\f',
  '\r',
  '\x1b',
  '\x7f',
  '\x85',
  '\x9b',
  '\u061c',
  '\u200e',
  '\u200f',
  '\u2028',
  '\u2029',
  '\u202a',
  '\u202e',
  '\u2066',
  '\u2069',
];

describe('printable', () => {
  it('escapes every control character but tab and newline, C1 and the bidirectional controls; the rest stays as it is', () => {
    for (const char of UNSAFE) assert.ok(!printable(`a${char}b`).includes(char), JSON.stringify(char));
    assert.equal(printable('\x1b[31mred\x07\r\u202eevil\u0085'), '\\x1b[31mred\\x07\\r\\u202eevil\\x85');
    assert.equal(printable('tab\there\nnext é ✓ \u{1F600} \u00a0'), 'tab\there\nnext é ✓ \u{1F600} \u00a0');
  });

  it('printableLine escapes the newline too: nothing in it starts a line of its own', () => {
    assert.equal(printableLine('one\nchanged: nothing\r\nthree'), 'one\\nchanged: nothing\\r\\nthree');
  });

  it('printableJson escapes what JSON.stringify leaves raw, and the value reads back the same', () => {
    const value = { text: 'a\x1b\x85\u202e\u2028\x7fb\n', [`key\u202e`]: 1 };
    const json = printableJson(JSON.stringify(value, null, 2));
    for (const char of UNSAFE) assert.ok(!json.includes(char), JSON.stringify(char));
    assert.deepEqual(JSON.parse(json), value);
  });
});
