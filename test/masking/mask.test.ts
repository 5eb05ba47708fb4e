// The masker on secrets that defeat one combined regular expression or a whole-value match.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MASK, Masker } from '../../src/masking/mask.ts';
import { maskResult, PROTOCOL_WORD_WARNING } from '../../src/masking/mask-result.ts';
import type { Result } from '../../src/schemas/result.ts';

const masker = (...secrets: string[]) => {
  const m = new Masker();
  for (const secret of secrets) m.add(secret, 'a value in sensitive.tfvars.json');
  return m;
};

describe('large and repetitive secrets', () => {
  it('a 45 KB repetitive value, a 120 KB one and 10 KB of quotes, backslashes and non-ASCII are masked in their printed forms, beside a short one', () => {
    const repetitive = 'a1'.repeat(22_500);
    const long = 'A'.repeat(120_000);
    const mixed = Array.from({ length: 10_000 }, (_, i) => ['"', '\\', 'é', 'x', '\u2028', "'"][i % 6]).join('');
    const m = masker(repetitive, long, mixed, 'CANARYOTHER-db-password');
    for (const secret of [repetitive, long, mixed]) {
      assert.equal(m.mask(`v = ${JSON.stringify(secret)} and CANARYOTHER-db-password`), `v = "${MASK}" and ${MASK}`);
    }
    const goQuoted = `"${mixed.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\u2028', '\\u2028')}"`;
    assert.equal(m.mask(`+ input = ${goQuoted}`), `+ input = "${MASK}"`);
    assert.equal(m.unmaskable, 0);
  });

  it('a pattern that runs out of backtracking stack on a long line is split from the others, then falls back to literal forms, instead of throwing', () => {
    const m = masker('abcd efgh', 'CANARY-other-secret');
    const line = `CANARY-other-secret abcd efgh${' '.repeat(10_000_000)}x`;
    assert.equal(m.mask(line).slice(0, 2 * MASK.length + 1), `${MASK} ${MASK}`);
    assert.equal(m.mask('then abcd efgh again'), `then ${MASK} again`);
    assert.equal(m.unmaskable, 0);
  });
});

describe("escapings past the patterns' depth", () => {
  // An escaping that lengthens a form by a few characters only (an HTML entity's `&` escaped again)
  // once took a long text as many levels deep as it held characters: minutes in one mask (a seed of
  // the e2e property test hung the run). The levels are bounded; the text's length no longer sets them.
  it('a secret with `${` and `%{` and a 2 MB text: masked at once, three escapes deep too', { timeout: 60_000 }, () => {
    const secret = 'Tk9${pw}%{x}Canary-31';
    const m = masker(secret);
    const threeDeep = JSON.stringify(JSON.stringify(JSON.stringify(secret)));
    const text = `${'x'.repeat(2_000_000)} ${threeDeep}`;
    assert.ok(!m.mask(text).includes('Canary'));
    assert.equal(m.unmaskable, 0);
  });
});

describe('secrets that overlap', () => {
  it("one that starts inside another one's match is masked too: the place is masked as one", () => {
    const m = masker('CANARY-left-part', 'part-and-right-CANARY');
    assert.equal(m.mask('x CANARY-left-part-and-right-CANARY y'), `x ${MASK} y`);
  });

  it('a line of a multi-line secret that starts like shorter secrets (generated secrets of test/e2e/secret-forms.test.ts, seed 879578043)', () => {
    const m = masker(
      'Qtriito8D QV8Cqf1i0 Qn3p0cXY7\nQtoString\\nQtoString\u0007Qar12wdcc',
      JSON.stringify({
        type: 'service_account',
        QtoStringkey: 'QtoString QtoString\u3000Qe4eAE5X2',
        nested: {
          list: ['QtoString  QtoString\r\nQtoString QK1vAa236', { field: 'Q3pxk5bQx\bQtoString\u000bQacEJLW22' }],
        },
      }),
    );
    assert.equal(
      m.mask('                          QtoString\\nQtoString\u0007Qar12wdcc'),
      `                          ${MASK}`,
    );
  });
});

describe('JSON documents', () => {
  it('each string leaf and key of 4+ characters, nested documents too, is masked on its own', () => {
    const m = masker(
      JSON.stringify({
        type: 'service_account',
        private_key: 'CANARYPK-1',
        id: 7,
        inner: JSON.stringify({ token: 'CANARYNESTED-2' }),
        list: ['CANARYITEM-3'],
      }),
    );
    assert.equal(m.mask('+ private_key = "CANARYPK-1"'), `+ ${MASK} = "${MASK}"`);
    assert.equal(m.mask('CANARYNESTED-2 CANARYITEM-3 id 7'), `${MASK} ${MASK} id 7`);
  });
});

describe('rotated secrets', () => {
  it('the value before at the place of a secret after is learned; other values before are not', () => {
    const m = masker('CANARYNEW-2');
    m.addOldValues(
      { token: 'CANARYOLD-1', name: 'c1', list: ['kept-value'] },
      { token: 'CANARYNEW-2', name: 'c2', list: ['kept-value'] },
    );
    assert.equal(m.mask('"CANARYOLD-1" -> "CANARYNEW-2"; "c1" -> "c2"'), `"${MASK}" -> "${MASK}"; "c1" -> "c2"`);
  });
});

describe('rotated secrets in a part of a value', () => {
  it('the old value in a string that holds the secret among other text, in any form (an output `user:OLD` -> `user:NEW`, a URL)', () => {
    const m = masker('CANARYNEW-2/x');
    m.addOldValues(
      { conn: 'user:CANARYOLD-1/y', url: 'postgres://app:OTHEROLD-3%2Fz@db' },
      { conn: 'user:CANARYNEW-2/x', url: 'postgres://app:CANARYNEW-2%2Fx@db' },
    );
    assert.equal(
      m.mask('~ conn = "user:CANARYOLD-1/y" -> "user:CANARYNEW-2/x"'),
      `~ conn = "user:${MASK}" -> "user:${MASK}"`,
    );
    assert.equal(m.mask('postgres://app:OTHEROLD-3%2Fz@db'), `postgres://app:${MASK}@db`);
  });
});

describe('protocol words', () => {
  it("the runner's own fields keep their words, with a warning; the rest is masked", () => {
    const result = {
      apiVersion: 'runner.captf.io/v1',
      op: 'apply',
      outcome: 'succeeded',
      reason: 'ApplySucceeded',
      message: 'apply succeeded',
      exitCode: 0,
      runnerVersion: '0',
      object: { kind: 'cluster' },
      applied: true,
      mayHaveChanged: true,
      steps: [{ name: 'init', status: 'ok' }],
      annotations: { 'captf.io/outcome': 'succeeded', 'captf.io/reason': 'ApplySucceeded' },
      warnings: [],
      startedAt: '',
      finishedAt: '',
    } as unknown as Result;
    const masked = maskResult(masker('succeeded', 'ApplySucceeded', 'init', 'cluster'), result);
    assert.deepEqual(
      [masked.op, masked.outcome, masked.reason, masked.object.kind, masked.steps[0]!.name, masked.annotations],
      ['apply', 'succeeded', 'ApplySucceeded', 'cluster', 'init', result.annotations],
    );
    assert.equal(masked.message, `apply ${MASK}`);
    assert.deepEqual(masked.warnings, [PROTOCOL_WORD_WARNING]);
    assert.deepEqual(maskResult(masker('unrelated-secret'), result).warnings, []);
  });
});
