// Masking by value: terraform prints secrets it no longer knows are secret (derived attributes
// lose the sensitive mark), so every byte the runner writes passes through here, in every form
// terraform and the runner print a value in (secret-forms.ts).
import { isSha256 } from '../util/sha256.ts';
import { printedForms, secretPatterns, trimGoSpace } from './secret-forms.ts';

/** Shorter values would mask ordinary text everywhere: they are reported instead. */
export const MIN_MASKED_LENGTH = 4;
export const MASK = '(sensitive value)';

export class Masker {
  private readonly values = new Set<string>();
  private readonly learned = new Set<string>();
  private readonly wholeSources = new Set<string>();
  private readonly headSources = new Set<string>();
  private pattern: RegExp | undefined;
  private headPattern: RegExp | null | undefined;
  readonly tooShort: string[] = [];

  /**
   * Adds a secret value; `label` names it (never the value) when it, or a line of it, is too short
   * to mask. A multi-line value is masked whole and line by line: terraform prints a changed
   * multi-line value as a line diff, its lines between other lines.
   */
  add(value: string, label: string): void {
    this.values.add(value);
    for (const form of printedForms(value)) {
      this.learn(form, label);
      if (form.includes('\n')) for (const line of form.split('\n')) this.learn(line, label);
    }
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
    const { whole, heads } = secretPatterns(trimmed);
    for (const source of whole) this.wholeSources.add(source);
    for (const source of heads) this.headSources.add(source);
    this.pattern = undefined;
    this.headPattern = undefined;
  }

  /** How many texts (values, forms and lines of values) are masked. */
  get size(): number {
    return this.learned.size;
  }

  /** Whether `value` is, whole, one of the secrets. */
  isSecret(value: string): boolean {
    return this.values.has(value);
  }

  mask(text: string): string {
    const pattern = this.wholePattern();
    return pattern ? text.replace(pattern, MASK) : text;
  }

  /** Where in `text` each whole secret is, in any of its forms. */
  matches(text: string): { start: number; end: number }[] {
    const pattern = this.wholePattern();
    return pattern ? [...text.matchAll(pattern)].map((m) => ({ start: m.index, end: m.index + m[0].length })) : [];
  }

  /** Where the beginning of a secret that a line break may continue starts, when `text` ends with one; else -1. */
  headAtEnd(text: string): number {
    if (this.headPattern === undefined) {
      this.headPattern = this.headSources.size ? new RegExp(`(?:${[...this.headSources].join('|')})[ \\t]*$`) : null;
    }
    return this.headPattern?.exec(text)?.index ?? -1;
  }

  private wholePattern(): RegExp | undefined {
    if (this.wholeSources.size === 0) return undefined;
    // Longest first: a secret is masked before a shorter one it contains.
    this.pattern ??= new RegExp([...this.wholeSources].sort((a, b) => b.length - a.length).join('|'), 'g');
    return this.pattern;
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
  push(line: string): string | undefined {
    this.pending.push(line);
    return this.release(false);
  }

  /** The end of the stream: everything still held, masked. */
  end(): string | undefined {
    return this.release(true);
  }

  private release(all: boolean): string | undefined {
    const text = this.pending.join('\n');
    const starts: number[] = [];
    for (let offset = 0, index = 0; index < this.pending.length; offset += this.pending[index]!.length + 1, index++) starts.push(offset);
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
    const released = this.pending.slice(0, keep).join('\n');
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
 * A secret that is itself 64 hex digits (`openssl rand -hex 32`) is masked all the same.
 */
export function maskValue<T>(masker: Masker, value: T): T {
  if (typeof value === 'string') return (isSha256(value) && !masker.isSecret(value) ? value : masker.mask(value)) as T;
  if (Array.isArray(value)) return value.map((item) => maskValue(masker, item)) as T;
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskValue(masker, item)])) as T;
  return value;
}
