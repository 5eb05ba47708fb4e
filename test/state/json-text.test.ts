import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { withSerial } from '../../src/state/serial.ts';
import { arrayItems, documentSpan, objectMembers } from '../../src/state/json-text.ts';

describe('state: JSON text spans', () => {
  it('finds members and items past strings holding brackets, quotes and escapes; refuses what is not JSON', () => {
    const text = ' {"a": "x}\\"]", "b": [1, {"c": "]"}, []], "serial": 3, "a": 2} ';
    const members = objectMembers(text, documentSpan(text));
    assert.equal(
      text.slice(members.get('a')!.start, members.get('a')!.end),
      '2',
      'the last of a repeated key, as JSON.parse reads it',
    );
    assert.deepEqual(
      arrayItems(text, members.get('b')!).map((span) => text.slice(span.start, span.end)),
      ['1', '{"c": "]"}', '[]'],
    );
    assert.equal(withSerial(text, 4), text.replace('"serial": 3', '"serial": 4'));
    for (const broken of ['{"a": "open', '{"a" 1}', '{"a": 1 "b": 2}', '[1, 2', '{"a": }'])
      assert.throws(() => objectMembers(broken, { start: 0, end: broken.length }), SyntaxError, broken);
  });
});
