// The masker against the forms terraform 1.11.4 printed secrets in (each text below is what it
// printed, captured from a plan, a failed plan's diagnostics and an output; test/e2e/secret-forms.test.ts
// runs the real terraform over generated secrets).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LineMasker, MASK, Masker } from '../../src/output/mask.ts';

const SECRET = 'CANARY-ls\u2028tail CANARY-ctl\x01tail q"b\\s ${x} %{y} <&> \x7f \x1b \u00a0 \u0085 end';

function masker(...secrets: string[]): Masker {
  const m = new Masker();
  for (const secret of secrets) m.add(secret, 'a value in sensitive.tfvars.json');
  return m;
}

describe('masking the forms terraform prints a secret in', () => {
  it('Go-quoted (a plan value, an output, a diagnostic value): \\x01, \\x7f, \\u2028, \\u00a0, \\u0085', () => {
    const printed = '      + input  = "CANARY-ls\\u2028tail CANARY-ctl\\x01tail q\\"b\\\\s ${x} %{y} <&> \\x7f \\x1b \\u00a0 \\u0085 end"';
    assert.equal(masker(SECRET).mask(printed), `      + input  = "${MASK}"`);
  });

  it('jsonencode inside a Go-quoted string (Go JSON escapes, then quoted again)', () => {
    const m = masker('CANARY-e\u0301 \x01 ${x} %{y} \u2028 <&> "q" \\b \u{1F600}');
    const printed = '      + input  = "x \\"CANARY-\u00e9 \\\\u0001 ${x} %{y} \\\\u2028 \\\\u003c\\\\u0026\\\\u003e \\\\\\"q\\\\\\" \\\\\\\\b \u{1F600}\\" y"';
    assert.equal(m.mask(printed), `      + input  = "x \\"${MASK}\\" y"`);
  });

  it('HCL-escaped (provider::terraform::encode_expr) inside a Go-quoted string: $${, %%{, \\u0001', () => {
    const m = masker('CANARY-e\u0301 \x01 ${x} %{y} \u2028 <&> "q" \\b \u{1F600}');
    const printed = '      + input  = "\\"CANARY-\u00e9 \\\\u0001 $${x} %%{y} \\\\u2028 <&> \\\\\\"q\\\\\\" \\\\\\\\b \u{1F600}\\""';
    assert.equal(m.mask(printed), `      + input  = "\\"${MASK}\\""`);
  });

  it('NFC: terraform composes e + U+0301 into é', () => {
    assert.equal(masker('CANARY-e\u0301-tail').mask('pw = "CANARY-\u00e9-tail"'), `pw = "${MASK}"`);
  });

  it('a heredoc: the value trimmed, each line indented, and each line on its own (a line diff)', () => {
    const m = masker('  first line of it\nsecond line here\n');
    assert.equal(m.mask('      + input  = <<-EOT\n            first line of it\n            second line here\n        EOT'), `      + input  = <<-EOT\n            ${MASK}\n        EOT`);
    assert.equal(m.mask('          + second line here'), `          + ${MASK}`);
  });

  it('a diagnostic word-wrapped at 78 columns, and joined again by the runner', () => {
    const m = masker('CANARY correct horse battery staple, a long passphrase that goes past the wrap column');
    const wrapped = 'The database password CANARY correct horse battery staple, a long passphrase\nthat goes past the wrap column is refused';
    assert.equal(m.mask(wrapped), `The database password ${MASK} is refused`);
    assert.equal(m.mask(wrapped.replace('\n', ' ')), `The database password ${MASK} is refused`);
    // The runner's JSON log line of a message holding the wrapped text.
    assert.equal(m.mask(JSON.stringify(wrapped)), `"The database password ${MASK} is refused"`);
  });

  it('JSON-escaped, and JSON of a Go-quoted value (a log line that quotes a plan line)', () => {
    const m = masker(SECRET);
    assert.equal(m.mask(JSON.stringify({ v: SECRET })), `{"v":"${MASK}"}`);
    const goQuoted = '"CANARY-ls\\u2028tail CANARY-ctl\\x01tail q\\"b\\\\s ${x} %{y} <&> \\x7f \\x1b \\u00a0 \\u0085 end"';
    assert.equal(m.mask(JSON.stringify(goQuoted)), `"\\"${MASK}\\""`);
  });

  it('ordinary text is left alone, and a secret with runs of backslashes does not make matching slow', () => {
    const m = masker('\\'.repeat(40) + 'x', 'ab c');
    assert.equal(m.mask('the plan has 3 to add'), 'the plan has 3 to add');
    assert.equal(m.mask('\\'.repeat(20_000)), '\\'.repeat(20_000));
    assert.deepEqual(m.tooShort, []);
  });
});

describe('masking a stream of lines', () => {
  const run = (m: Masker, lines: string[]) => {
    const stream = new LineMasker(m);
    const out: (string | undefined)[] = lines.map((line) => stream.push(line));
    out.push(stream.end());
    return out;
  };

  it('holds a line that ends with the beginning of a secret until the next one shows whether it goes on', () => {
    const m = masker('CANARY correct horse battery staple, a long passphrase that goes past the wrap column');
    assert.deepEqual(run(m, ['Error: refused', 'The database password CANARY correct horse battery staple, a long passphrase', 'that goes past the wrap column is refused', 'done']), [
      'Error: refused',
      undefined,
      `The database password ${MASK} is refused`,
      'done',
      undefined,
    ]);
  });

  it('lets a held line go, unmasked, when the next one does not continue the secret, and at the end of the stream', () => {
    const m = masker('CANARY correct horse battery staple');
    assert.deepEqual(run(m, ['it said CANARY correct', 'something else', 'and CANARY']), [undefined, 'it said CANARY correct\nsomething else', undefined, 'and CANARY']);
  });

  it('a heredoc of a multi-line secret', () => {
    const m = masker('-----BEGIN KEY-----\nQUJDREVGR0g=\n-----END KEY-----');
    const out = run(m, ['      + input = <<-EOT', '            -----BEGIN KEY-----', '            QUJDREVGR0g=', '            -----END KEY-----', '        EOT']);
    assert.equal(out.filter((text) => text !== undefined).join('\n'), `      + input = <<-EOT\n            ${MASK}\n        EOT`);
  });
});
