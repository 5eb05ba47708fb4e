// Canonical JSON: one text per JSON value, so that a hash of it is independent of key order,
// whitespace and number spelling, and the same in every language. The rules are the contract in
// contract/sections/inputs.md; this file is their reference implementation. They follow RFC 8785
// (JCS) except for numbers, which are exact decimals here instead of IEEE doubles.

/** A JSON number kept exact: `canonical` is its canonical text (see canonicalNumber), never rounded. */
export class JsonNumber {
  constructor(readonly canonical: string) {}
}

export type JsonValue = null | boolean | string | JsonNumber | JsonArray | JsonObject;
type JsonArray = readonly JsonValue[];
/** Members in source order; a Map so that any key (even `__proto__`) is plain data. */
export type JsonObject = ReadonlyMap<string, JsonValue>;

/** Numbers whose leading digit is further than this many powers of ten from the units digit are refused. */
const MAX_DECIMAL_EXPONENT = 1000;

const JSON_NUMBER = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

/**
 * The canonical text of a JSON number literal: its exact decimal value written with the notation
 * rule of ECMAScript's Number::toString (plain from 1e-6 up to below 1e21, else `d.ddde±x`),
 * applied to all its significant digits. So `1.0`, `1e0` and `10e-1` all give `1`, and
 * 12345678901234567890 keeps every digit. A negative zero (`-0`, `-0.0e5`) gives `-0`: terraform
 * keeps the sign (`"${var.x}"` renders `-0`), so one text for both zeros would hash two inputs
 * terraform tells apart as one. (The inputs refuse it anyway: parseExactJson.)
 * Throws a RangeError when the value is beyond ±MAX_DECIMAL_EXPONENT (no real input is).
 */
export function canonicalNumber(literal: string): string {
  const match = JSON_NUMBER.exec(literal);
  if (!match) throw new TypeError(`not a JSON number: ${literal}`);
  const [, sign, integerDigits, fractionDigits = '', exponentText = '0'] = match;

  // value = ±digits × 10^exponent, digits without leading or trailing zeros
  const withoutLeadingZeros = (integerDigits + fractionDigits).replace(/^0+/, '');
  if (withoutLeadingZeros === '') return `${sign}0`;
  const digits = withoutLeadingZeros.replace(/0+$/, '');
  const exponent = parseExponent(exponentText) - fractionDigits.length + (withoutLeadingZeros.length - digits.length);

  // The value is 0.<digits> × 10^pointPosition; pointPosition - 1 is the scientific exponent.
  const pointPosition = exponent + digits.length;
  if (Math.abs(pointPosition - 1) > MAX_DECIMAL_EXPONENT) {
    throw new RangeError(`the number is beyond 1e±${MAX_DECIMAL_EXPONENT}`);
  }
  return sign + decimalNotation(digits, pointPosition);
}

function parseExponent(text: string): number {
  const magnitude = text.replace(/^[+-]/, '').replace(/^0+/, '');
  // 15 digits keep the arithmetic exact; any exponent that long puts the value out of range anyway.
  if (magnitude.length > 15) throw new RangeError(`the number is beyond 1e±${MAX_DECIMAL_EXPONENT}`);
  return text.startsWith('-') ? -Number(magnitude) : Number(magnitude);
}

function decimalNotation(digits: string, pointPosition: number): string {
  if (digits.length <= pointPosition && pointPosition <= 21) {
    return digits + '0'.repeat(pointPosition - digits.length);
  }
  if (0 < pointPosition && pointPosition <= 21) {
    return `${digits.slice(0, pointPosition)}.${digits.slice(pointPosition)}`;
  }
  if (-6 < pointPosition && pointPosition <= 0) {
    return `0.${'0'.repeat(-pointPosition)}${digits}`;
  }
  const mantissa = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
  const scientificExponent = pointPosition - 1;
  return `${mantissa}e${scientificExponent < 0 ? '-' : '+'}${Math.abs(scientificExponent)}`;
}

/** Canonical JSON text: object keys sorted by UTF-8 bytes (= code points), no whitespace. */
export function canonicalJson(value: JsonValue): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return canonicalString(value);
  if (value instanceof JsonNumber) return value.canonical;
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  return `{${canonicalMembers(value as JsonObject).join(',')}}`;
}

/** Canonical JSON with a line feed around each top-level member: `{⏎"a":1,⏎"b":2⏎}⏎`, `{}⏎` if empty. */
export function canonicalVarFile(variables: JsonObject): string {
  const members = canonicalMembers(variables);
  return members.length === 0 ? '{}\n' : `{\n${members.join(',\n')}\n}\n`;
}

/** `key:value` texts sorted by the key's UTF-8 bytes. */
function canonicalMembers(object: JsonObject): string[] {
  return [...object]
    .map(([key, member]) => ({ key, member, order: Buffer.from(key, 'utf8') }))
    .sort((a, b) => Buffer.compare(a.order, b.order))
    .map(({ key, member }) => `${canonicalString(key)}:${canonicalJson(member)}`);
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/** Only `"`, `\` and C0 controls are escaped; everything else is literal UTF-8. */
function canonicalString(text: string): string {
  // Parsed input never holds a lone surrogate (the parser refuses them): finding one is a bug.
  if (/\p{Cs}/u.test(text)) throw new Error('canonicalJson: a string holds a lone UTF-16 surrogate');
  const escaped = text.replace(
    /["\\\u0000-\u001f]/g,
    (char) => SHORT_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `"${escaped}"`;
}
