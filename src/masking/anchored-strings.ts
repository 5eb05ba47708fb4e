// The encoded forms of the secrets (base64, hex, percent-encodings), found in a text in one pass
// whatever their number (pure). Each string is looked up by a hash of its first ANCHOR characters,
// rolled along the runs of ENCODED_ALPHABET in the text. As alternatives of a regular expression,
// hundreds of them cost several times the rest of the masking: almost every letter starts one.
//
// Case is ignored: a module prints upper(urlencode(secret)), lower(base64encode(…)) or title(…) as
// readily as the encoding itself, and each is the secret still (a percent-encoding's and a hex
// form's letters carry nothing in their case; base64's carry one bit each, which a reader recovers
// by trying the 16 cases of each group of 4 characters against the 3 bytes it decodes to). The
// alphabet is ASCII, so folding is one table look-up a character and keeps every offset: the
// search costs what it did.
import { ENCODED_ALPHABET, MIN_ENCODED_LENGTH } from './secret-forms.ts';

const ANCHOR = MIN_ENCODED_LENGTH;
/** Each character of the alphabet in lower case; 0 for any other UTF-16 code unit (a table of them all: no branch). */
const FOLDED = new Uint8Array(0x10000);
for (const char of ENCODED_ALPHABET) FOLDED[char.charCodeAt(0)] = char.toLowerCase().charCodeAt(0);
const folded = (code: number) => FOLDED[code]!;

/** Whether `text` at `at` is `form` (folded) whatever the case of its letters. */
function foldedAt(text: string, form: string, at: number): boolean {
  if (at + form.length > text.length) return false;
  for (let i = 0; i < form.length; i++) if (folded(text.charCodeAt(at + i)) !== form.charCodeAt(i)) return false;
  return true;
}

const BASE = 31;
/** BASE to the power ANCHOR (mod 2^32): what the character leaving the window weighs. */
const LEAVING = Array.from({ length: ANCHOR }).reduce<number>((power) => Math.imul(power, BASE), 1);
const FILTER_BITS = 16;
const FILTER_MASK = (1 << FILTER_BITS) - 1;

const anchorHash = (text: string, at: number) => {
  let hash = 0;
  for (let i = at; i < at + ANCHOR; i++) hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) | 0;
  return hash;
};

export class AnchoredStrings {
  private readonly byAnchor = new Map<string, string[]>();
  /** Which hashes some anchor has: most windows of a text are ruled out without building a string. */
  private readonly filter = new Uint8Array(1 << FILTER_BITS);

  /** Adds a string of the alphabet, at least ANCHOR characters long (anything else is a caller's bug: refused), found in any case. */
  add(text: string): void {
    let inAlphabet = text.length >= ANCHOR;
    for (let i = 0; inAlphabet && i < text.length; i++) inAlphabet = folded(text.charCodeAt(i)) !== 0;
    if (!inAlphabet) throw new Error(`not a string of the encoded forms' alphabet of ${ANCHOR}+ characters`);
    const form = text.toLowerCase();
    const anchor = form.slice(0, ANCHOR);
    const forms = this.byAnchor.get(anchor) ?? [];
    if (forms.includes(form)) return;
    forms.push(form);
    forms.sort((a, b) => b.length - a.length);
    this.byAnchor.set(anchor, forms);
    this.filter[anchorHash(form, 0) & FILTER_MASK] = 1;
  }

  /** Where the strings are in `text`, in any case: the longest at each place, in order (places may overlap). */
  find(text: string): { start: number; end: number }[] {
    const found: { start: number; end: number }[] = [];
    if (this.byAnchor.size === 0) return found;
    let hash = 0;
    let run = 0;
    for (let i = 0; i < text.length; i++) {
      const code = folded(text.charCodeAt(i));
      if (code === 0) {
        run = 0;
        hash = 0;
        continue;
      }
      hash = (Math.imul(hash, BASE) + code) | 0;
      if (++run > ANCHOR) hash = (hash - Math.imul(folded(text.charCodeAt(i - ANCHOR)), LEAVING)) | 0;
      if (run < ANCHOR || this.filter[hash & FILTER_MASK] === 0) continue;
      const start = i - ANCHOR + 1;
      const form = this.byAnchor
        .get(text.slice(start, i + 1).toLowerCase())
        ?.find((candidate) => foldedAt(text, candidate, start));
      if (form !== undefined) found.push({ start, end: start + form.length });
    }
    return found;
  }
}

/** `text` with each range (in order, none overlapping) replaced by `by`. */
export function replaceRanges(text: string, ranges: readonly { start: number; end: number }[], by: string): string {
  if (ranges.length === 0) return text;
  let out = '';
  let from = 0;
  for (const { start, end } of ranges) {
    out += text.slice(from, start) + by;
    from = end;
  }
  return out + text.slice(from);
}
