// The forms a secret takes in what terraform and the runner print, as regular expressions (pure).
//
// terraform 1.11 prints a string value in these ways (internal/command/jsonformat, tfdiags,
// go-wordwrap, hclwrite; checked against terraform 1.11.4 by test/e2e/secret-forms.test.ts):
// - as is: heredoc lines of a multi-line value (the value trimmed, each line indented) and
//   diagnostic texts (an error_message), word-wrapped at 78 columns: a line break may replace any
//   run of white space;
// - Go-quoted (`%q`, strconv.Quote): single-line plan values, diagnostic values ("var.x is …"):
//   `\"`, `\\`, `\a` … `\v`, `\x01`, `\x7f`, and `\u2028`, `\u00a0`, `\U000e0001` for every
//   character Go's Unicode tables call unprintable;
// - JSON-escaped: the runner's canonical var files (quoted in diagnostics), its logs, and Go's
//   encoding/json (`jsonencode`): `\u0001`, `\u003c` `\u003e` `\u0026`, `\u2028` `\u2029`;
// - HCL-escaped (hclwrite: `provider::terraform::encode_expr`, `encode_tfvars`): `\u0001`,
//   `$${`, `%%{`;
// - one inside another: a `jsonencode`d or HCL-encoded value Go-quoted in the plan
//   (`"x \"CANARY\\u2028\" y"`);
// - NFC-normalised: terraform's strings are (cty), so `e` + U+0301 prints as `é`.
// Every non-ASCII character is matched both as itself and escaped, so the patterns hold whatever
// Unicode version decides what Go calls printable. Per character, the alternatives never both
// match at one place (they differ within their first two characters), so matching stays linear.

/** Go's unicode.IsSpace without U+00A0, which go-wordwrap never breaks at: where a wrapped line may end. */
const WRAP_SPACE = /[\t\n\v\f\r \u0085\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;
/** Go's strings.TrimSpace: terraform trims a multi-line value before it prints it as a heredoc. */
const GO_SPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/gu;

export const trimGoSpace = (text: string) => text.replace(GO_SPACE, '');

/**
 * How deep the patterns' escapings nest: 0 as is, 1 one escaping, 2 an escaping of an escaping.
 * Deeper escapings (`jsonencode(jsonencode(…))` in a plan) are plain strings, escaped once more
 * while a text to mask is long enough to hold them (Masker, escapedDeeper).
 */
const MAX_DEPTH = 2;

type Escaper = (char: string) => readonly string[];

const hex = (code: number, width: number) => code.toString(16).padStart(width, '0');
const unicodeEscape = (code: number) => (code < 0x10000 ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`);

const GO_NAMED: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
};
const JSON_NAMED: Record<string, string> = { '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** strconv.Quote (`%q`): what terraform's plan renderer and diagnostics print. */
const goQuote: Escaper = (char) => {
  if (char === '"' || char === '\\') return [`\\${char}`];
  const code = char.codePointAt(0)!;
  if (GO_NAMED[char]) return [GO_NAMED[char]];
  if (code < 0x20 || code === 0x7f) return [`\\x${hex(code, 2)}`];
  if (code < 0x80) return [char];
  return [char, unicodeEscape(code)];
};

/** Go's encoding/json (terraform's jsonencode and -json documents): HTML characters and U+2028/2029 escaped. */
const goJson: Escaper = (char) => {
  if (char === '"' || char === '\\') return [`\\${char}`];
  const code = char.codePointAt(0)!;
  if (code < 0x20) return [...(JSON_NAMED[char] ? [JSON_NAMED[char]] : []), `\\u${hex(code, 4)}`];
  if (char === '<' || char === '>' || char === '&') return [char, `\\u${hex(code, 4)}`];
  if (code === 0x2028 || code === 0x2029) return [`\\u${hex(code, 4)}`];
  return [char];
};

/** JSON.stringify: the runner's own JSON (logs, result.json, canonical var files). */
const jsJson: Escaper = (char) => {
  if (char === '"' || char === '\\') return [`\\${char}`];
  const code = char.codePointAt(0)!;
  if (JSON_NAMED[char]) return [JSON_NAMED[char]];
  if (code < 0x20) return [`\\u${hex(code, 4)}`];
  return [char];
};

/** hclwrite's quoted string literal (the unit `${` / `%{` has its introducer doubled). */
const hcl: Escaper = (char) => {
  if (char === '${' || char === '%{') return [`${char[0]}${char}`];
  if (char === '"' || char === '\\') return [`\\${char}`];
  if (char === '\n') return ['\\n'];
  if (char === '\r') return ['\\r'];
  if (char === '\t') return ['\\t'];
  const code = char.codePointAt(0)!;
  if (code < 0x20 || code === 0x7f) return [`\\u${hex(code, 4)}`];
  if (code < 0x80) return [char];
  return [char, unicodeEscape(code)];
};

const ESCAPERS: readonly Escaper[] = [goQuote, goJson, jsJson, hcl];

/** The units of a text: code points, with HCL's template introducers `${` and `%{` kept whole. */
function unitsOf(text: string): string[] {
  const units: string[] = [];
  const chars = [...text];
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    if ((char === '$' || char === '%') && chars[i + 1] === '{') {
      units.push(char + '{');
      i++;
    } else units.push(char);
  }
  return units;
}

/** The ways one escaper may print one unit (a `${` no escaper doubles stays two characters, escaped one by one). */
const unitEscapes = (escaper: Escaper, unit: string): readonly string[] =>
  unit.length > 1 && escaper !== hcl ? crossJoin([...unit].map(escaper)) : escaper(unit);

const crossJoin = (parts: (readonly string[])[]) =>
  parts.reduce<string[]>((acc, part) => acc.flatMap((a) => part.map((p) => a + p)), ['']);

/** Every escaping of `text` by one escaper (each unit escaped in each way it may be). */
function escapedBy(escaper: Escaper, text: string): string[] {
  let forms = [''];
  for (const unit of unitsOf(text)) {
    const options = unitEscapes(escaper, unit);
    forms = forms.flatMap((form) => options.map((option) => form + option));
  }
  return forms;
}

/** The units an escaper may change (every other character escapes as itself), found by one scan. */
const ESCAPABLE_UNIT = /[$%]\{|[^A-Za-z0-9 ]/gsu;

/** Each escaper's way of printing each unit, first or last, as found (a unit it prints as itself maps to undefined). */
const escapedUnits = new Map<string, Map<string, string | undefined>>();

function escapedUnit(escaper: Escaper, unit: string, way: 'first' | 'last'): string | undefined {
  const key = `${ESCAPERS.indexOf(escaper)}${way}`;
  let units = escapedUnits.get(key);
  if (!units) escapedUnits.set(key, (units = new Map()));
  if (units.has(unit)) return units.get(unit);
  const options = unitEscapes(escaper, unit);
  const form = way === 'first' ? options[0]! : options.at(-1)!;
  units.set(unit, form === unit ? undefined : form);
  return units.get(unit);
}

const isAlphanumericOrSpace = (code: number) =>
  code === 0x20 || (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);

/**
 * One escaping of `text`: every unit escaped in its first way, or every unit in its last. A loop
 * over the text's code units that copies the runs no escaper changes (letters, digits, spaces):
 * escapings of long forms, deeper and deeper (Masker), are most of a long secret's masking cost.
 */
function escapedOnce(escaper: Escaper, text: string, way: 'first' | 'last'): string {
  let out = '';
  let copied = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (isAlphanumericOrSpace(code)) continue;
    const introducer = (code === 0x24 || code === 0x25) && text.charCodeAt(at + 1) === 0x7b;
    const length = introducer || (code >= 0xd800 && code <= 0xdbff && at + 1 < text.length) ? 2 : 1;
    const form = escapedUnit(escaper, text.slice(at, at + length), way);
    if (form !== undefined) {
      out += text.slice(copied, at) + form;
      copied = at + length;
    }
    at += length - 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** The forms of `text` at each depth to `depth`: itself at 0, then every escaping (by `escape`) of every form of the depth above. */
function formsByDepth(
  text: string,
  depth: number,
  escape: (escaper: Escaper, form: string) => readonly string[],
): string[][] {
  const levels = [[text]];
  for (let level = 0; level < depth; level++)
    levels.push([...new Set(levels.at(-1)!.flatMap((form) => ESCAPERS.flatMap((escaper) => escape(escaper, form))))]);
  return levels;
}

/** A secret's units repeat (a key, a certificate): each unit's forms are built once. */
const unitFormsCache = new Map<string, string[]>();

/** The forms one unit takes at `depth`. */
function unitForms(unit: string, depth: number): string[] {
  const key = `${depth}:${unit}`;
  let forms = unitFormsCache.get(key);
  if (!forms) unitFormsCache.set(key, (forms = formsByDepth(unit, depth, escapedBy).at(-1)!));
  return forms;
}

/**
 * Each form escaped once more by every escaper, every unit in its first or in its last way: the
 * forms one level deeper (a form no escaper changes has none). Ways that print each unit of a form
 * alike (every escaper, for `"` and `\\`) escape it once.
 */
export function escapedDeeper(forms: readonly string[]): string[] {
  const deeper = new Set<string>();
  for (const form of forms) {
    const units = [...new Set(form.match(ESCAPABLE_UNIT))];
    const seen = new Set<string>();
    for (const escaper of ESCAPERS)
      for (const way of ['first', 'last'] as const) {
        const options = units.map((unit) => unitEscapes(escaper, unit));
        const ways = options.map((option) => (way === 'first' ? option[0]! : option.at(-1)!)).join('\0');
        if (seen.has(ways)) continue;
        seen.add(ways);
        const escaped = escapedOnce(escaper, form, way);
        if (escaped !== form) deeper.add(escaped);
      }
  }
  return [...deeper];
}

/** literalForms's escapings: each level escapes every form of the level above once more (escapedDeeper). */
const literalLevels = (text: string) =>
  formsByDepth(text, MAX_DEPTH, (escaper, form) => [
    escapedOnce(escaper, form, 'first'),
    escapedOnce(escaper, form, 'last'),
  ]);

/**
 * The forms of a long text as plain strings, for matching with indexOf: a pattern of every unit's
 * escapes would cost seconds to build and V8 refuses one of some 40,000 characters. Each escaping
 * (to MAX_DEPTH) escapes every unit in its first way or every unit in its last (as itself or
 * escaped, for a character Go may call unprintable); white space matches only as it is. `deepest`:
 * those at MAX_DEPTH.
 */
export function literalForms(text: string): { forms: string[]; deepest: string[] } {
  const levels = literalLevels(text);
  return { forms: [...new Set(levels.flat())], deepest: levels.at(-1)! };
}

/** The shortest `count` forms. */
export const shortestForms = (forms: readonly string[], count: number) =>
  [...forms].sort((a, b) => a.length - b.length).slice(0, count);

/** The literal forms of `text` at MAX_DEPTH, the deepest the patterns match: where escaping deeper starts (escapedDeeper). */
export const deepestLiteralForms = (text: string) => literalLevels(text).at(-1)!;

export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const alternation = (forms: readonly string[]) => {
  const sorted = [...new Set(forms)].sort((a, b) => b.length - a.length).map(escapeRegExp);
  return sorted.length === 1 ? sorted[0]! : `(?:${sorted.join('|')})`;
};

/**
 * A run of white space in a secret may print as any white space: terraform's word wrap puts a line
 * break in its place (a diagnostic), a heredoc puts the next line's indentation after it, and the
 * runner joins a diagnostic's lines with a space. Escaped, it is its units' escapes, and a line
 * break escaped once or twice (a log line of a message that quotes terraform's wrapped output).
 */
function whiteSpaceRun(units: readonly string[], depth: number): string {
  const raw = '[\\s\\u0085]';
  if (depth === 0) return `${raw}+`;
  const escaped = new Set<string>();
  for (const unit of [...units, '\n', '\r'])
    for (const form of unitForms(unit, depth)) if (!WRAP_SPACE.test(form)) escaped.add(form);
  return `(?:${raw}|${alternation([...escaped])})+`;
}

/** A secret in pieces: runs of white space (where a line may break) between the rest. */
interface Pieces {
  segments: string[][];
  runs: string[][];
}

function piecesOf(text: string): Pieces {
  const segments: string[][] = [[]];
  const runs: string[][] = [];
  let inRun = false;
  for (const unit of unitsOf(text)) {
    const space = WRAP_SPACE.test(unit);
    if (space && !inRun) runs.push([]);
    else if (!space && inRun) segments.push([]);
    inRun = space;
    (space ? runs : segments).at(-1)!.push(unit);
  }
  return { segments, runs };
}

export interface SecretPatterns {
  /** Regular expression sources matching the whole secret, one per depth. */
  whole: string[];
  /**
   * Sources matching, at the end of a text, a beginning of the secret that a line break may
   * continue (it ends where white space in the secret begins): a line ending so is held back
   * until the next one shows whether the secret goes on. Absent when the secret has no white space.
   */
  heads: string[];
}

/** The patterns of one form of a secret (already trimmed of white space at both ends). */
export function secretPatterns(text: string): SecretPatterns {
  const { segments, runs } = piecesOf(text);
  const whole: string[] = [];
  const heads: string[] = [];
  for (let depth = 0; depth <= MAX_DEPTH; depth++) {
    const segment = (units: string[]) => units.map((unit) => alternation(unitForms(unit, depth))).join('');
    const run = (units: string[]) => whiteSpaceRun(units, depth);
    const parts = segments.map(segment);
    const gaps = runs.map(run);
    whole.push(parts.map((part, index) => (index === 0 ? part : gaps[index - 1] + part)).join(''));
    if (runs.length > 0) {
      // seg0 (?: run1 seg1 (?: run2 seg2 … )? )? : every beginning that ends where a run begins.
      let head = '';
      for (let index = runs.length - 1; index >= 1; index--) head = `(?:${gaps[index - 1]}${parts[index]}${head})?`;
      heads.push(`${parts[0]}${head}`);
    }
  }
  return { whole, heads };
}

/** The texts terraform or the runner may print for a value: itself, and NFC-normalised (inputs with a lone surrogate are refused before this). */
export function printedForms(value: string): string[] {
  return [...new Set([value, value.normalize('NFC')])];
}

// The encodings a secret travels in when the module computes them from it and terraform no longer
// knows it is secret (a value declassified with nonsensitive(), a provider attribute that loses
// the mark, a provisioner's output): base64encode of a cloud-init document, urlencode into a
// database URL, upper and lower, a hex dump. Each is derived from the value as is (not from an
// escaping of it), and from the value in upper and in lower case (casedForms, go-case.ts). A change of case
// after (upper, lower, title, any mix) needs no form of its own, of the value or of an encoding: the
// masker matches every form whatever the case of its ASCII letters (anchored-strings.ts, mask.ts).
// Not derived: a hash (it is not the secret), an encoding of the value in title case, an encoding
// of an escaping or of another encoding but base64's percent-encoding (contract/sections/faults.md §5).

/** An encoded form shorter than this is not masked: a 4-character piece of base64 is somewhere in any large blob. */
export const MIN_ENCODED_LENGTH = 6;

/** What percent-encoding never changes (RFC 3986's unreserved characters). */
const UNRESERVED_ONLY = /^[A-Za-z0-9\-_.~]*$/;
/** What encodeURIComponent leaves and Go's url.QueryEscape escapes. */
const QUERY_ESCAPED = /[!*'()]/g;

/**
 * Percent-encoding, as terraform's urlencode (Go's url.QueryEscape: a space as `+`) and others
 * (a space as `%20`, JavaScript's encodeURIComponent); its hex digits in lower case, as any other
 * change of case, are matched as it. Only for a value that has a character an encoder changes.
 * Plain strings, not a pattern: a pattern of each character as itself or escaped costs V8 tens of
 * milliseconds to compile per few secrets. Built from encodeURIComponent's (native) output: a
 * certificate's worth of characters one by one cost tens of milliseconds.
 */
function percentForms(text: string): string[] {
  if (UNRESERVED_ONLY.test(text)) return [];
  const component = encodeURIComponent(text);
  const query = component.replace(QUERY_ESCAPED, (char) => `%${hex(char.charCodeAt(0), 2).toUpperCase()}`);
  return [query.replaceAll('%20', '+'), query, component];
}

/** The first base64 character that depends on the value's bytes alone, when the value starts `offset` bytes into a group of three. */
const BASE64_FIRST = [0, 2, 3] as const;
const urlAlphabet = (base64: string) => base64.replaceAll('+', '-').replaceAll('/', '_');

/**
 * base64 (standard and URL alphabets) of a value that starts at each of the three byte offsets a
 * value embedded in a longer text can start at: the characters that depend on the value's bytes
 * alone (those it shares with its neighbours are not), and, for when nothing follows it, with the
 * characters its end completes, padded and not.
 */
function base64Forms(bytes: Buffer): string[] {
  const forms: string[] = [];
  for (const offset of [0, 1, 2] as const) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const coreEnd = Math.floor((8 * (offset + bytes.length)) / 6);
    const core = encoded.slice(BASE64_FIRST[offset], coreEnd);
    const unpadded = encoded.slice(BASE64_FIRST[offset]).replace(/=+$/, '');
    if (core.length < MIN_ENCODED_LENGTH) continue;
    for (const form of [encoded.slice(BASE64_FIRST[offset]), unpadded, core]) forms.push(form, urlAlphabet(form));
  }
  return forms;
}

/** The encoded forms of `text` (itself, not trimmed). */
export interface EncodedForms {
  /**
   * base64 (also percent-encoded), hex and percent-encodings: plain strings of ENCODED_ALPHABET, matched in any case. base64 and
   * hex are MIN_ENCODED_LENGTH characters or more; a percent-encoding is never shorter than the value
   * and as telling as the value itself, so it is kept at any length the value is masked at.
   */
  plain: string[];
  /** The hex form in lower case. */
  hex: string;
}

/** The characters of every encoded form: the base64 alphabets and padding (hex among them), and what percent-encodings leave or write. */
export const ENCODED_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_%.~!*'()";

/** base64 percent-encoded (`urlencode(base64encode(…))`, a token in a query string): `+`, `/` and `=` escaped, as every encoder escapes them. */
const percentBase64 = (base64: string) =>
  base64.replace(/[+/=]/g, (char) => `%${hex(char.charCodeAt(0), 2).toUpperCase()}`);

export function encodedForms(text: string): EncodedForms {
  const bytes = Buffer.from(text, 'utf8');
  const hexForm = bytes.toString('hex');
  const base64 = base64Forms(bytes);
  const pieces = [...base64, ...base64.map(percentBase64), hexForm].filter((form) => form.length >= MIN_ENCODED_LENGTH);
  return { plain: [...new Set([...pieces, ...percentForms(text)])], hex: hexForm };
}
