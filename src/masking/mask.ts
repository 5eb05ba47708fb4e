// Masking by value: terraform prints secrets it no longer knows are secret (derived attributes
// lose the sensitive mark), so every byte the runner writes passes through here, in every form
// terraform and the runner print a value in (secret-forms.ts).
import { isSha256 } from '../util/sha256.ts';
import { AnchoredStrings, replaceRanges } from './anchored-strings.ts';
import { documentFields, MAX_DOCUMENT_FIELDS } from './document-fields.ts';
import { casedForms, goLower, goUpper, hasNonAscii } from './go-case.ts';
import { oldValues } from './rotated.ts';
import {
  encodedForms,
  escapedDeeper,
  literalForms,
  deepestLiteralForms,
  shortestForms,
  MIN_ENCODED_LENGTH,
  printedForms,
  secretPatterns,
  trimGoSpace,
} from './secret-forms.ts';

/** Shorter values would mask ordinary text everywhere: they are reported instead. */
export const MIN_MASKED_LENGTH = 4;
export const MASK = '(sensitive value)';

/**
 * Texts longer than this are matched by their literal forms (indexOf): a pattern of every
 * character's escapes takes long to build, and V8 refuses a regular expression that large.
 */
const PATTERN_LIMIT = 2048;
/** Sources joined into one regular expression at most: a larger one is built alone. */
const GROUP_LIMIT = 16_384;
/**
 * The forms of one secret kept at each level escaped past the patterns' depth (the shortest): each
 * level of a secret with characters every escaper treats alike (`"`, `\\`) is one form; this bounds a
 * secret whose characters the escapers each print their own way (and one past PATTERN_LIMIT more:
 * its forms are long). An escaping that mixes escapers' ways past these is not masked.
 */
const DEEPER_FORMS = 16;
const DEEPER_FORMS_LONG = 1;
/** Each escaping that changes a text lengthens it by a character at least: its forms past the patterns' depth (3 escapings) are this much longer. */
const PAST_PATTERN_GROWTH = 3;
/**
 * Levels escaped past the patterns' depth at most. An escaping that lengthens a form by one
 * character only (HCL's `${` escaped again: `$${`, `$$${`) would otherwise take a long text's length
 * down as many levels as it holds characters, each level's forms as long as the text: a run of
 * minutes in one mask. Eight levels past the patterns' depth is deeper than any module nests encoders.
 */
const MAX_DEEPER_LEVELS = 8;

/**
 * A secret's literal forms at the deepest level masked (undefined: those at the patterns' depth,
 * built when first needed), and a length no form of the next level is shorter than.
 */
interface Deeper {
  text: string;
  forms: string[] | undefined;
  next: number;
  /** Levels escaped past the patterns' depth so far (MAX_DEEPER_LEVELS at most). */
  levels: number;
}

interface Group {
  regex: RegExp;
  sources: string[];
}

/**
 * Regular expressions over a set of sources, built lazily, a few sources to each, those of the
 * longest secrets first (an alternation takes the first alternative that matches at a place). One
 * that fails (V8 refuses it as too large when it first runs, or it runs out of backtracking stack
 * on a long text) is split into its sources, and a source that fails alone is handed to `fallBack`.
 */
class PatternGroups {
  /** Each source, and the length of the text it matches a form of. */
  private readonly sources = new Map<string, number>();
  private readonly alone = new Set<string>();
  private groups: Group[] | undefined;

  constructor(
    private readonly flags: string,
    private readonly fallBack: (source: string) => void,
  ) {}

  add(source: string, textLength: number): void {
    this.sources.set(source, Math.max(textLength, this.sources.get(source) ?? 0));
    this.groups = undefined;
  }

  /** Runs `use` over every regular expression; `use` must change nothing when it throws. */
  each(use: (regex: RegExp) => void): void {
    const queue = [...this.built()];
    for (let group = queue.shift(); group; group = queue.shift()) {
      try {
        use(group.regex);
      } catch {
        this.groups = undefined;
        if (group.sources.length > 1) {
          for (const source of group.sources) this.alone.add(source);
          queue.unshift(...group.sources.map((source) => this.group([source])));
        } else {
          this.sources.delete(group.sources[0]!);
          this.fallBack(group.sources[0]!);
        }
      }
    }
  }

  private built(): Group[] {
    if (this.groups) return this.groups;
    const groups: string[][] = [];
    let size = Infinity;
    const order = [...this.sources]
      .sort(([a, aText], [b, bText]) => bText - aText || b.length - a.length)
      .map(([source]) => source);
    for (const source of order) {
      if (this.alone.has(source) || size + source.length > GROUP_LIMIT) {
        groups.push([source]);
        size = this.alone.has(source) ? Infinity : source.length;
      } else {
        groups.at(-1)!.push(source);
        size += source.length + 1;
      }
    }
    this.groups = groups.map((sources) => this.group(sources));
    return this.groups;
  }

  private group(sources: string[]): Group {
    return { regex: new RegExp(sources.join('|'), this.flags), sources };
  }
}

export type Range = { start: number; end: number };

/** `text` with its ASCII letters in lower case: as long as `text`, so every offset in it holds in `text`. */
const asciiLower = (text: string) => text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());

/**
 * Every match of `regex` (global) at every place, overlapping ones too: each search goes on from
 * the place after the last match's start, not after its end, so a secret that starts inside
 * another one's match is found (an alternation takes one alternative at a place).
 */
function overlappingMatches(text: string, regex: RegExp): Range[] {
  const found: Range[] = [];
  regex.lastIndex = 0;
  for (let match = regex.exec(text); match; match = regex.exec(text)) {
    found.push({ start: match.index, end: match.index + match[0].length });
    regex.lastIndex = match.index + 1;
  }
  return found;
}

/** The ranges merged where they overlap, in order. */
function unionOf(ranges: readonly Range[]): Range[] {
  const merged: Range[] = [];
  for (const range of [...ranges].sort((a, b) => a.start - b.start)) {
    const last = merged.at(-1);
    if (last && range.start < last.end) last.end = Math.max(last.end, range.end);
    else merged.push({ ...range });
  }
  return merged;
}

export class Masker {
  private readonly values = new Set<string>();
  private readonly learned = new Set<string>();
  /** The texts whose encoded forms are learned. */
  private readonly encoded = new Set<string>();
  /** The encoded forms of the secrets (base64, hex, percent-encodings). */
  private readonly anchored = new AnchoredStrings();
  /** The hex forms of the secrets: masked even where a sha256 would not be (maskValue). */
  private readonly hexForms = new Set<string>();
  /** Each whole-secret source, and how it is matched literally should it fail. */
  private readonly literalFallback = new Map<string, () => void>();
  /** Case is ignored: terraform's upper(), lower() and title() print a secret so, and no escape is told apart by case. */
  private readonly whole = new PatternGroups('gi', (source) => this.literalFallback.get(source)!());
  /** A head that fails is dropped: its secret is still masked on one line. */
  private readonly heads = new PatternGroups('i', () => {});
  /** Plain strings (the forms of a long secret, short percent-encodings) with their ASCII letters in lower case, found in `text` so folded. */
  private readonly literals = new Set<string>();
  /** Each secret's escapings past the patterns' depth, escaped once more while a text to mask is long enough (deepen). */
  private readonly deeper: Deeper[] = [];
  readonly tooShort: string[] = [];
  /** How many texts could not be masked (a matcher failed on them): each was replaced by the mask whole. */
  unmaskable = 0;

  /**
   * Adds a secret value; `label` names it (never the value) when it, or a line of it, is too short
   * to mask. A multi-line value is masked whole and line by line: terraform prints a changed
   * multi-line value as a line diff, its lines between other lines.
   */
  add(value: string, label: string): void {
    this.values.add(value);
    for (const form of printedForms(value)) {
      this.learn(form, label);
      // upper() and lower() as terraform prints them: a case-insensitive pattern misses `ı` for `I` and
      // `i` for `İ` (literal forms are kept in both cases already: learnLiterally).
      if (hasNonAscii(form) && form.length <= PATTERN_LIMIT)
        for (const cased of casedForms(form)) this.learn(cased, label);
      if (form.includes('\n')) for (const line of form.split('\n')) this.learn(line, label);
      // Encoded whole, as the module had it, and trimmed (what trimspace() leaves), in upper and lower case too.
      for (const text of new Set([form, trimGoSpace(form)]))
        if (text.length >= MIN_MASKED_LENGTH) for (const cased of casedForms(text)) this.learnEncoded(cased);
    }
    // terraform prints a string that parses as JSON as jsonencode({...}), one field to a line.
    const fields = documentFields(value);
    for (const leaf of fields.leaves) this.add(leaf, `${label} (a field of its JSON document)`);
    for (const key of fields.keys)
      if (key.length >= MIN_MASKED_LENGTH) this.add(key, `${label} (a key of its JSON document)`);
  }

  private learn(text: string, label: string): void {
    // terraform trims a multi-line value, and white space at either end is no secret.
    const trimmed = trimGoSpace(text);
    if (trimmed.length < MIN_MASKED_LENGTH) {
      if (trimmed.length > 0 && !this.tooShort.includes(label)) this.tooShort.push(label);
      return;
    }
    if (this.learned.has(trimmed)) return;
    this.learned.add(trimmed);
    if (trimmed.length > PATTERN_LIMIT) return this.learnLiterally(trimmed);
    this.deeper.push({ text: trimmed, forms: undefined, next: trimmed.length + PAST_PATTERN_GROWTH, levels: 0 });
    const { whole, heads } = secretPatterns(trimmed);
    for (const source of whole) this.addWhole(source, trimmed.length, () => this.learnLiterally(trimmed));
    for (const source of heads) this.heads.add(`(?:${source})[ \\t]*$`, trimmed.length);
  }

  /** The encodings of `text` (secret-forms.ts). */
  private learnEncoded(text: string): void {
    if (this.encoded.has(text)) return;
    this.encoded.add(text);
    const { plain, hex } = encodedForms(text);
    // The anchored search needs MIN_ENCODED_LENGTH characters; a shorter form (the percent-encoding
    // of a short value: "aa aa" as "aa+aa") is matched as the value is when a pattern fails, literally.
    // Both ignore case.
    for (const form of plain) {
      if (form.length >= MIN_ENCODED_LENGTH) this.anchored.add(form);
      else this.addLiterals([form]);
    }
    this.hexForms.add(hex);
  }

  /**
   * Escapes each secret's deepest forms once more, and again, while `length` could hold one (each
   * escaping lengthens a form, so the depth is bounded by the text's length): the escapings to the
   * fixed point a text can hold, as plain strings (`jsonencode(jsonencode(x))` Go-quoted in a plan is three deep).
   */
  private deepen(length: number): void {
    for (const deeper of this.deeper) {
      while (deeper.next <= length && deeper.levels < MAX_DEEPER_LEVELS) {
        deeper.levels++;
        const count = deeper.text.length > PATTERN_LIMIT ? DEEPER_FORMS_LONG : DEEPER_FORMS;
        const forms = shortestForms(
          escapedDeeper(deeper.forms ?? shortestForms(deepestLiteralForms(deeper.text), count)),
          count,
        );
        this.addCasedLiterals(forms);
        deeper.forms = forms;
        deeper.next = forms.length ? forms[0]!.length + 1 : Infinity;
      }
    }
  }

  private addWhole(source: string, textLength: number, fallBack: () => void): void {
    this.literalFallback.set(source, fallBack);
    this.whole.add(source, textLength);
  }

  /**
   * A rotated secret's old value: wherever a change's value after holds a secret (whole or a part of
   * it, in any form), the string at the same place before holds the old value there (terraform
   * prints it as `"user:OLD" -> "user:NEW"`: rotated.ts). Bounded by MAX_DOCUMENT_FIELDS places per change.
   */
  addOldValues(before: unknown, after: unknown): void {
    const stack: [unknown, unknown][] = [[before, after]];
    for (let visited = 0; stack.length && visited < MAX_DOCUMENT_FIELDS; visited++) {
      const [old, now] = stack.pop()!;
      if (typeof now === 'string') {
        if (typeof old === 'string' && old !== now)
          for (const value of oldValues(old, now, unionOf(this.matches(now))))
            this.add(value, 'the old value of a rotated secret');
      } else if (now !== null && typeof now === 'object' && old !== null && typeof old === 'object') {
        for (const [key, item] of Object.entries(now)) stack.push([(old as Record<string, unknown>)[key], item]);
      }
    }
  }

  /**
   * The escaped forms of `text` as plain strings. Literals are matched whatever the case of their
   * ASCII letters (title() and any mix); a non-ASCII letter's case changes only with the whole
   * form's, in upper or in lower case (folding it could change the text's length and offsets).
   */
  private learnLiterally(text: string): void {
    const { forms, deepest } = literalForms(text);
    this.addCasedLiterals(forms);
    this.deeper.push({
      text,
      forms: shortestForms(deepest, DEEPER_FORMS_LONG),
      next: text.length + PAST_PATTERN_GROWTH,
      levels: 0,
    });
  }

  /** `forms` as literals, and in upper and in lower case as terraform prints them. */
  private addCasedLiterals(forms: readonly string[]): void {
    this.addLiterals(forms.flatMap((form) => [form, goUpper(form), goLower(form)]));
  }

  private addLiterals(forms: readonly string[]): void {
    for (const form of forms) this.literals.add(asciiLower(form));
  }

  /** How many texts (values, forms and lines of values) are masked. */
  get size(): number {
    return this.learned.size;
  }

  /** Whether `value` is, whole, one of the secrets or a secret's hex form (in either case). */
  isSecret(value: string): boolean {
    return this.values.has(value) || this.hexForms.has(value.toLowerCase());
  }

  /**
   * `text` with every secret masked, each place where secrets overlap as one; should matching fail,
   * the mask alone (never the text unmasked).
   */
  mask(text: string): string {
    const ranges = this.secretRanges(text);
    return ranges ? replaceRanges(text, ranges, MASK) : MASK;
  }

  /**
   * Where in `text` the secrets are, each place where secrets overlap as one; should matching fail,
   * undefined, counted in `unmaskable` (the caller then writes the mask alone).
   */
  secretRanges(text: string): Range[] | undefined {
    try {
      return unionOf(this.matches(text));
    } catch {
      this.unmaskable++;
      return undefined;
    }
  }

  /** Where in `text` each whole secret is, in any of its forms (overlapping places included). */
  matches(text: string): Range[] {
    const found: Range[] = [];
    this.deepen(text.length);
    const lowered = this.literals.size > 0 ? asciiLower(text) : '';
    for (const form of this.literals) {
      for (let at = lowered.indexOf(form); at >= 0; at = lowered.indexOf(form, at + 1))
        found.push({ start: at, end: at + form.length });
    }
    this.whole.each((regex) => found.push(...overlappingMatches(text, regex)));
    return [...found, ...this.anchored.find(text)];
  }

  /** Where the beginning of a secret that a line break may continue starts, when `text` ends with one; else -1. */
  headAtEnd(text: string): number {
    let first = -1;
    this.heads.each((regex) => {
      const at = regex.exec(text)?.index ?? -1;
      if (at >= 0 && (first < 0 || at < first)) first = at;
    });
    return first;
  }
}

/** Lines held back at most, whatever the secrets: a stream never waits on more. */
const MAX_HELD_LINES = 256;

/**
 * Masks a stream of lines (terraform's output) where a secret can span lines: a diagnostic wraps
 * at white space, a heredoc puts each line of a value on its own. A line that ends with the
 * beginning of a secret waits for the next line (or the end of the stream); then the lines are
 * masked together.
 */
export class LineMasker {
  private pending: string[] = [];

  constructor(private readonly masker: Masker) {}

  /** The masked text of the lines that may go now (joined by newlines), or undefined while they wait. */
  push(...lines: readonly string[]): string | undefined {
    for (const line of lines) this.pending.push(line);
    return this.release(false);
  }

  /** The end of the stream: everything still held, masked. */
  end(): string | undefined {
    return this.release(true);
  }

  private release(all: boolean): string | undefined {
    const text = this.pending.join('\n');
    const starts: number[] = [];
    for (let offset = 0, index = 0; index < this.pending.length; offset += this.pending[index]!.length + 1, index++)
      starts.push(offset);
    const lineAt = (offset: number) => starts.findLastIndex((start) => start <= offset);
    let keep = this.pending.length;
    if (!all) {
      const head = this.masker.headAtEnd(text);
      if (head >= 0) keep = lineAt(head);
      // A whole secret that crosses into the held lines waits with them.
      for (let moved = true; moved && keep > 0 && keep < this.pending.length; ) {
        moved = false;
        for (const { start, end } of this.masker.matches(text)) {
          if (start < starts[keep]! && end > starts[keep]!) {
            keep = lineAt(start);
            moved = true;
          }
        }
      }
      if (this.pending.length - keep > MAX_HELD_LINES) keep = this.pending.length;
    }
    if (keep === 0) return undefined;
    const released = keep === this.pending.length ? text : this.pending.slice(0, keep).join('\n');
    this.pending = this.pending.slice(keep);
    return this.masker.mask(released);
  }
}

/**
 * Every string leaf of a JSON value: what is masked of a secret. Numbers and booleans are not: their
 * text ("true", "5432") is everywhere, and masking it would corrupt JSON and hide ordinary logs.
 */
export function stringLeaves(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringLeaves);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringLeaves);
  return [];
}

/**
 * A copy of a JSON-like value with every string masked: masking happens before serialisation, so
 * the JSON stays valid whatever a secret looks like. Hashes are left as they are: they reveal
 * nothing, and a secret that happens to be a run of hex digits must not break the approve command.
 * A secret that is itself 64 hex digits (`openssl rand -hex 32`), or whose hex form is, is masked all the same.
 */
export function maskValue<T>(masker: Masker, value: T): T {
  if (typeof value === 'string') return (isSha256(value) && !masker.isSecret(value) ? value : masker.mask(value)) as T;
  if (Array.isArray(value)) return value.map((item) => maskValue(masker, item)) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskValue(masker, item)])) as T;
  return value;
}
