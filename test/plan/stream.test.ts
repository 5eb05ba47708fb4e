// The streaming reader: same answers as the reference on every document and every chunking,
// clear errors for broken JSON, memory that does not grow with the document.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createReadStream, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RunnerError } from '../../src/errors.ts';
import type { Classification } from '../../src/schemas/classification.ts';
import { classifyPlan } from '../../src/plan/classify.ts';
import { summarizeState } from '../../src/state/summary.ts';
import { classifyPlanStream } from '../../src/plan/stream.ts';
import { peakLiveGrowth } from '../support/live-memory.ts';
import {
  resourceChange,
  chunked,
  corpusFiles,
  corpusPath,
  everyNthByte,
  INPUTS_HASH_ADDRESS,
  planDocument,
  type Json,
} from './plans.support.ts';

const MiB = 1024 * 1024;

const ignore = { ignoreAddresses: new Set([INPUTS_HASH_ADDRESS]) };
const streamText = (text: string, cuts: number[] = []) => classifyPlanStream(chunked(Buffer.from(text), cuts), ignore);

/** Asserts `promise` rejects with a PlanUnreadable error whose message matches. */
async function assertUnreadable(promise: Promise<unknown>, message: RegExp) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof RunnerError, String(error));
    assert.equal(error.kind, 'plan');
    assert.equal(error.reason, 'PlanUnreadable');
    assert.match(error.message, message);
    return true;
  });
}

const samplePlan = JSON.stringify(
  planDocument({
    resource_drift: [resourceChange('terraform_data.d', ['update'])],
    resource_changes: [
      resourceChange(
        'terraform_data.a',
        ['delete', 'create'],
        { action_reason: 'replace_because_tainted' },
        { replace_paths: [['triggers_replace'], ['x', 0]] },
      ),
      resourceChange('module.m.terraform_data.e["k\\"ey"]', ['delete'], { deposed: '7810d417' }),
      resourceChange(
        'terraform_data.i',
        ['no-op'],
        { previous_address: 'terraform_data.h' },
        { importing: { id: 'x' } },
      ),
      resourceChange(INPUTS_HASH_ADDRESS, ['update']),
    ],
    output_changes: { o: { actions: ['create'], after: { nested: ['ü', 1e-7] } } },
  }),
);

/** terraform 1.14+ content and keys no tool writes (yet), every kind of value under them. */
const newerPlan = JSON.stringify({
  ...planDocument({
    resource_changes: [resourceChange('terraform_data.a', ['update'])],
    deferred_changes: [
      { reason: 'resource_config_unknown', resource_change: resourceChange('terraform_data.b', ['delete', 'create']) },
    ],
    deferred_action_invocations: [
      {
        reason: 'deferred_prereq',
        action_invocation: {
          address: 'action.x.later',
          type: 'x',
          config_values: { s: 'S3CRET' },
          lifecycle_action_trigger: {
            triggering_resource_address: 'terraform_data.b',
            action_trigger_event: 'AfterCreate',
          },
        },
      },
    ],
    action_invocations: [
      {
        address: 'action.x.now',
        type: 'x',
        name: 'now',
        config_values: { s: 'S3CRET', n: [1, { d: null }] },
        provider_name: 'p',
        invoke_action_trigger: { calling_resource_address: 'terraform_data.a' },
      },
      {
        address: 'action.x.upd',
        lifecycle_action_trigger: {
          triggering_resource_address: 'terraform_data.a',
          action_trigger_event: 'BeforeUpdate',
          on_failure: 'ActionOnFailureTaint',
        },
      },
      { address: 'action.x.odd', lifecycle_action_trigger: 'not an object' },
    ],
    complete: false,
  }),
  future_empty_array: [],
  future_empty_object: {},
  future_null: null,
  future_false: false,
  future_zero: 0,
  future_string: 'x',
  future_nested: [[]],
  future_escaped: { a: { b: [] } },
  // The key spelled with an escape in the JSON text (below): the reader decodes it.
}).replace('"future_escaped"', '"future_\\u0065scaped"');

// Every kind of token the reader has a state for, written by hand: JSON.stringify never writes a \u
// escape of a printable character, "\/" or an upper-case exponent.
const STRING = String.raw`"\" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 ü ✓ 😀"`;
const NUMBERS = ['0', '-0', '7', '-12', '120', '3.25', '-0.5', '1e9', '2E+3', '6.02e-23', '-1.5E10'];
const TOKENS = `{"s": ${STRING}, "n\\u0075mbers": [${NUMBERS.join(', ')}], "literals": [true, false, null], "empty": [{}, [], ""],\n\t"nested": [[{"k": [[]]}]]}\r\n`;

/**
 * A small plan holding every kind of token where the reader builds it (the entry's fields, importing,
 * replace_paths, a variable's name), skips it (prior_state, an entry's unread fields) and probes it
 * (an unknown top-level key), keys with escapes among them. Split at every byte boundary, it cuts
 * every token kind at every place in every one of those states: that is what proves a cut anywhere is
 * handled, at a cost that grows with the square of the document's size.
 */
const COVERING = `{"format_version": "1.2", "terraform_version": "1.11.4", "variables": {"s\\u00e9cret ✓": {"value": "x"}},
"resource_changes": [{"address": "module.m.terraform_data.e[\\"k\\u00e9y ✓\\"]", "mode": "managed", "type": "terraform_data", "name": "e",
 "\\u0061ction_reason": "replace_because_tainted", "deposed": "7810d417", "unread": ${STRING}, "unread_number": -1.5E10,
 "change": {"actions": ["delete", "create"], "before": null, "importing": ${TOKENS}, "replace_paths": [[${STRING}, ${NUMBERS.join(', ')}], ["x", 0]]}},
 {"address": "${INPUTS_HASH_ADDRESS}", "change": {"actions": ["update"]}}],
"prior_state": ${TOKENS},
"configuration": {"root_module": {"variables": {"s\\u00e9cret ✓": {"sensitive": true}, "plain": {}}}},
"future_tokens": ${TOKENS}, "future_empty": [ ],
"applyable": true, "complete": true, "errored": false}`;

/**
 * Where a larger document is split in two: every byte of its first and last 32 bytes and of the 96
 * bytes from each marker (where the entries the reader builds start), and every 13th byte elsewhere
 * (a prime: the cuts fall on each position of a repeated structure in turn). Every byte of every
 * document would cost a read of the whole document per byte; that a cut anywhere in any token is
 * handled is proved on COVERING, and these prove it holds on real documents' shapes.
 */
function boundaries(bytes: Buffer, markers: string[]): number[] {
  const cuts = new Set<number>();
  const region = (from: number, length: number) => {
    for (let cut = Math.max(0, from); cut <= Math.min(bytes.length, from + length); cut++) cuts.add(cut);
  };
  region(0, 32);
  region(bytes.length - 32, 32);
  for (const marker of markers) {
    const at = bytes.indexOf(marker);
    assert.ok(at >= 0, `the document holds ${marker}`);
    region(at, 96);
  }
  for (let cut = 0; cut <= bytes.length; cut += 13) cuts.add(cut);
  return [...cuts].sort((a, b) => a - b);
}

/** Asserts that `bytes` split in two at each of `cuts` classifies as `expected`. */
async function assertSplitsClassify(bytes: Buffer, cuts: number[], expected: Classification, name: string) {
  for (const cut of cuts)
    assert.deepEqual(await classifyPlanStream(chunked(bytes, [cut]), ignore), expected, `${name} cut at ${cut}`);
}

const oneBytePerChunk = (bytes: Buffer) => classifyPlanStream(chunked(bytes, [...bytes.keys()]), ignore);

describe('classifyPlanStream equals the reference', () => {
  for (const file of corpusFiles().filter((f) => f !== 'invalid__plan.json')) {
    test(file, async () => {
      const bytes = readFileSync(corpusPath(file));
      const expected = classifyPlan(JSON.parse(bytes.toString('utf8')), ignore);
      assert.deepEqual(await classifyPlanStream(createReadStream(corpusPath(file)), ignore), expected);
      // In memory: a file read 7 bytes at a time costs a read call each.
      assert.deepEqual(await classifyPlanStream(chunked(bytes, everyNthByte(bytes, 7)), ignore), expected);
    });
  }

  test('the covering document holds every kind of token, built, skipped and probed', () => {
    for (const escape of '"\\/bfnrtu') assert.ok(STRING.includes(`\\${escape}`), `the escape \\${escape}`);
    assert.match(STRING, /\\ud[89ab][0-9a-f]{2}\\ud[c-f][0-9a-f]{2}/, 'a surrogate pair');
    assert.deepEqual(
      new Set([...(JSON.parse(STRING) as string)].map((c) => Buffer.byteLength(c))),
      new Set([1, 2, 3, 4]),
      'UTF-8 characters of 1, 2, 3 and 4 bytes',
    );
    const grammar: [string, RegExp][] = [
      ['a minus', /^-/],
      ['a zero', /^-?0$/],
      ['several integer digits', /^-?[1-9]\d/],
      ['a fraction', /\.\d/],
      ['an e', /e/],
      ['an E', /E/],
      ['an exponent with +', /[eE]\+\d/],
      ['an exponent with -', /[eE]-\d/],
      ['an exponent without a sign', /[eE]\d/],
    ];
    for (const [part, pattern] of grammar)
      assert.ok(
        NUMBERS.some((n) => pattern.test(n)),
        `a number with ${part}`,
      );
    for (const token of ['true', 'false', 'null', '{}', '[]', '""', '[[{', '\\u0075'])
      assert.ok(TOKENS.includes(token), token);
    for (const whitespace of [' ', '\t', '\r', '\n'])
      assert.ok(COVERING.includes(whitespace), JSON.stringify(whitespace));

    const expected = classifyPlan(JSON.parse(COVERING), ignore);
    // Built: the address and reason (keys with escapes), replace_paths' strings and numbers (-0 too), importing, the variable's name.
    assert.deepEqual(expected.destructive, [
      {
        address: 'module.m.terraform_data.e["kéy ✓"]',
        deposed: '7810d417',
        action: 'replace',
        actions: ['delete', 'create'],
        reason: 'replace_because_tainted',
        replacePaths: [
          [JSON.parse(STRING), ...NUMBERS.map(Number)],
          ['x', 0],
        ],
      },
    ]);
    assert.equal(expected.counts.import, 1);
    assert.deepEqual(expected.sensitiveVariables, ['sécret ✓']);
    // Probed: the key with content fails closed, the empty one does not.
    assert.deepEqual(
      expected.failClosed.map((why) => /"([^"]+)"/.exec(why)![1]),
      ['future_tokens'],
    );
    // Skipped: prior_state.
    assert.ok(COVERING.includes(`"prior_state": ${TOKENS}`));
  });

  test('the covering document split into two chunks at every byte boundary, and one byte per chunk', async () => {
    const bytes = Buffer.from(COVERING);
    const expected = classifyPlan(JSON.parse(COVERING), ignore);
    await assertSplitsClassify(bytes, [...bytes.keys(), bytes.length], expected, 'the covering document');
    assert.deepEqual(await oneBytePerChunk(bytes), expected);
  });

  test('corpus files and the sample plan split into two chunks at every byte of chosen regions and every 13th byte', async () => {
    for (const file of ['action_reason__plan.json', 'identity__plan.json', 'basic__plan-0.15.json']) {
      const bytes = readFileSync(corpusPath(file));
      await assertSplitsClassify(
        bytes,
        boundaries(bytes, ['"resource_changes"']),
        classifyPlan(JSON.parse(bytes.toString('utf8')), ignore),
        file,
      );
    }
    const bytes = Buffer.from(samplePlan);
    const expected = classifyPlan(JSON.parse(samplePlan), ignore);
    assert.equal(expected.destructiveTotal, 2);
    await assertSplitsClassify(
      bytes,
      boundaries(bytes, ['"resource_drift"', '"output_changes"']),
      expected,
      'the sample plan',
    );
  });

  test('newer content (actions, deferrals, unknown keys) split into two chunks at every byte of its new sections and every 13th byte', async () => {
    const expected = classifyPlan(JSON.parse(newerPlan), ignore);
    assert.equal(expected.actionsTotal, 4);
    assert.deepEqual(
      expected.failClosed.filter((why) => why.includes('top-level key')).map((why) => /"([^"]+)"/.exec(why)![1]),
      ['future_zero', 'future_string', 'future_nested', 'future_escaped'],
    );
    const bytes = Buffer.from(newerPlan);
    await assertSplitsClassify(
      bytes,
      boundaries(bytes, [
        '"deferred_changes"',
        '"deferred_action_invocations"',
        '"action_invocations"',
        '"future_empty_array"',
      ]),
      expected,
      'the newer plan',
    );
    assert.deepEqual(await oneBytePerChunk(bytes), expected);
    assert.ok(!JSON.stringify(expected).includes('S3CRET'));
  });

  test('one byte per chunk, and pretty-printed', async () => {
    const expected = classifyPlan(JSON.parse(samplePlan), ignore);
    assert.deepEqual(await oneBytePerChunk(Buffer.from(samplePlan)), expected);
    assert.deepEqual(await streamText(JSON.stringify(JSON.parse(samplePlan), null, '\t')), expected);
  });
});

describe("the values of changed places (a rotated secret's old value)", () => {
  test('resource changes, resource drift and output changes that update or replace hand their before and after on; the classification is the same', async () => {
    const values = (before: Json, after: Json) => ({
      before,
      after,
      after_unknown: {},
      before_sensitive: false,
      after_sensitive: false,
    });
    const document = planDocument({
      resource_drift: [
        resourceChange('terraform_data.d', ['update'], {}, values({ input: 'drift-old' }, { input: 'drift-new' })),
      ],
      resource_changes: [
        resourceChange('terraform_data.u', ['update'], {}, values({ input: 'update-old' }, { input: 'update-new' })),
        resourceChange(
          'terraform_data.r',
          ['delete', 'create'],
          {},
          values({ input: 'replace-old' }, { input: 'replace-new' }),
        ),
        resourceChange('terraform_data.c', ['create'], {}, values(null, { input: 'created' })),
      ],
      output_changes: {
        conn: { actions: ['update'], ...values('user:output-old', 'user:output-new') },
        same: { actions: ['no-op'], ...values('kept', 'kept') },
      },
    });
    const seen: unknown[][] = [];
    const text = JSON.stringify(document);
    const classified = await classifyPlanStream(chunked(Buffer.from(text), everyNthByte(Buffer.from(text), 13)), {
      ...ignore,
      onChangedValues: (before, after) => seen.push([before, after]),
    });
    assert.deepEqual(seen, [
      [{ input: 'drift-old' }, { input: 'drift-new' }],
      [{ input: 'update-old' }, { input: 'update-new' }],
      [{ input: 'replace-old' }, { input: 'replace-new' }],
      ['user:output-old', 'user:output-new'],
    ]);
    assert.deepEqual(classified, classifyPlan(JSON.parse(text), ignore));
  });
});

describe('broken JSON fails closed with the place it broke', () => {
  test('every truncation of the covering document is an error', async () => {
    const bytes = Buffer.from(COVERING);
    for (let length = 0; length < bytes.length; length++) {
      await assertUnreadable(
        classifyPlanStream(chunked(bytes.subarray(0, length), []), ignore),
        length === 0 ? /printed no plan document/ : /truncated/,
      );
    }
  });

  test('the corpus document with extra data after its end', async () => {
    await assertUnreadable(
      classifyPlanStream(createReadStream(corpusPath('invalid__plan.json')), ignore),
      /unexpected "}" after the end of the document at byte 15543$/,
    );
  });

  const malformed: [string, string, RegExp][] = [
    [
      'trailing comma in an object',
      '{"format_version":"1.2",}',
      /unexpected "}" where an object key was expected at byte 24/,
    ],
    ['trailing comma in an array', '{"resource_changes":[1,]}', /unexpected "]" where a value was expected at byte 23/],
    ['missing colon', '{"format_version" "1.2"}', /unexpected "\\"" where ":" was expected at byte 18/],
    ['missing comma', '{"a":1 "b":2}', /unexpected "\\"" where "," or "}" was expected at byte 7/],
    ['mismatched bracket', '{"a":[1}', /unexpected "}" where "," or "]" was expected at byte 7/],
    ['bad literal in a skipped value', '{"prior_state":{"x":tru}}', /invalid literal: expected "true" at byte 23/],
    ['bad number in a skipped value', '{"prior_state":{"x":-.5}}', /invalid number: unexpected "." at byte 21/],
    ['leading zero', '{"prior_state":01}', /unexpected "1" where "," or "}" was expected at byte 16/],
    ['bad escape', '{"planned_values":"a\\x"}', /invalid escape "\\x" in a string at byte 21/],
    ['bad unicode escape', '{"a":"\\u12G4"}', /invalid \\u escape: "G" is not a hex digit at byte 10/],
    ['raw newline in a string', '{"a":"x\ny"}', /control character byte 0x0a inside a string at byte 7/],
    ['single quotes', "{'a':1}", /unexpected "'" where an object key was expected at byte 1/],
    ['two documents', '{}{}', /unexpected "{" after the end of the document at byte 2/],
    ['a number cut short', '{"a":1e}', /invalid number: unexpected "}" at byte 7/],
  ];
  for (const [name, text, message] of malformed) {
    test(name, async () => {
      JSON.parse(JSON.stringify(text)); // the fixture itself is a valid JS string
      assert.throws(() => JSON.parse(text));
      await assertUnreadable(streamText(text), message);
      // Split anywhere, the same error at the same byte.
      for (let cut = 0; cut <= text.length; cut++) await assertUnreadable(streamText(text, [cut]), message);
    });
  }

  test('whitespace only is no document; a document that is not an object is unreadable', async () => {
    await assertUnreadable(streamText(' \n'), /printed no plan document/);
    await assertUnreadable(streamText('[]'), /the plan document is an array, expected a JSON object/);
    await assertUnreadable(streamText('42'), /the plan document is a number/);
  });

  test('errors reading the source pass through unchanged', async () => {
    async function* failing() {
      yield Buffer.from('{"format_version":');
      throw new Error('pipe broke');
    }
    await assert.rejects(classifyPlanStream(failing()), /pipe broke/);
  });
});

describe('summarizeState', () => {
  const state = (resources: unknown[]) =>
    JSON.stringify({
      version: 4,
      terraform_version: '1.11.4',
      serial: 7,
      lineage: '6297d1d2-0000-4000-8000-000000000000',
      outputs: { secret_out: { value: 'S3CRET', type: 'string', sensitive: true } },
      resources,
      check_results: null,
    });
  const hashResource = (hash: unknown, extra: object = {}) => ({
    mode: 'managed',
    type: 'terraform_data',
    name: 'captf_inputs_hash',
    provider: 'provider["terraform.io/builtin/terraform"]',
    instances: [
      {
        schema_version: 0,
        attributes: { id: 'x', input: { value: hash, type: 'string' }, output: { value: hash, type: 'string' } },
      },
    ],
    ...extra,
  });
  const other = {
    mode: 'managed',
    type: 'terraform_data',
    name: 'big',
    instances: [{ attributes: { input: { value: 'x'.repeat(5000), type: 'string' } } }],
  };

  // An inputs hash is 64 lowercase hex digits (contract.md); anything else is no record at all.
  const H = (c: string) => c.repeat(64);

  test('reads serial, lineage, version, the recorded inputs hash and the record as the state holds it', async () => {
    const text = state([other, hashResource(H('a'))]);
    const expected = {
      serial: 7,
      lineage: '6297d1d2-0000-4000-8000-000000000000',
      terraformVersion: '1.11.4',
      recordedInputsHash: H('a'),
      record: hashResource(H('a')),
    };
    assert.deepEqual(await summarizeState(chunked(Buffer.from(text), [])), expected);
    for (let cut = 0; cut <= text.length; cut += 7)
      assert.deepEqual(await summarizeState(chunked(Buffer.from(text), [cut, cut + 3])), expected);
  });

  test('only the root-module managed terraform_data.captf_inputs_hash counts', async () => {
    const look = async (resources: unknown[]) =>
      (await summarizeState(chunked(Buffer.from(state(resources)), []))).recordedInputsHash;
    assert.equal(await look([other]), null);
    assert.equal(await look([hashResource(H('1'), { module: 'module.m' })]), null);
    assert.equal(await look([{ ...hashResource(H('2')), mode: 'data' }]), null);
    assert.equal(await look([hashResource({ not: 'a string' })]), null);
    assert.equal(await look([hashResource('sha256:abc')]), null, 'not a sha256 in hex: no record');
    assert.equal(await look([hashResource(H('A'))]), null, 'upper-case hex is not the canonical form');
    assert.equal(await look([hashResource(H('3'), { module: 'module.m' }), hashResource(H('4'))]), H('4'));
  });

  test('empty input is no state', async () => {
    assert.deepEqual(await summarizeState(chunked(Buffer.alloc(0), [])), {
      serial: null,
      lineage: null,
      terraformVersion: null,
      recordedInputsHash: null,
    });
  });

  test('a truncated state is unreadable', async () => {
    await assert.rejects(
      summarizeState(chunked(Buffer.from(state([hashResource('h')]).slice(0, 100)), [])),
      (error: unknown) => {
        assert.ok(error instanceof RunnerError);
        assert.equal(error.kind, 'state');
        assert.equal(error.reason, 'StateUnreadable');
        assert.match(error.message, /truncated: it ends inside a string at byte 100/);
        return true;
      },
    );
  });
});

// A document larger than Node's largest string (1 GiB) is the benchmark's (bench/run.mjs, memory):
// here two sizes prove that the reader keeps nothing that grows with the document. 1 and 4 MiB prove
// it as 2 and 8 did (a reader that streams grows by < 1 MiB at either size), in half the time.
describe('a plan from gen-plan.mjs streams with memory that does not grow with its size', () => {
  /**
   * Passes `source` on, sampling live memory at every MiB of it: the run is sampled however fast it
   * goes, and where a document held would be largest (each sample is two full collections of the
   * whole process: tens of ms).
   */
  async function* sampledEveryMiB(source: AsyncIterable<Buffer>, sample: () => void) {
    let next = MiB;
    let passed = 0;
    for await (const chunk of source) {
      passed += chunk.length;
      if (passed >= next) {
        sample();
        next += MiB;
      }
      yield chunk;
    }
  }

  /** Classifies a generated document of `bytes` as it arrives from the generator's pipe; the generator's counts and the peak growth of live memory. */
  async function classifyGenerated(bytes: number) {
    const script = fileURLToPath(new URL('../../scripts/generators/gen-plan.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, '--bytes', String(bytes)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    // The progress samples do the work; the timer's (under load, many) are a backstop.
    const { value: result, growth } = await peakLiveGrowth(
      (sample) => classifyPlanStream(sampledEveryMiB(child.stdout, sample), ignore),
      2000,
    );
    assert.equal(await exited, 0);
    const expected = JSON.parse(stderr) as {
      bytes: number;
      counts: object;
      destructiveTotal: number;
      outputChanges: object;
      sensitiveVariables: string[];
    };
    assert.ok(expected.bytes >= bytes * 0.9, `the document has ${expected.bytes} bytes`);
    assert.deepEqual(result.counts, expected.counts);
    assert.equal(result.destructiveTotal, expected.destructiveTotal);
    assert.equal(result.destructive.length, 100);
    assert.deepEqual(result.outputChanges, expected.outputChanges);
    assert.deepEqual(result.sensitiveVariables, expected.sensitiveVariables);
    assert.deepEqual(result.failClosed, []);
    return growth;
  }

  // Sampled at every MiB, a reader that kept what it read would show 3 MiB more for the second; one
  // that streams shows well under 1 MiB of difference (what is live is one entry and a chunk or two).
  test('1 MiB and 4 MiB: the counts the generator promises, and 3 MiB more document adds < 1.5 MiB of live memory', async (t) => {
    const small = await classifyGenerated(MiB);
    const large = await classifyGenerated(4 * MiB);
    t.diagnostic(
      `live memory grew ${(small / MiB).toFixed(1)} MiB for 1 MiB, ${(large / MiB).toFixed(1)} MiB for 4 MiB`,
    );
    assert.ok(
      large - small < 1.5 * MiB,
      `3 MiB more document added ${((large - small) / MiB).toFixed(1)} MiB of live memory`,
    );
  });
});
