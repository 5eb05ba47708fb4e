// The masker against the forms terraform 1.11.4 printed secrets in (each text below is what it
// printed, captured from a plan, a failed plan's diagnostics and an output; test/e2e/secret-forms.test.ts
// runs the real terraform over generated secrets).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LineMasker, MASK, Masker, maskValue } from '../../src/masking/mask.ts';
import { casedForms, goLower, goUpper } from '../../src/masking/go-case.ts';
import { escapedDeeper, trimGoSpace } from '../../src/masking/secret-forms.ts';
import { runs } from '../support/property-runs.ts';

const SECRET = 'CANARY-ls\u2028tail CANARY-ctl\x01tail q"b\\s ${x} %{y} <&> \x7f \x1b \u00a0 \u0085 end';

function masker(...secrets: string[]): Masker {
  const m = new Masker();
  for (const secret of secrets) m.add(secret, 'a value in sensitive.tfvars.json');
  return m;
}

describe('masking the forms terraform prints a secret in', () => {
  it('Go-quoted (a plan value, an output, a diagnostic value): \\x01, \\x7f, \\u2028, \\u00a0, \\u0085', () => {
    const printed =
      '      + input  = "CANARY-ls\\u2028tail CANARY-ctl\\x01tail q\\"b\\\\s ${x} %{y} <&> \\x7f \\x1b \\u00a0 \\u0085 end"';
    assert.equal(masker(SECRET).mask(printed), `      + input  = "${MASK}"`);
  });

  it('jsonencode inside a Go-quoted string (Go JSON escapes, then quoted again)', () => {
    const m = masker('CANARY-e\u0301 \x01 ${x} %{y} \u2028 <&> "q" \\b \u{1F600}');
    const printed =
      '      + input  = "x \\"CANARY-\u00e9 \\\\u0001 ${x} %{y} \\\\u2028 \\\\u003c\\\\u0026\\\\u003e \\\\\\"q\\\\\\" \\\\\\\\b \u{1F600}\\" y"';
    assert.equal(m.mask(printed), `      + input  = "x \\"${MASK}\\" y"`);
  });

  it('HCL-escaped (provider::terraform::encode_expr) inside a Go-quoted string: $${, %%{, \\u0001', () => {
    const m = masker('CANARY-e\u0301 \x01 ${x} %{y} \u2028 <&> "q" \\b \u{1F600}');
    const printed =
      '      + input  = "\\"CANARY-\u00e9 \\\\u0001 $${x} %%{y} \\\\u2028 <&> \\\\\\"q\\\\\\" \\\\\\\\b \u{1F600}\\""';
    assert.equal(m.mask(printed), `      + input  = "\\"${MASK}\\""`);
  });

  it('NFC: terraform composes e + U+0301 into é', () => {
    assert.equal(masker('CANARY-e\u0301-tail').mask('pw = "CANARY-\u00e9-tail"'), `pw = "${MASK}"`);
  });

  it('a heredoc: the value trimmed, each line indented, and each line on its own (a line diff)', () => {
    const m = masker('  first line of it\nsecond line here\n');
    assert.equal(
      m.mask('      + input  = <<-EOT\n            first line of it\n            second line here\n        EOT'),
      `      + input  = <<-EOT\n            ${MASK}\n        EOT`,
    );
    assert.equal(m.mask('          + second line here'), `          + ${MASK}`);
  });

  it('a diagnostic word-wrapped at 78 columns, and joined again by the runner', () => {
    const m = masker('CANARY correct horse battery staple, a long passphrase that goes past the wrap column');
    const wrapped =
      'The database password CANARY correct horse battery staple, a long passphrase\nthat goes past the wrap column is refused';
    assert.equal(m.mask(wrapped), `The database password ${MASK} is refused`);
    assert.equal(m.mask(wrapped.replace('\n', ' ')), `The database password ${MASK} is refused`);
    // The runner's JSON log line of a message holding the wrapped text.
    assert.equal(m.mask(JSON.stringify(wrapped)), `"The database password ${MASK} is refused"`);
  });

  it('JSON-escaped, and JSON of a Go-quoted value (a log line that quotes a plan line)', () => {
    const m = masker(SECRET);
    assert.equal(m.mask(JSON.stringify({ v: SECRET })), `{"v":"${MASK}"}`);
    const goQuoted =
      '"CANARY-ls\\u2028tail CANARY-ctl\\x01tail q\\"b\\\\s ${x} %{y} <&> \\x7f \\x1b \\u00a0 \\u0085 end"';
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
    assert.deepEqual(
      run(m, [
        'Error: refused',
        'The database password CANARY correct horse battery staple, a long passphrase',
        'that goes past the wrap column is refused',
        'done',
      ]),
      ['Error: refused', undefined, `The database password ${MASK} is refused`, 'done', undefined],
    );
  });

  it('lets a held line go, unmasked, when the next one does not continue the secret, and at the end of the stream', () => {
    const m = masker('CANARY correct horse battery staple');
    assert.deepEqual(run(m, ['it said CANARY correct', 'something else', 'and CANARY']), [
      undefined,
      'it said CANARY correct\nsomething else',
      undefined,
      'and CANARY',
    ]);
  });

  it('a heredoc of a multi-line secret', () => {
    const m = masker('-----BEGIN KEY-----\nQUJDREVGR0g=\n-----END KEY-----');
    const out = run(m, [
      '      + input = <<-EOT',
      '            -----BEGIN KEY-----',
      '            QUJDREVGR0g=',
      '            -----END KEY-----',
      '        EOT',
    ]);
    assert.equal(
      out.filter((text) => text !== undefined).join('\n'),
      `      + input = <<-EOT\n            ${MASK}\n        EOT`,
    );
  });

  it('lines pushed as one batch (a read of the pipe) come out as they do one at a time: a secret across them masked, a line ending with its beginning held', () => {
    const m = masker('CANARY correct horse battery staple, a long passphrase that goes past the wrap column');
    const lines = [
      'Error: refused',
      'The database password CANARY correct horse battery staple, a long passphrase',
      'that goes past the wrap column is refused',
      'done',
      'and CANARY correct',
    ];
    const oneByOne = run(m, lines).filter((text) => text !== undefined);
    const batched = new LineMasker(m);
    assert.equal(batched.push(...lines), `Error: refused\nThe database password ${MASK} is refused\ndone`);
    assert.equal(batched.end(), 'and CANARY correct');
    assert.deepEqual(oneByOne, [
      'Error: refused',
      `The database password ${MASK} is refused`,
      'done',
      'and CANARY correct',
    ]);
  });
});

describe('the encodings a secret travels in (base64, percent-encoding, case, hex)', () => {
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

  it('the shapes of cluster modules: a cloud-init document in base64, a database URL, upper case, base64 of the value', () => {
    const m = masker('Tok3n/Canary+q7@x');
    assert.equal(
      m.mask('+ input = "postgres://app:Tok3n%2FCanary%2Bq7%40x@db:5432/app"'),
      `+ input = "postgres://app:${MASK}@db:5432/app"`,
    );
    assert.equal(m.mask('+ input = "TOK3N/CANARY+Q7@X"'), `+ input = "${MASK}"`);
    assert.equal(m.mask(`+ input = "${b64('Tok3n/Canary+q7@x')}"`), `+ input = "${MASK}"`);
    // The characters the value shares with its neighbours stay: they hold a few bits of it at most.
    for (const prefix of ['#cloud-config\ntoken: ', '#cloud-config\ntoken: a', '#cloud-config\ntoken: ab']) {
      const masked = m.mask(`+ user_data = "${b64(`${prefix}Tok3n/Canary+q7@x\n`)}"`);
      assert.match(
        masked,
        /^\+ user_data = "I2Nsb3VkLWNvbmZpZwp0b2tlbjog[A-Za-z0-9]{0,3}\(sensitive value\)[A-Za-z0-9]{0,2}=*"$/,
        masked,
      );
    }
  });

  it('percent-encoding in either hex case, a space as + or %20, as JavaScript encodes it too; hex in either case', () => {
    const m = masker('pa ss/wörd!');
    for (const encoded of ['pa+ss%2Fw%C3%B6rd%21', 'pa%20ss%2fw%c3%b6rd%21', encodeURIComponent('pa ss/wörd!')])
      assert.equal(m.mask(`u=${encoded}&x`), `u=${MASK}&x`, encoded);
    const hex = Buffer.from('pa ss/wörd!').toString('hex');
    assert.equal(m.mask(`${hex} ${hex.toUpperCase()}`), `${MASK} ${MASK}`);
  });

  it('every encoded form in any case: upper(urlencode()), lower(base64encode()), title() of either', () => {
    const m = masker('Pa55 w0rd/Key+Tail');
    const encoded = { url: 'Pa55+w0rd%2FKey%2BTail', base64: b64('Pa55 w0rd/Key+Tail') };
    const title = (s: string) =>
      s.replace(/(^|[^A-Za-z0-9_])([a-z])/g, (_, before, letter) => before + letter.toUpperCase());
    for (const form of Object.values(encoded))
      for (const printed of [form.toUpperCase(), form.toLowerCase(), title(form.toLowerCase())])
        assert.equal(m.mask(`x = "${printed}"`), `x = "${MASK}"`, printed);
    // The encodings of the value in upper and in lower case: base64encode(upper(…)), urlencode(lower(…)).
    for (const printed of [b64('PA55 W0RD/KEY+TAIL'), 'pa55+w0rd%2Fkey%2Btail'])
      assert.equal(m.mask(`x = "${printed}"`), `x = "${MASK}"`, printed);
    // At another offset: the characters the value shares with its neighbour ("#") stay.
    assert.equal(m.mask(`x = "${b64('#pa55 w0rd/key+tail')}"`), `x = "I3${MASK}"`);
    // A percent-encoding shorter than the anchored search's 6 characters, matched literally: in any case too.
    assert.equal(masker('ab cd').mask('u=Ab+Cd&v=AB+CD'), `u=${MASK}&v=${MASK}`);
  });

  it('base64 percent-encoded (urlencode(base64encode(…)): a token in a query string), in any case', () => {
    const m = masker('Tok3n/Canary+q7@x>>??~~');
    const encoded = encodeURIComponent(b64('Tok3n/Canary+q7@x>>??~~'));
    assert.match(encoded, /%2B.*%2F.*%3D$/, 'the test value has every character the percent-encoding changes');
    assert.equal(m.mask(`q=${encoded}&x`), `q=${MASK}&x`);
    assert.equal(m.mask(`q=${encoded.toLowerCase()}&x`), `q=${MASK}&x`);
  });

  it('the URL alphabet, with and without padding', () => {
    const m = masker('a>b?c>d?e~~');
    const url = (text: string) => b64(text).replaceAll('+', '-').replaceAll('/', '_');
    assert.ok(
      b64('a>b?c>d?e~~').includes('+') || b64('a>b?c>d?e~~').includes('/'),
      'the test value has characters the URL alphabet changes',
    );
    assert.equal(m.mask(url('a>b?c>d?e~~')), MASK);
    assert.equal(m.mask(url('a>b?c>d?e~~').replace(/=+$/, '')), MASK);
  });

  it("upper and lower case as Go's strings.ToUpper and ToLower make them, one character for one: ß stays", () => {
    assert.deepEqual(casedForms('Straße é'), ['Straße é', 'STRAßE É', 'straße é']);
    assert.deepEqual(casedForms('abc1'), ['abc1', 'ABC1']);
  });

  it("terraform's own mapping where JavaScript's special casing differs (terraform 1.11.4's console): İ lowers to i, ᾀ uppers to ᾈ, Σ lowers to σ anywhere", () => {
    assert.deepEqual(casedForms('İzmir-Parola-7q9Kx'), [
      'İzmir-Parola-7q9Kx',
      'İZMIR-PAROLA-7Q9KX',
      'izmir-parola-7q9kx',
    ]);
    assert.equal(goUpper('kırmızı-şifre-4tz8q'), 'KIRMIZI-ŞIFRE-4TZ8Q');
    assert.equal(goUpper('ᾀᾳῃῳßŉǰ'), 'ᾈᾼῌῼßŉǰ');
    assert.equal(goLower('ẞΣKİ ΟΔΟΣ'), 'ßσki οδοσ');
  });

  it('escaping past the patterns’ depth: each level escapes every form once more; a form no escaper changes has none', () => {
    assert.deepEqual(escapedDeeper(['Xk9\\"pw']), ['Xk9\\\\\\"pw']);
    assert.deepEqual(escapedDeeper(['abc 123']), []);
  });

  it('an encoded form shorter than 6 characters is not masked: the value itself still is', () => {
    const m = masker('abcd');
    // At offset 1 only 4 characters depend on "abcd" alone: in a blob of base64 they would be anywhere.
    assert.equal(m.mask(b64('xabcd')), b64('xabcd'));
    assert.equal(m.mask('ABCD abcd'), `${MASK} ${MASK}`);
  });

  it('a percent-encoding is masked at any length the value is: "aa aa" as "aa+aa" (never shorter than the value)', () => {
    const m = masker('aa aa');
    assert.equal(m.mask('u=aa+aa&v=aa%20aa'), `u=${MASK}&v=${MASK}`);
    assert.equal(m.mask(JSON.stringify({ url: 'db://x:aa+aa@h' })), JSON.stringify({ url: `db://x:${MASK}@h` }));
  });

  it('a value too long for one pattern (above 2,048 characters) is masked in its encodings by plain strings', () => {
    const long = `${'Zq9/+ '.repeat(500)}end`;
    const m = masker(long);
    assert.equal(m.mask(`"${b64(long)}"`), `"${MASK}"`);
    assert.equal(m.mask(`"${encodeURIComponent(long)}"`), `"${MASK}"`);
    assert.equal(m.mask(`"${long.toUpperCase()}"`), `"${MASK}"`);
    // title(): the letter after each separator in upper case, the rest as they were.
    assert.equal(m.mask(`"${long.replace(/ z/g, ' Z')}"`), `"${MASK}"`);
    assert.equal(m.mask(`"${b64(long).toLowerCase()}"`), `"${MASK}"`);
    assert.equal(m.mask(Buffer.from(long).toString('hex')), MASK);
    assert.equal(m.unmaskable, 0);
  });

  it("a secret's hex form is masked in a result even where it looks like a sha256", () => {
    const secret = 'k'.repeat(32);
    const hex = Buffer.from(secret).toString('hex');
    assert.equal(hex.length, 64);
    const m = masker(secret);
    assert.deepEqual(maskValue(m, { hash: 'f'.repeat(64), dump: hex, upper: hex.toUpperCase() }), {
      hash: 'f'.repeat(64),
      dump: MASK,
      upper: MASK,
    });
  });
});

describe('property: a secret at any offset of a longer text, through each encoding, never shows', () => {
  /** Characters whose upper and lower case are one character each (as Go's strings.ToUpper keeps them). */
  const char = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789') },
    { weight: 3, arbitrary: fc.constantFrom(...' !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~', '\n', '\t') },
    { weight: 1, arbitrary: fc.constantFrom('é', 'Ω', 'ж', '\u2028', '\u00a0', '€', '\u{1F600}', '中') },
  );
  const text = (minLength: number, maxLength: number) =>
    fc.array(char, { minLength, maxLength }).map((chars) => chars.join(''));
  /** At least 5 characters after trimming: every base64 piece of it is then 6 characters or more. */
  const secret = text(5, 40).filter((s) => trimGoSpace(s).length >= 5);
  const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
  const urlAlphabet = (s: string) => s.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
  const goQueryEscape = (s: string) =>
    [...s]
      .map((c) =>
        /^[A-Za-z0-9\-_.~]$/.test(c)
          ? c
          : c === ' '
            ? '+'
            : [...Buffer.from(c)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
      )
      .join('');

  /** Every other ASCII letter in upper case, the rest in lower. */
  const mixedCase = (s: string) => {
    let upper = false;
    return s.replace(/[A-Za-z]/g, (letter) => ((upper = !upper) ? letter.toUpperCase() : letter.toLowerCase()));
  };

  /** Each encoding of prefix + secret + suffix, and the part of it that is the secret's alone (for base64: the characters no neighbour shares). */
  function encodings(prefix: string, value: string, suffix: string): { name: string; text: string; part: string }[] {
    const whole = prefix + value + suffix;
    const b64 = Buffer.from(whole).toString('base64');
    const [from, to] = [Math.ceil((8 * bytes(prefix)) / 6), Math.floor((8 * (bytes(prefix) + bytes(value))) / 6)];
    const encoded = [
      { name: 'base64', text: b64, part: b64.slice(from, to) },
      { name: 'base64 unpadded', text: b64.replace(/=+$/, ''), part: b64.slice(from, to) },
      { name: 'base64url', text: urlAlphabet(b64), part: urlAlphabet(b64.slice(from, to)) },
      { name: 'urlencode', text: goQueryEscape(whole), part: goQueryEscape(value) },
      { name: 'encodeURIComponent', text: encodeURIComponent(whole), part: encodeURIComponent(value) },
      { name: 'hex', text: Buffer.from(whole).toString('hex'), part: Buffer.from(value).toString('hex') },
    ];
    // Each encoding (all ASCII) through a change of case too: upper(), lower(), and a mix as title() leaves.
    const cases = [
      { name: 'upper', change: (s: string) => s.toUpperCase() },
      { name: 'lower', change: (s: string) => s.toLowerCase() },
      { name: 'mixed case', change: mixedCase },
    ];
    return [
      ...encoded,
      ...encoded.flatMap(({ name, text, part }) =>
        cases.map(({ name: changed, change }) => ({
          name: `${changed}(${name})`,
          text: change(text),
          part: change(part),
        })),
      ),
      { name: 'upper', text: whole.toUpperCase(), part: value.toUpperCase() },
      { name: 'lower', text: whole.toLowerCase(), part: value.toLowerCase() },
    ];
  }

  it('in the encoded text as is and JSON-quoted, whatever the neighbours', () => {
    fc.assert(
      fc.property(secret, text(0, 12), text(0, 12), (value, prefix, suffix) => {
        const m = masker(value);
        for (const { name, text: encoded, part } of encodings(prefix, value, suffix)) {
          for (const printed of [encoded, JSON.stringify(encoded)]) {
            const masked = m.mask(printed);
            assert.ok(
              !masked.includes(part) && !masked.includes(JSON.stringify(part).slice(1, -1)),
              `${name} of ${JSON.stringify(prefix)} + ${JSON.stringify(value)} + ${JSON.stringify(suffix)}: ${JSON.stringify(part)} shows in ${JSON.stringify(masked)}`,
            );
          }
        }
      }),
      { numRuns: runs(150) },
    );
  });
});
