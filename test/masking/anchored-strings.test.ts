// The base64 and hex forms of the secrets, found in one pass (src/masking/anchored-strings.ts),
// against a plain search of every string at every place.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AnchoredStrings, replaceRanges } from '../../src/masking/anchored-strings.ts';
import { runs } from '../support/property-runs.ts';

const index = (...forms: string[]) => {
  const strings = new AnchoredStrings();
  for (const form of forms) strings.add(form);
  return strings;
};

/** The reference: at each place, the longest string that starts there, in any case (the alphabet is ASCII). */
function reference(text: string, forms: readonly string[]): { start: number; end: number }[] {
  const longestFirst = [...forms].sort((a, b) => b.length - a.length);
  return [...text].flatMap((_, at) => {
    const form = longestFirst.find((candidate) => text.toLowerCase().startsWith(candidate.toLowerCase(), at));
    return form ? [{ start: at, end: at + form.length }] : [];
  });
}

describe('strings of the base64 alphabets found by their anchors', () => {
  it('the longest at each place, overlapping places too; inside longer runs and beside other characters', () => {
    const strings = index('SGVsbG8gd29y', 'SGVsbG8gd29ybGQ=', 'bG8gd29ybGQ', '68656c6c6f');
    const text = 'x"SGVsbG8gd29ybGQ=" aaSGVsbG8gd29yXX 68656c6c6f68656c6c6f.';
    assert.deepEqual(
      strings.find(text),
      reference(text, ['SGVsbG8gd29y', 'SGVsbG8gd29ybGQ=', 'bG8gd29ybGQ', '68656c6c6f']),
    );
    assert.deepEqual(
      strings.find(text).map(({ start, end }) => text.slice(start, end)),
      ['SGVsbG8gd29ybGQ=', 'bG8gd29ybGQ', 'SGVsbG8gd29y', '68656c6c6f', '68656c6c6f'],
    );
    assert.equal(
      replaceRanges(
        'abcdef',
        [
          { start: 1, end: 3 },
          { start: 4, end: 5 },
        ],
        '*',
      ),
      'a*d*f',
    );
  });

  it('in any case: upper, lower, and a mix (what title() leaves); the same place once whatever case the string was added in', () => {
    const strings = index('SGVsbG8gd29y', 'sgvsbg8gd29y', 'pa55%2fkey');
    const text = 'SGVSBG8GD29Y sgvsbg8gd29y Pa55%2FKey PA55%2fKEY pa55%2fke';
    assert.deepEqual(
      strings.find(text).map(({ start, end }) => text.slice(start, end)),
      ['SGVSBG8GD29Y', 'sgvsbg8gd29y', 'Pa55%2FKey', 'PA55%2fKEY'],
    );
  });

  it('refuses a string shorter than the anchor or outside the alphabets', () => {
    assert.throws(() => index('abc'));
    assert.throws(() => index('abc def gh'));
  });

  it('property: the same places as the plain search, over texts of few characters (many near misses and hash collisions)', () => {
    const chars = fc.constantFrom('a', 'b', 'A', '0', '+', '/', '=', '-', '_', ' ', '"');
    const form = fc
      .array(fc.constantFrom('a', 'b', 'A', '0', '+', '=', '_'), { minLength: 6, maxLength: 12 })
      .map((c) => c.join(''));
    const formsAndText = fc.array(form, { minLength: 1, maxLength: 300 }).chain((forms) =>
      fc.tuple(
        fc.constant(forms),
        fc.array(
          fc.oneof(
            chars,
            fc.constantFrom(...forms),
            fc.constantFrom(...forms).map((f) => f.slice(1)),
          ),
          { maxLength: 60 },
        ),
      ),
    );
    fc.assert(
      fc.property(formsAndText, ([forms, pieces]) => {
        const text = pieces.join('');
        assert.deepEqual(index(...forms).find(text), reference(text, forms));
      }),
      { numRuns: runs(200) },
    );
  });
});
