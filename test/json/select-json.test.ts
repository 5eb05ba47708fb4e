// The streaming JSON reader on its own, under any chunking: what it builds equals JSON.parse,
// every occurrence of a duplicated key reaches its selector, and a broken document fails at the
// byte where it broke whether that part is built, probed or skipped (skipped containers are read
// by a loop of their own: these prove it agrees with the byte-by-byte path).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { KEEP, SelectiveJsonReader, type Selector, type Shape } from '../../src/json/select-json.ts';
import { JsonSyntaxError } from '../../src/util/json-syntax-error.ts';
import { runs } from '../support/property-runs.ts';

/** Feeds `bytes` split at `cuts` (taken modulo its length + 1), then ends the document. */
function read(root: Selector, bytes: Buffer, cuts: number[] = []): void {
  const reader = new SelectiveJsonReader(root);
  const points = [0, ...cuts.map((cut) => cut % (bytes.length + 1)).sort((a, b) => a - b), bytes.length];
  for (let k = 1; k < points.length; k++) reader.write(bytes.subarray(points[k - 1], points[k]));
  reader.end();
}

/** The value KEEP builds for the whole document. */
function built(bytes: Buffer, cuts: number[] = []): unknown {
  let value: unknown;
  read(
    { fields: { v: KEEP }, emit: (document) => (value = (document as { v: unknown }).v) },
    Buffer.concat([Buffer.from('{"v":'), bytes, Buffer.from('}')]),
    cuts,
  );
  return value;
}

/** The error the document fails with, as "problem at byte N", or "no error". */
function failure(root: Selector, bytes: Buffer, cuts: number[] = []): string {
  try {
    read(root, bytes, cuts);
    return 'no error';
  } catch (error) {
    assert.ok(error instanceof JsonSyntaxError, String(error));
    return error.message;
  }
}

/** Selectors that build everything, skip everything below the root, or probe each member of the root. */
const READINGS: [string, Selector][] = [
  ['built', KEEP],
  ['skipped', { fields: {} }],
  ['probed', { members: { probe: () => undefined }, items: { probe: () => undefined } }],
];

/** Every string's characters outside ASCII written as \u escapes (astral ones as surrogate pairs), as some writers do. */
const escapeNonAscii = (text: string) =>
  text.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** A document as JSON.stringify prints it (indented or not), its non-ASCII characters escaped or not. */
const printed = (document: unknown, indent: number | undefined, escaped: boolean) =>
  escaped ? escapeNonAscii(JSON.stringify(document, null, indent)) : JSON.stringify(document, null, indent);

const cutsArbitrary = fc.array(fc.nat(), { maxLength: 6 });
const documentArbitrary = fc.jsonValue({ maxDepth: 4 });

/** For each place between bytes of a valid document (0 to its length): whether it lies inside a string. */
function placesInStrings(bytes: Buffer): boolean[] {
  const places = [false];
  let inString = false;
  let escaped = false;
  for (const c of bytes) {
    if (escaped) escaped = false;
    else if (inString && c === 0x5c) escaped = true;
    else if (c === 0x22) inString = !inString;
    places.push(inString);
  }
  return places;
}

describe('the reader builds what JSON.parse builds', () => {
  test('any document, unicode and escapes included, as it is, pretty-printed and with every non-ASCII character escaped, under any chunking', () => {
    fc.assert(
      fc.property(
        documentArbitrary,
        fc.constantFrom(undefined, 2),
        fc.boolean(),
        cutsArbitrary,
        (document, indent, escaped, cuts) => {
          const text = printed(document, indent, escaped);
          assert.deepEqual(built(Buffer.from(text), cuts), JSON.parse(text));
        },
      ),
      { numRuns: runs(300) },
    );
  });

  test('an object read through a fields function or otherFields, its keys decoded (escaped ones too), under any chunking', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), documentArbitrary, { maxKeys: 6 }),
        fc.constantFrom(undefined, 2),
        fc.boolean(),
        cutsArbitrary,
        (document, indent, escaped, cuts) => {
          const text = printed(document, indent, escaped);
          const shapes: Shape[] = [{ fields: () => KEEP }, { fields: { unused: KEEP }, otherFields: () => KEEP }];
          for (const shape of shapes) {
            let value: unknown;
            read({ ...shape, emit: (built) => (value = built) }, Buffer.from(text), cuts);
            assert.deepEqual(value, JSON.parse(text));
          }
        },
      ),
      { numRuns: runs(200) },
    );
  });

  test('surrogate pairs and lone surrogates written as escapes, cut anywhere', () => {
    const text = String.raw`["\ud83d\ude00", "\uD83D\uDE00x", "\ud800", "\udfff", "a\u00e9\u2713", "\u0000\u001f"]`;
    const bytes = Buffer.from(text);
    for (let cut = 0; cut <= bytes.length; cut++)
      assert.deepEqual(built(bytes, [cut]), JSON.parse(text), `cut at ${cut}`);
  });

  test('numbers of every form are the numbers JSON.parse reads, cut anywhere', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.integer(),
          fc.bigInt().map((n) => `${n}`),
        ),
        fc.constantFrom('', 'E', 'e+', 'e-'),
        fc.nat(30),
        cutsArbitrary,
        (number, exponent, power, cuts) => {
          const base = typeof number === 'string' ? number : JSON.stringify(number);
          const text = exponent && !/[eE]/.test(base) ? `${base}${exponent}${power}` : base;
          assert.deepEqual(built(Buffer.from(`[${text}, ${text}]`), cuts), JSON.parse(`[${text}, ${text}]`));
        },
      ),
      { numRuns: runs(300) },
    );
  });
});

describe('every occurrence of a duplicated key reaches its selector', () => {
  test('at any depth, built, emitted, probed and skipped: the last occurrence is the value, as JSON.parse has it', () => {
    const text =
      '{"a":1,"a":{"a":[1],"a":{"x":1,"x":2}},"p":[1],"p":[],"e":{"k":"one"},"e":{"k":"two","k":"three"},"d":{"l":[{"k":1},{"k":2}],"l":[{"k":3,"k":4}]},"s":{"a":{"a":1}},"s":[{"a":1,"a":2}],"__proto__":{"x":1}}';
    const bytes = Buffer.from(text);
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const document = { a: parsed.a, d: { l: [] }, s: [{}] };
    Object.defineProperty(document, '__proto__', {
      value: { x: 1 },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    for (let cut = 0; cut <= bytes.length; cut++) {
      const seen: unknown[] = [];
      read(
        {
          fields: {
            a: KEEP,
            p: { probe: (hasContent, key) => seen.push(['probe', key, hasContent]) },
            e: { fields: { k: KEEP }, emit: (value, key) => seen.push(['emit', key, value]) },
            d: {
              fields: { l: { items: { fields: { k: KEEP }, emit: (value, key) => seen.push(['item', key, value]) } } },
            },
            s: {
              members: { probe: (hasContent, key) => seen.push(['member', key, hasContent]) },
              items: { fields: {} },
            },
            ['__proto__']: KEEP,
          },
          emit: (value) => seen.push(['document', value]),
        },
        bytes,
        [cut],
      );
      assert.deepEqual(
        seen,
        [
          ['probe', 'p', true],
          ['probe', 'p', false],
          ['emit', 'e', { k: 'one' }],
          ['emit', 'e', { k: 'three' }],
          ['item', 0, { k: 1 }],
          ['item', 1, { k: 2 }],
          ['item', 0, { k: 4 }],
          ['member', 'a', true],
          // Keys inside a container nobody selected are never looked at (s's second object).
          ['document', document],
        ],
        `cut at ${cut}`,
      );
    }
  });
});

describe('a probe is told whether a value holds content', () => {
  test('a string or number (even empty or zero) and true do, false and null do not, nor an empty container; cut anywhere', () => {
    const text = '{"s":"x\\n","e":"","n":0,"m":-1.5e3,"t":true,"f":false,"z":null,"o":{},"a":[],"O":{"k":1},"A":[0]}';
    const bytes = Buffer.from(text);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const seen: unknown[] = [];
      read({ members: { probe: (hasContent, key) => seen.push([key, hasContent]) } }, bytes, [cut]);
      assert.deepEqual(
        seen,
        [
          ['s', true],
          ['e', true],
          ['n', true],
          ['m', true],
          ['t', true],
          ['f', false],
          ['z', false],
          ['o', false],
          ['a', false],
          ['O', true],
          ['A', true],
        ],
        `cut at ${cut}`,
      );
    }
  });
});

describe('a broken document fails at the byte where it broke, built, probed or skipped', () => {
  test('every prefix of a document that is an object or an array fails at its end', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(documentArbitrary, { maxLength: 4 }),
          fc.dictionary(fc.string(), documentArbitrary, { maxKeys: 4 }),
        ),
        fc.constantFrom(undefined, 2),
        fc.nat(),
        cutsArbitrary,
        (document, indent, at, cuts) => {
          const bytes = Buffer.from(JSON.stringify(document, null, indent));
          const length = at % bytes.length;
          const prefix = bytes.subarray(0, length);
          if (prefix.toString('latin1').trim() === '') return;
          for (const [name, root] of READINGS)
            assert.match(failure(root, prefix, cuts), new RegExp(` at byte ${length}$`), name);
        },
      ),
      { numRuns: runs(300) },
    );
  });

  test('a byte that cannot be there: "#" outside a string, a control character inside one, at its own offset', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(documentArbitrary, { maxLength: 4 }),
          fc.dictionary(fc.string(), documentArbitrary, { maxKeys: 4 }),
        ),
        fc.constantFrom(undefined, 2),
        fc.nat(),
        fc.integer({ min: 0, max: 0x1f }),
        cutsArbitrary,
        (document, indent, at, control, cuts) => {
          const bytes = Buffer.from(JSON.stringify(document, null, indent));
          const position = at % (bytes.length + 1);
          // Inside a string the control character fails where it is (after a backslash as an invalid escape).
          const inString = placesInStrings(bytes)[position]!;
          const broken = Buffer.concat([
            bytes.subarray(0, position),
            Buffer.from([inString ? control : 0x23]),
            bytes.subarray(position),
          ]);
          const expected = failure(KEEP, broken);
          assert.match(expected, new RegExp(` at byte ${position}$`));
          for (const [name, root] of READINGS) assert.equal(failure(root, broken, cuts), expected, name);
        },
      ),
      { numRuns: runs(300) },
    );
  });

  test('any byte replaced or inserted anywhere: the same error at the same byte, built, probed or skipped, under any chunking', () => {
    const bytesArbitrary = fc.constantFrom(...'{}[]:,"\\ \n-+.eE0123456789tfnrlsux#\u0000\u0001\u001fé');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(documentArbitrary, { maxLength: 4 }),
          fc.dictionary(fc.string(), documentArbitrary, { maxKeys: 4 }),
        ),
        fc.nat(),
        bytesArbitrary,
        fc.boolean(),
        cutsArbitrary,
        (document, at, byte, insert, cuts) => {
          const bytes = Buffer.from(JSON.stringify(document));
          const position = at % (bytes.length + 1);
          const broken = Buffer.concat([
            bytes.subarray(0, position),
            Buffer.from(byte),
            bytes.subarray(insert ? position : position + 1),
          ]);
          const expected = failure(KEEP, broken);
          assert.equal(
            expected === 'no error',
            (() => {
              try {
                JSON.parse(broken.toString('utf8'));
                return true;
              } catch {
                return false;
              }
            })(),
            'the reader accepts what JSON.parse accepts',
          );
          for (const [name, root] of READINGS) assert.equal(failure(root, broken, cuts), expected, name);
        },
      ),
      { numRuns: runs(500) },
    );
  });

  test('nesting deeper than the reader first makes room for, skipped and built', () => {
    const depth = 200;
    const text = `{"x":${'['.repeat(depth)}${']'.repeat(depth)},"y":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
    for (const [name, root] of READINGS) assert.equal(failure(root, Buffer.from(text)), 'no error', name);
    assert.deepEqual(built(Buffer.from(text)), JSON.parse(text));
    const broken = Buffer.from(text.replace(']]}', ']}}'));
    for (const [name, root] of READINGS) assert.equal(failure(root, broken), failure(KEEP, broken), name);
  });
});

describe("Buffer's own decoders, which the reader calls without toString", () => {
  test('exist on a Buffer and decode as toString does (a Node that drops them fails here)', () => {
    const bytes = Buffer.from('plain é ✓ 😀 \u0000', 'utf8');
    const decoders = bytes as unknown as Record<string, (start: number, end: number) => string>;
    assert.equal(typeof decoders.latin1Slice, 'function');
    assert.equal(typeof decoders.utf8Slice, 'function');
    assert.equal(decoders.utf8Slice!(2, bytes.length), bytes.toString('utf8', 2));
    assert.equal(decoders.latin1Slice!(2, bytes.length), bytes.toString('latin1', 2));
  });
});
