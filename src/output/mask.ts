// Masking by value: terraform prints secrets it no longer knows are secret (derived attributes
// lose the sensitive mark), so every byte the runner writes passes through here.

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

/** Every string leaf of a JSON value (numbers and booleans too, as text): what a secret variable can print as. */
export function leafStrings(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (typeof value === 'string') return [value];
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return [String(value)];
  if (Array.isArray(value)) return value.flatMap(leafStrings);
  if (typeof value === 'object') return Object.values(value).flatMap(leafStrings);
  return [];
}
