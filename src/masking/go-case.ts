// Case as terraform's upper() and lower() change it (pure): go-cty's strings.ToUpper/ToLower, Go's
// unicode.ToUpper/ToLower rune by rune (simple case mapping), not JavaScript's special casing.

/**
 * The characters whose simple case mapping (Go's unicode.ToUpper/ToLower, rune by rune: what
 * terraform's upper() and lower() print, through go-cty's strings.ToUpper/ToLower) is one character
 * where JavaScript's full mapping (Unicode's special casing) is several: checked against terraform
 * 1.11.4's console (`lower("İ")` is `i`, `upper("ᾀᾳ")` is `ᾈᾼ`). Every other character whose full
 * mapping is several characters keeps its case in Go (`upper("ß")` is `ß`).
 */
const GO_LOWER: Record<string, string> = { '\u0130': 'i' };
const GO_UPPER: Record<string, string> = Object.fromEntries([
  ...[0x1f80, 0x1f90, 0x1fa0].flatMap((base) =>
    Array.from({ length: 8 }, (_, i) => [String.fromCodePoint(base + i), String.fromCodePoint(base + i + 8)]),
  ),
  ...[0x1fb3, 0x1fc3, 0x1ff3].map((code) => [String.fromCodePoint(code), String.fromCodePoint(code + 9)]),
]);

/** One character's case changed as Go's unicode.ToUpper/ToLower change it (simple case mapping: `ß` stays, `İ` lowers to `i`). */
const caseOf = (char: string, special: Record<string, string>, change: (c: string) => string) => {
  const simple = special[char];
  if (simple !== undefined) return simple;
  const changed = change(char);
  return [...changed].length === 1 ? changed : char;
};

const NON_ASCII = /[^\0-\x7f]/;

/**
 * `text` as terraform's upper() prints it (Go's strings.ToUpper: rune by rune, simple case mapping).
 * JavaScript's whole-text mapping is the same where no character's mapping is several characters
 * (the text's length is kept): most texts, mapped at once.
 */
export const goUpper = (text: string) => {
  const upper = text.toUpperCase();
  return upper.length === text.length
    ? upper
    : text.replace(/./gsu, (c) => caseOf(c, GO_UPPER, (x) => x.toUpperCase()));
};

/** `text` as terraform's lower() prints it (Go's strings.ToLower: rune by rune, simple case mapping; `Σ` is `σ` wherever it is). */
export const goLower = (text: string) => {
  const lower = text.toLowerCase();
  return lower.length === text.length && !text.includes('Σ')
    ? lower
    : text.replace(/./gsu, (c) => caseOf(c, GO_LOWER, (x) => x.toLowerCase()));
};

/** Whether `text` has a character whose case a case-insensitive match may miss: a non-ASCII one (`ı` and `I`, `İ` and `i`). */
export const hasNonAscii = (text: string) => NON_ASCII.test(text);

/**
 * `text`, and in upper and in lower case as terraform's upper() and lower() print it (goUpper,
 * goLower): what a module may print or encode (`base64encode(lower(var.token))`). The encodings of
 * each are masked; a change of case after the encoding needs no form (every form is matched in any
 * case), and title() before it, or a mix, is not covered (a mix of cases has as many forms as the
 * text has letters).
 */
export function casedForms(text: string): string[] {
  return [...new Set([text, goUpper(text), goLower(text)])];
}
