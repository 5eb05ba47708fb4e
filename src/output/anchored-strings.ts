// The encoded forms of the secrets (base64, hex, percent-encodings), found in a text in one pass
// whatever their number (pure). Each string is looked up by a hash of its first ANCHOR characters,
// rolled along the runs of ENCODED_ALPHABET in the text. As alternatives of a regular expression,
// hundreds of them cost several times the rest of the masking: almost every letter starts one.
import { ENCODED_ALPHABET, MIN_ENCODED_LENGTH } from './secret-forms.ts';

const ANCHOR = MIN_ENCODED_LENGTH;
const IN_ALPHABET = new Uint8Array(128);
for (const char of ENCODED_ALPHABET) IN_ALPHABET[char.charCodeAt(0)] = 1;
const inAlphabet = (code: number) => code < 128 && IN_ALPHABET[code] === 1;

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

  /** Adds a string of the alphabet, at least ANCHOR characters long (anything else is a caller's bug: refused). */
  add(form: string): void {
    if (form.length < ANCHOR || ![...form].every((char) => inAlphabet(char.charCodeAt(0))))
      throw new Error(`not a string of the encoded forms' alphabet of ${ANCHOR}+ characters`);
    const anchor = form.slice(0, ANCHOR);
    const forms = this.byAnchor.get(anchor) ?? [];
    if (forms.includes(form)) return;
    forms.push(form);
    forms.sort((a, b) => b.length - a.length);
    this.byAnchor.set(anchor, forms);
    this.filter[anchorHash(form, 0) & FILTER_MASK] = 1;
  }

  /** Where the strings are in `text`: the longest at each place, in order (places may overlap). */
  find(text: string): { start: number; end: number }[] {
    const found: { start: number; end: number }[] = [];
    if (this.byAnchor.size === 0) return found;
    let hash = 0;
    let run = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (!inAlphabet(code)) {
        run = 0;
        hash = 0;
        continue;
      }
      hash = (Math.imul(hash, BASE) + code) | 0;
      if (++run > ANCHOR) hash = (hash - Math.imul(text.charCodeAt(i - ANCHOR), LEAVING)) | 0;
      if (run < ANCHOR || this.filter[hash & FILTER_MASK] === 0) continue;
      const start = i - ANCHOR + 1;
      const form = this.byAnchor.get(text.slice(start, i + 1))?.find((candidate) => text.startsWith(candidate, start));
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
