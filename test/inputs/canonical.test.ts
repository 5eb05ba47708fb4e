import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { canonicalJson, canonicalNumber, JsonNumber, parseExactJson, type JsonValue } from '../../src/inputs/index.ts';

test('equal numbers get one canonical text', () => {
  const spellings: Record<string, string[]> = {
    '1': ['1', '1.0', '1e0', '10e-1', '0.1E+1', '100e-2', '1.000e+0000'],
    '0': ['0', '0.0', '0.0e10', '0E-5', '0e99999999999999999999'],
    // terraform keeps the sign of a negative zero, so its text does too (the inputs refuse it)
    '-0': ['-0', '-0.0', '-0e5', '-0.000E-3', '-0e99999999999999999999'],
    '-1500': ['-1500', '-1.5e3', '-1.500E+3', '-15000e-1'],
    '12345678901234567890': ['12345678901234567890', '1234567890123456789.0e1'],
    '0.1000000000000000000001': ['0.1000000000000000000001', '1000000000000000000001e-22'],
  };
  for (const [canonical, literals] of Object.entries(spellings)) {
    for (const literal of literals) assert.equal(canonicalNumber(literal), canonical, literal);
  }
});

test('notation is plain from 1e-6 up to below 1e21, scientific outside', () => {
  const expected: [string, string][] = [
    ['100000000000000000000', '100000000000000000000'],
    ['123456789012345678901', '123456789012345678901'],
    ['1e21', '1e+21'],
    ['1234567890123456789012', '1.234567890123456789012e+21'],
    ['0.000001', '0.000001'],
    ['0.0000012', '0.0000012'],
    ['0.0000001', '1e-7'],
    ['-0.00000012', '-1.2e-7'],
    ['123.456', '123.456'],
  ];
  for (const [literal, canonical] of expected) assert.equal(canonicalNumber(literal), canonical, literal);
});

test('numbers beyond 1e±1000 are refused, the limits themselves accepted', () => {
  assert.equal(canonicalNumber('9.9e1000'), '9.9e+1000');
  assert.equal(canonicalNumber('1e-1000'), '1e-1000');
  assert.equal(canonicalNumber('0.1e-999'), '1e-1000');
  for (const literal of ['1e1001', '10e1000', '0.01e-999', '1e123456789012345678']) {
    assert.throws(() => canonicalNumber(literal), RangeError, literal);
  }
});

test('a double gets the text JavaScript gives it (numbers agree with RFC 8785 where doubles are exact)', () => {
  fc.assert(
    fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
      assert.equal(canonicalNumber(JSON.stringify(x)), String(x));
    }),
    { numRuns: 2000 },
  );
});

test('strings: only quote, backslash and C0 controls are escaped, lowercase hex', () => {
  assert.equal(
    canonicalJson('"\\\b\f\n\r\t\u0000\u001f\u007f\u2028é😀/'),
    '"\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\u007f\u2028é😀/"',
  );
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (text) => assert.equal(canonicalJson(text), JSON.stringify(text))),
  );
});

test('a lone surrogate cannot be serialized', () => {
  assert.throws(() => canonicalJson('\ud800'), /lone UTF-16 surrogate/);
  assert.throws(() => canonicalJson(new Map([['\udc00', null]])), /lone UTF-16 surrogate/);
});

test('object keys sort by code point, not by UTF-16 unit', () => {
  const object = new Map<string, JsonValue>(
    [
      ['😀', 1],
      ['\uff61', 2],
      ['b', 3],
      ['B', 4],
      ['', 5],
      ['bb', 6],
    ].map(([key, value]) => [key as string, new JsonNumber(String(value))]),
  );
  assert.equal(canonicalJson(object), '{"":5,"B":4,"b":3,"bb":6,"\uff61":2,"😀":1}');
});

/** RFC 8785 canonical JSON, which equals ours for documents whose numbers are doubles. */
function jcs(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jcs).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    return `{${keys.map((key) => `${JSON.stringify(key)}:${jcs((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

test('parse then serialize equals RFC 8785 for any JSON document of doubles, however it is formatted', () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.constantFrom(0, 2, '\t'), (value, indent) => {
      const text = JSON.stringify(value, null, indent);
      // JSON.parse keeps the last of duplicate keys; fast-check never generates them.
      assert.equal(canonicalJson(parseExactJson(Buffer.from(text))), jcs(JSON.parse(text)));
    }),
    { numRuns: 500 },
  );
});
