// Masking by value: terraform prints secrets it no longer knows are secret (derived attributes
// lose the sensitive mark), so every byte the runner writes passes through here.
import { isSha256 } from '../util/sha256.ts';

/** Shorter values would mask ordinary text everywhere: they are reported instead. */
export const MIN_MASKED_LENGTH = 4;
export const MASK = '(sensitive value)';

export class Masker {
  private readonly secrets = new Set<string>();
  private pattern: RegExp | undefined;
  readonly tooShort: string[] = [];

  /** Adds a secret value; `label` names it (never the value) when it is too short to mask. */
  add(value: string, label: string): void {
    for (const variant of variantsOf(value)) {
      if (variant.length < MIN_MASKED_LENGTH) {
        if (variant.trim().length > 0 && !this.tooShort.includes(label)) this.tooShort.push(label);
        continue;
      }
      this.secrets.add(variant);
    }
    this.pattern = undefined;
  }

  get size(): number {
    return this.secrets.size;
  }

  /** Whether `value` is, whole, one of the secrets. */
  isSecret(value: string): boolean {
    return this.secrets.has(value);
  }

  mask(text: string): string {
    if (this.secrets.size === 0) return text;
    this.pattern ??= new RegExp([...this.secrets].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|'), 'g');
    return text.replace(this.pattern, MASK);
  }
}

/** The forms a value takes in what the runner writes: as is, JSON-escaped (as JavaScript and as terraform's Go encoder escape), and line by line. */
function variantsOf(value: string): string[] {
  const jsonEscaped = JSON.stringify(value).slice(1, -1);
  const goEscaped = jsonEscaped.replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
  const variants = new Set([value, jsonEscaped, goEscaped]);
  if (value.includes('\n')) for (const line of value.split(/\r?\n/)) variants.add(line);
  return [...variants];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

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
