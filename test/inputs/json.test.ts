import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  canonicalJson,
  JsonSyntaxError,
  MAX_NESTING,
  NegativeZeroError,
  parseExactJson,
} from '../../src/inputs/index.ts';

const parse = (text: string) => canonicalJson(parseExactJson(Buffer.from(text, 'utf8')));

function syntaxError(input: string | Uint8Array): JsonSyntaxError {
  try {
    parseExactJson(typeof input === 'string' ? Buffer.from(input, 'utf8') : input);
  } catch (error) {
    assert.ok(error instanceof JsonSyntaxError, String(error));
    return error;
  }
  assert.fail(`accepted ${JSON.stringify(input)}`);
}

test('keeps every digit JSON.parse would round', () => {
  assert.equal(
    parse('[12345678901234567890, 0.1000000000000000000001]'),
    '[12345678901234567890,0.1000000000000000000001]',
  );
});

test('decodes escapes to the same text as literal characters', () => {
  assert.equal(parse('"\\u00e9\\ud83d\\ude00\\/\\u0041"'), parse('"é😀/A"'));
  assert.equal(parse('"\\u00E9"'), '"é"');
  assert.equal(parse('"\u2028\u007f"'), '"\u2028\u007f"');
});

test('accepts all four JSON whitespace characters and nothing else', () => {
  assert.equal(parse(' \t\r\n{ "a" :\t[ 1 ,\r\n2 ] }\n'), '{"a":[1,2]}');
  assert.match(syntaxError('{\u00a0}').message, /U\+00A0/);
});

test('reports where the document breaks, in lines and characters', () => {
  const cases: [string, number, number, RegExp][] = [
    ['{\n  "a": 1,\n  "a": 2\n}', 3, 3, /duplicate key "a" \(first at line 2 column 3\)/],
    ['{"x": {"secret-ish": 1, "secret-ish": 2}}', 1, 25, /^line 1 column 25: duplicate key \(first/],
    ['{"a": 1, "\\u0061": 2}', 1, 10, /duplicate key "a"/],
    ['{"é😀": 1 2}', 1, 10, /expected "," or "}" after an object member, found "2"/],
    ['{"a": 1,}', 1, 9, /JSON allows no comma before "}"/],
    ['[1,]', 1, 4, /JSON allows no comma before "]"/],
    ['[1 2]', 1, 4, /expected "," or "]"/],
    ['{"a" 1}', 1, 6, /expected ":" after an object key/],
    ['{a: 1}', 1, 2, /expected a key in double quotes, found "a"/],
    ['{"a": 01}', 1, 7, /leading zeros/],
    ['{"a": 1.}', 1, 7, /malformed number/],
    ['{"a": +1}', 1, 7, /expected a JSON value, found "\+"/],
    ['{"a": -}', 1, 8, /expected a digit/],
    ['{"a": 1e1001}', 1, 7, /beyond 1e±1000, an absurd exponent/],
    ['{"a": NaN}', 1, 7, /expected a JSON value, found "NaN"/],
    ['{"a": tru}', 1, 7, /expected a JSON value, found "tru"/],
    ['\n\n  {"a": "x\ty"}', 3, 11, /control character U\+0009 inside a string/],
    ['{"a": "\\ud800"}', 1, 8, /\\ud800 is half of a surrogate pair/],
    ['{"a": "\\ud83d\\u0041"}', 1, 8, /\\ud83d is half of a surrogate pair/],
    ['{"a": "\\ude00"}', 1, 8, /\\ude00 is half of a surrogate pair/],
    ['{"a": "\\x"}', 1, 8, /invalid escape/],
    ['{"a": "\\u12"}', 1, 8, /four hexadecimal digits/],
    ['{"a": "open}', 1, 7, /the string is not closed/],
    ['{"a": 1', 1, 8, /found the end of the file/],
    ['{} {}', 1, 4, /unexpected "{" after the JSON value/],
    ['', 1, 1, /the file is empty/],
    ['\ufeff{}', 1, 1, /byte order mark/],
  ];
  for (const [text, line, column, problem] of cases) {
    const error = syntaxError(text);
    assert.deepEqual([error.line, error.column], [line, column], `${JSON.stringify(text)}: ${error.message}`);
    assert.match(error.message, problem);
  }
});

test('reports the line of invalid UTF-8', () => {
  const error = syntaxError(Buffer.concat([Buffer.from('{\n"a":\n"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]));
  assert.equal(error.line, 3);
  assert.equal(error.column, undefined);
  assert.match(error.message, /^line 3: the text is not valid UTF-8/);
});

test(`nesting up to ${MAX_NESTING} levels is accepted, deeper is refused`, () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  assert.equal(parse(nested(MAX_NESTING)), nested(MAX_NESTING));
  assert.match(syntaxError(nested(MAX_NESTING + 1)).message, /nested deeper than 512 levels/);
  assert.match(syntaxError('{"a":'.repeat(100_000)).message, /nested deeper/);
});

test('a negative zero is refused with its spelling, where it is, and the path to it', () => {
  const cases: [string, string, (string | number)[], number, number][] = [
    ['-0', '-0', [], 1, 1],
    ['{"gen": -0.0}', '-0.0', ['gen'], 1, 9],
    ['{"nodes": [{"gen": 1},\n  {"gen": -0e5}]}', '-0e5', ['nodes', 1, 'gen'], 2, 11],
    ['[[0, 0.0, 0e5], {"a b": [-0.000E-3]}]', '-0.000E-3', [1, 'a b', 0], 1, 26],
    ['{"z": -0e99999999999999999999}', '-0e99999999999999999999', ['z'], 1, 7],
  ];
  for (const [text, literal, path, line, column] of cases) {
    assert.throws(
      () => parseExactJson(Buffer.from(text)),
      (error: unknown) => {
        assert.ok(error instanceof NegativeZeroError, String(error));
        assert.deepEqual(
          { literal: error.literal, path: error.path, line: error.line, column: error.column },
          { literal, path, line, column },
        );
        assert.equal(
          error.message,
          `line ${line} column ${column}: ${literal} is a negative zero`,
          'no key in the message: keys may be secret',
        );
        return true;
      },
      text,
    );
  }
  assert.equal(parse('[0, 0.0, 0e5, -1e-1000, -0.5]'), '[0,0,0,-1e-1000,-0.5]');
});
