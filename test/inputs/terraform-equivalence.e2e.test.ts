// Equal inputs hash ⇒ terraform renders equal values (contract/sections/inputs.md, section 8).
// fast-check generates values and two spellings of each (number spellings, string escapes, key
// order, whitespace); both must hash alike and give terraform the same var file, and the real
// terraform must render both spellings, and the canonical text the runner gives it, alike. One
// terraform apply checks a whole batch. Negative zeros, which terraform tells from 0, are refused.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import fc from 'fast-check';
import {
  canonicalJson,
  computeHashes,
  inputsFromFiles,
  SENSITIVE_TFVARS_FILE,
  terraformVarFiles,
  TFVARS_FILE,
  type InputsSnapshot,
} from '../../src/inputs/index.ts';
import { runTestTerraform, tempDir, writeTree } from '../support/tf-modules.ts';

/** Fixed, so CI replays the same values and a failure replays; CAPTF_PROPERTY_SEED=<n> explores others. */
const SEED = Number(process.env.CAPTF_PROPERTY_SEED ?? 20261130);
const BATCH = 40;
const BATCHES = 4;

// ---- a model of JSON values, and random spellings of it ------------------------------------

type Model =
  | { t: 'null' }
  | { t: 'bool'; v: boolean }
  | { t: 'string'; v: string }
  /** `digits` × 10^`exponent`, digits without leading or trailing zeros ('' is zero). */
  | { t: 'number'; negative: boolean; digits: string; exponent: number }
  | { t: 'array'; v: Model[] }
  | { t: 'object'; v: [string, Model][] }
  /** Only in the refusal property: where a negative zero goes. */
  | { t: 'negativeZero' };

/** Characters whose spellings differ: escapes, `/`, controls, DEL, U+2028, NFC and NFD, astral, templates. */
const SPECIAL_TEXT = [
  '"',
  '\\',
  '/',
  '\b',
  '\f',
  '\n',
  '\r',
  '\t',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u2028',
  'é',
  'e\u0301',
  '😀',
  '${a}',
  '%{ if x }',
  '$${',
  '//',
  'A',
  ' ',
];
const text = fc
  .array(fc.oneof(fc.constantFrom(...SPECIAL_TEXT), fc.string({ unit: 'grapheme', maxLength: 4 })), { maxLength: 6 })
  .map((parts) => parts.join(''))
  .filter((s) => !/\p{Cs}/u.test(s)); // no lone surrogate: the inputs refuse those

const digitString = (min: number, max: number) =>
  fc
    .tuple(
      fc.integer({ min: 1, max: 9 }),
      fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min - 1, maxLength: max - 1 }),
    )
    .map(([first, rest]) => `${first}${rest.join('')}`.replace(/0+$/, ''));

const numberModel: fc.Arbitrary<Model> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<Model>({ t: 'number', negative: false, digits: '', exponent: 0 }) },
  {
    weight: 6,
    arbitrary: fc
      .record({
        negative: fc.boolean(),
        digits: fc.oneof({ weight: 5, arbitrary: digitString(1, 20) }, { weight: 1, arbitrary: digitString(21, 200) }),
        scientific: fc.oneof(
          { weight: 5, arbitrary: fc.integer({ min: -30, max: 30 }) },
          { weight: 1, arbitrary: fc.integer({ min: -1000, max: 1000 }) },
        ),
      })
      .map(
        ({ negative, digits, scientific }): Model => ({
          t: 'number',
          negative,
          digits,
          exponent: scientific - digits.length + 1,
        }),
      ),
  },
);

/** Objects never hold two keys equal after NFC: terraform refuses those (Duplicate object attribute). */
const uniqueNfc = (members: [string, Model][]) =>
  new Set(members.map(([key]) => key.normalize('NFC'))).size === members.length;

const { value: valueModel } = fc.letrec<{ value: Model }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant<Model>({ t: 'null' }),
    fc.boolean().map((v): Model => ({ t: 'bool', v })),
    text.map((v): Model => ({ t: 'string', v })),
    numberModel,
    fc.array(tie('value'), { maxLength: 4 }).map((v): Model => ({ t: 'array', v })),
    fc
      .uniqueArray(fc.tuple(text, tie('value')), { maxLength: 4, selector: ([key]) => key })
      .filter(uniqueNfc)
      .map((v): Model => ({ t: 'object', v })),
  ),
}));

/** mulberry32: the spelling choices come from a seed fast-check generates, so they replay. */
function random(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) % n;
  };
}

type Pick = (n: number) => number;
const choose = <T>(pick: Pick, options: readonly T[]): T => options[pick(options.length)]!;
const space = (pick: Pick) => choose(pick, ['', '', ' ', '\n  ', '\t', '\r\n']);

const SHORT_ESCAPES: Record<string, string[]> = {
  '"': ['\\"'],
  '\\': ['\\\\'],
  '/': ['/', '\\/'],
  '\b': ['\\b'],
  '\f': ['\\f'],
  '\n': ['\\n'],
  '\r': ['\\r'],
  '\t': ['\\t'],
};

function unicodeEscape(pick: Pick, unit: number): string {
  const hex = unit.toString(16).padStart(4, '0');
  return `\\u${pick(2) ? hex : hex.toUpperCase()}`;
}

function spellString(pick: Pick, value: string): string {
  let out = '"';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    const escapes = SHORT_ESCAPES[char] ?? [];
    const mustEscape = code < 0x20 || char === '"' || char === '\\';
    if (!mustEscape && pick(3) !== 0) {
      out += char;
    } else if (escapes.length > 0 && pick(3) !== 0) {
      out += choose(pick, escapes);
    } else {
      out +=
        [...char].length === 1 && code > 0xffff
          ? unicodeEscape(pick, char.charCodeAt(0)) + unicodeEscape(pick, char.charCodeAt(1))
          : unicodeEscape(pick, code);
    }
  }
  return `${out}"`;
}

function spellExponent(pick: Pick, exponent: number): string {
  if (exponent === 0 && pick(2)) return '';
  const sign = exponent < 0 ? '-' : choose(pick, ['', '+']);
  return `${choose(pick, ['e', 'E'])}${sign}${'0'.repeat(pick(3))}${Math.abs(exponent)}`;
}

/** Any JSON spelling of ±digits × 10^exponent: the point moved, zeros added, the exponent adjusted. */
function spellNumber(pick: Pick, negative: boolean, digits: string, exponent: number): string {
  const sign = negative ? '-' : '';
  if (digits === '')
    return `${sign}0${pick(2) ? `.${'0'.repeat(1 + pick(3))}` : ''}${spellExponent(pick, pick(7) - 3)}`;
  const mantissa = digits + '0'.repeat(pick(4));
  const point = pick(mantissa.length + 1);
  const fraction = point === 0 ? '0'.repeat(pick(3)) + mantissa : mantissa.slice(point);
  const integer = point === 0 ? '0' : mantissa.slice(0, point);
  const written = exponent - (mantissa.length - digits.length) + fraction.length;
  return `${sign}${integer}${fraction ? `.${fraction}` : ''}${spellExponent(pick, written)}`;
}

function spell(pick: Pick, model: Model): string {
  switch (model.t) {
    case 'null':
      return 'null';
    case 'bool':
      return String(model.v);
    case 'string':
      return spellString(pick, model.v);
    case 'number':
      return spellNumber(pick, model.negative, model.digits, model.exponent);
    case 'negativeZero':
      return spellNumber(pick, true, '', 0);
    case 'array':
      return `[${model.v.map((element) => space(pick) + spell(pick, element) + space(pick)).join(',')}]`;
    case 'object':
      return spellMembers(
        pick,
        model.v.map(([key, member]) => [spellString(pick, key), spell(pick, member)]),
      );
  }
}

/** `{…}` with the members in a random order and random whitespace. */
function spellMembers(pick: Pick, members: [string, string][]): string {
  const shuffled = [...members];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = pick(i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  return `{${shuffled.map(([key, value]) => `${space(pick)}${key}${space(pick)}:${space(pick)}${value}${space(pick)}`).join(',')}}`;
}

// ---- terraform ------------------------------------------------------------------------------

const SIDES = ['a', 'b', 'c'] as const; // spelling A, spelling B, the runner's canonical text

/** Per variable: `jsonencode(var.x)`, and `"<${var.x}>"` where a template takes it (strings, numbers, bools). */
function equivalenceModule(): string {
  return SIDES.flatMap((side) =>
    Array.from(
      { length: BATCH },
      (_, i) => `variable "${side}${i}" {
  type = any
}

output "j${side}${i}" {
  value = jsonencode(var.${side}${i})
}

output "s${side}${i}" {
  value = try("<\${var.${side}${i}}>", null)
}
`,
    ),
  ).join('\n');
}

let moduleDir: string;
let runs = 0;

async function renderedOutputs(varFile: string): Promise<Record<string, { value: unknown }>> {
  const path = join(moduleDir, `batch-${++runs}.tfvars.json`);
  const state = join(moduleDir, `batch-${runs}.tfstate`);
  await writeFile(path, varFile);
  const apply = await runTestTerraform(moduleDir, [
    'apply',
    '-auto-approve',
    '-input=false',
    '-no-color',
    `-var-file=${path}`,
    `-state=${state}`,
  ]);
  assert.equal(apply.exitCode, 0, apply.stderr);
  return (JSON.parse(await readFile(state, 'utf8')) as { outputs: Record<string, { value: unknown }> }).outputs;
}

const hashOf = (snapshot: InputsSnapshot) =>
  computeHashes({
    image: 'registry.example/m:1',
    kind: 'cluster',
    variables: snapshot.variables,
    files: snapshot.files,
  });
const tfvars = (text: string) => inputsFromFiles(new Map([[TFVARS_FILE, Buffer.from(text, 'utf8')]]));

describe('equal inputs hash ⇒ terraform renders equal values', () => {
  before(async () => {
    moduleDir = await tempDir(undefined, 'captf-equivalence-');
    await writeTree(moduleDir, { 'main.tf': equivalenceModule() });
    const init = await runTestTerraform(moduleDir, ['init', '-input=false', '-no-color']);
    assert.equal(init.exitCode, 0, init.stderr);
  });

  test(`${BATCHES} batches of ${BATCH} generated values, each in two spellings`, async () => {
    const pair = fc.record({ model: valueModel, seedA: fc.integer(), seedB: fc.integer() });
    await fc.assert(
      fc.asyncProperty(fc.array(pair, { minLength: BATCH, maxLength: BATCH }), async (pairs) => {
        const spellings = pairs.map(({ model, seedA, seedB }) => ({
          a: spell(random(seedA), model),
          b: spell(random(seedB), model),
        }));
        const document = (side: 'a' | 'b', seed: number) =>
          spellMembers(
            random(seed),
            spellings.map((spelling, i) => [`"v${i}"`, spelling[side]]),
          );
        const [a, b] = [tfvars(document('a', pairs[0]!.seedA)), tfvars(document('b', pairs[0]!.seedB))];
        assert.deepEqual(hashOf(a), hashOf(b), 'two spellings of one value hash alike');
        assert.deepEqual(terraformVarFiles(a), terraformVarFiles(b), 'and give terraform the same var file');

        // One apply for the batch: spelling A as a<i>, B as b<i>, the canonical text as c<i>.
        const members = spellings.flatMap((spelling, i) => [
          `"a${i}": ${spelling.a}`,
          `"b${i}": ${spelling.b}`,
          `"c${i}": ${canonicalJson(a.variables.get(`v${i}`)!)}`,
        ]);
        const outputs = await renderedOutputs(`{\n${members.join(',\n')}\n}\n`);
        for (let i = 0; i < BATCH; i++) {
          assert.equal(typeof outputs[`ja${i}`]?.value, 'string', 'jsonencode renders every value');
          for (const kind of ['j', 's']) {
            const [ra, rb, rc] = SIDES.map((side) => outputs[`${kind}${side}${i}`]?.value);
            const context = `v${i}: A ${spellings[i]!.a} | B ${spellings[i]!.b}`;
            assert.deepEqual(rb, ra, `terraform renders two spellings differently: ${context}`);
            assert.deepEqual(rc, ra, `terraform renders the canonical text differently: ${context}`);
          }
        }
      }),
      { seed: SEED, numRuns: BATCHES, endOnFailure: true },
    );
  });
});

test('two spellings terraform itself reads as two numbers hash alike and give terraform one text', () => {
  // The midpoint between two 512-bit numbers: terraform 1.11 rounds `De-601` down and `D0e-602` up
  // (test/e2e/negative-zero.test.ts applies both); the runner gives terraform the canonical text.
  const digits = ((2n ** 511n + 2n ** 255n + 12345n) * 2n + 1n) * 5n ** 601n;
  const [a, b] = [tfvars(`{"size": ${digits}e-601}`), tfvars(`{"size": ${digits}0e-602}`)];
  assert.deepEqual(hashOf(a), hashOf(b));
  assert.deepEqual(terraformVarFiles(a), terraformVarFiles(b));
  assert.match(terraformVarFiles(a)[0]!.content, /^\{\n"size":1\.6155871338\d{564}e-27\n\}\n$/);
});

// ---- negative zero: terraform keeps the sign, the inputs refuse it ---------------------------

/** Puts a negative zero in place of one random value below the top and returns the path to it. */
function withNegativeZero(pick: Pick, model: Model, path: (string | number)[] = []): [Model, (string | number)[]] {
  const children: [string | number, Model][] =
    model.t === 'array' ? model.v.map((member, i) => [i, member]) : model.t === 'object' ? model.v : [];
  if (children.length === 0 || (path.length > 0 && pick(4) === 0)) return [{ t: 'negativeZero' }, path];
  const index = pick(children.length);
  const [key, child] = children[index]!;
  const [replaced, found] = withNegativeZero(pick, child, [...path, key]);
  if (model.t === 'array')
    return [{ t: 'array', v: model.v.map((member, i) => (i === index ? replaced : member)) }, found];
  return [
    {
      t: 'object',
      v: (model as { v: [string, Model][] }).v.map(([k, member], i) => [k, i === index ? replaced : member]),
    },
    found,
  ];
}

const jsonPath = (path: (string | number)[]) =>
  '$' +
  path
    .map((s) =>
      typeof s === 'number' ? `[${s}]` : /^[A-Za-z_][A-Za-z0-9_-]*$/.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`,
    )
    .join('');

test('a negative zero anywhere, in any spelling, is refused with the file and the JSON path', () => {
  const variables = fc
    .uniqueArray(fc.tuple(text, valueModel), { minLength: 1, maxLength: 4, selector: ([key]) => key })
    .filter(uniqueNfc)
    .map((v): Model => ({ t: 'object', v }));
  fc.assert(
    fc.property(variables, fc.integer(), fc.boolean(), (model, seed, sensitive) => {
      const pick = random(seed);
      const [document, path] = withNegativeZero(pick, model);
      const file = sensitive ? SENSITIVE_TFVARS_FILE : TFVARS_FILE;
      const text = spell(pick, document);
      const shown = sensitive ? path.slice(0, 1) : path;
      assert.throws(
        () => inputsFromFiles(new Map([[file, Buffer.from(text, 'utf8')]]), '/in'),
        (error: unknown) => {
          const { reason, message, detail } = error as { reason: string; message: string; detail: { path: string } };
          assert.equal(reason, 'InputsInvalid');
          assert.ok(message.startsWith(`/in/${file}: `), message);
          assert.match(message, / is a negative zero .*terraform keeps its sign/);
          assert.equal(detail.path, jsonPath(shown));
          if (sensitive && path.length > 1)
            assert.ok(!message.includes(jsonPath(path)), `a key inside a sensitive variable is named: ${message}`);
          return true;
        },
        text,
      );
    }),
    { seed: SEED, numRuns: 500 },
  );
});
