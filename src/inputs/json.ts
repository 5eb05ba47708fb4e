// A strict RFC 8259 JSON parser that keeps numbers exact. JSON.parse would round
// 12345678901234567890 and silently keep the last of two duplicate keys; terraform sees every
// digit, so the inputs hash must too. Numbers are canonicalized as they are read. A negative zero
// is refused: terraform keeps its sign (`"${var.x}"` renders `-0`), so it is not the number 0.
import { JsonSyntaxError } from '../util/json-syntax-error.ts';
import { canonicalNumber, JsonNumber, type JsonObject, type JsonValue } from './canonical.ts';

/** Deeper documents are refused: no real variable nests this far, and recursion stays bounded. */
export const MAX_NESTING = 512;

/** A member or element on the way to a value: an object key or an array index. */
export type JsonPathSegment = string | number;

/**
 * A number that is a negative zero (`-0`, `-0.0`, `-0e5`, …): valid JSON, but the inputs refuse it.
 * `path` leads to it from the top value; the message leaves the path out, since keys may be secret.
 */
export class NegativeZeroError extends Error {
  constructor(
    readonly literal: string,
    readonly path: readonly JsonPathSegment[],
    readonly line: number,
    readonly column: number,
  ) {
    super(`line ${line} column ${column}: ${literal} is a negative zero`);
    this.name = 'NegativeZeroError';
  }
}

/**
 * Parses UTF-8 JSON bytes. Syntax errors name their line and column. Duplicate keys, lone surrogates and a byte order mark are JsonSyntaxErrors;
 * a negative zero is a NegativeZeroError.
 */
export function parseExactJson(bytes: Uint8Array): JsonValue {
  return new Parser(decodeUtf8(bytes)).parseDocument();
}

function decodeUtf8(bytes: Uint8Array): string {
  // ignoreBOM keeps a byte order mark in the text, where the parser refuses it like any stray character.
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  try {
    return decoder.decode(bytes);
  } catch {
    // Decode line by line only to say where: the slow path runs once, on a broken file.
    let lineStart = 0;
    for (let line = 1; ; line++) {
      const newline = bytes.indexOf(0x0a, lineStart);
      const lineEnd = newline === -1 ? bytes.length : newline;
      try {
        decoder.decode(bytes.subarray(lineStart, lineEnd));
      } catch {
        // no cause: the decoder's error says only that the bytes are not UTF-8, and the line says where.
        throw new JsonSyntaxError('the text is not valid UTF-8', { line });
      }
      lineStart = lineEnd + 1;
    }
  }
}

const LITERALS = [
  ['true', true],
  ['false', false],
  ['null', null],
] as const;
/** Names the token in messages such as `found "NaN"`; long enough to recognise, short enough to stay on a line. */
const BARE_WORD = /[A-Za-z_][A-Za-z0-9_]{0,19}/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const NUMBER_CONTINUATION = /[0-9.eE+-]/;
const NEGATIVE_ZERO = /^-0(?:\.0+)?(?:[eE][+-]?[0-9]+)?$/;
const PLAIN_STRING_RUN = /[^"\\\u0000-\u001f]+/y;
const HEX4 = /^[0-9a-fA-F]{4}$/;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

class Parser {
  private pos = 0;
  /** Where the value being parsed sits, for NegativeZeroError. */
  private readonly path: JsonPathSegment[] = [];

  constructor(private readonly text: string) {}

  parseDocument(): JsonValue {
    this.skipWhitespace();
    if (this.pos === this.text.length) throw this.error('the file is empty; expected a JSON value');
    const value = this.parseValue(0);
    this.skipWhitespace();
    if (this.pos < this.text.length) throw this.error(`unexpected ${this.describeNext()} after the JSON value`);
    return value;
  }

  private parseValue(depth: number): JsonValue {
    const next = this.text[this.pos];
    if (next === '{') return this.parseObject(depth + 1);
    if (next === '[') return this.parseArray(depth + 1);
    if (next === '"') return this.parseString();
    if (next === '-' || (next !== undefined && next >= '0' && next <= '9')) return this.parseNumber();
    for (const [word, value] of LITERALS) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return value;
      }
    }
    BARE_WORD.lastIndex = this.pos;
    const word = BARE_WORD.exec(this.text)?.[0];
    throw this.error(`expected a JSON value, found ${word === undefined ? this.describeNext() : `"${word}"`}`);
  }

  private parseObject(depth: number): JsonObject {
    this.checkDepth(depth);
    this.pos++; // {
    const members = new Map<string, JsonValue>();
    const keyOffsets = new Map<string, number>();
    this.parseItems('}', 'an object member', () => {
      if (this.text[this.pos] !== '"') {
        const hint = this.text[this.pos] === '}' ? ' (JSON allows no comma before "}")' : '';
        throw this.error(`expected a key in double quotes, found ${this.describeNext()}${hint}`);
      }
      const keyOffset = this.pos;
      const key = this.parseString();
      const firstOffset = keyOffsets.get(key);
      if (firstOffset !== undefined) {
        // Only top-level keys are named: they are variable names, while nested keys may be secret.
        const name = depth === 1 ? ` "${key}"` : '';
        const first = this.position(firstOffset);
        throw this.error(`duplicate key${name} (first at line ${first.line} column ${first.column})`, keyOffset);
      }
      keyOffsets.set(key, keyOffset);
      this.skipWhitespace();
      this.expect(':', 'after an object key');
      this.skipWhitespace();
      this.path.push(key);
      members.set(key, this.parseValue(depth));
      this.path.pop();
    });
    return members;
  }

  private parseArray(depth: number): JsonValue[] {
    this.checkDepth(depth);
    this.pos++; // [
    const elements: JsonValue[] = [];
    this.parseItems(']', 'an array element', () => {
      if (this.text[this.pos] === ']')
        throw this.error('expected a JSON value after ",": JSON allows no comma before "]"');
      this.path.push(elements.length);
      elements.push(this.parseValue(depth));
      this.path.pop();
    });
    return elements;
  }

  /** The members or elements of a container, after its opener, up to and past `closer`: `parseItem` reads one, commas separate them. */
  private parseItems(closer: '}' | ']', item: string, parseItem: () => void): void {
    this.skipWhitespace();
    if (this.text[this.pos] === closer) {
      this.pos++;
      return;
    }
    for (;;) {
      parseItem();
      this.skipWhitespace();
      if (this.text[this.pos] === closer) {
        this.pos++;
        return;
      }
      this.expect(',', `or "${closer}" after ${item}`);
      this.skipWhitespace();
    }
  }

  private parseString(): string {
    const start = this.pos;
    this.pos++; // opening quote
    let value = '';
    for (;;) {
      PLAIN_STRING_RUN.lastIndex = this.pos;
      const run = PLAIN_STRING_RUN.exec(this.text);
      if (run) {
        value += run[0];
        this.pos += run[0].length;
      }
      const next = this.text[this.pos];
      if (next === '"') {
        this.pos++;
        return value;
      }
      if (next === undefined) throw this.error('the string is not closed: a double quote is missing', start);
      if (next !== '\\')
        throw this.error(`control character ${this.describeNext()} inside a string: write it as an escape`);
      value += this.parseEscape();
    }
  }

  private parseEscape(): string {
    const start = this.pos;
    const letter = this.text[this.pos + 1];
    if (letter !== undefined && Object.hasOwn(SIMPLE_ESCAPES, letter)) {
      this.pos += 2;
      return SIMPLE_ESCAPES[letter]!;
    }
    if (letter !== 'u') throw this.error('invalid escape: JSON allows \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX');
    const unit = this.readUnicodeEscape();
    if (unit >= 0xdc00 && unit <= 0xdfff) throw this.error(loneSurrogate(unit), start);
    if (unit < 0xd800 || unit > 0xdbff) return String.fromCharCode(unit);
    const low = this.text.startsWith('\\u', this.pos) ? this.readUnicodeEscape() : undefined;
    if (low === undefined || low < 0xdc00 || low > 0xdfff) throw this.error(loneSurrogate(unit), start);
    return String.fromCharCode(unit, low);
  }

  /** Reads `\uXXXX` at the current position and returns the code unit. */
  private readUnicodeEscape(): number {
    const hex = this.text.slice(this.pos + 2, this.pos + 6);
    if (!HEX4.test(hex)) throw this.error('invalid escape: \\u needs four hexadecimal digits');
    this.pos += 6;
    return parseInt(hex, 16);
  }

  private parseNumber(): JsonNumber {
    const start = this.pos;
    NUMBER.lastIndex = start;
    const literal = NUMBER.exec(this.text)?.[0];
    if (literal === undefined) throw this.error(`expected a digit, found ${this.describeNext(start + 1)}`, start + 1);
    this.pos += literal.length;
    if (NUMBER_CONTINUATION.test(this.text[this.pos] ?? '')) {
      throw this.error('malformed number: JSON numbers have no leading zeros, "+" sign, or bare "." or "e"', start);
    }
    if (NEGATIVE_ZERO.test(literal)) {
      const { line, column } = this.position(start);
      throw new NegativeZeroError(literal, [...this.path], line, column);
    }
    try {
      return new JsonNumber(canonicalNumber(literal));
    } catch (error) {
      if (error instanceof RangeError) throw this.error(`${error.message}, an absurd exponent`, start);
      throw error;
    }
  }

  private checkDepth(depth: number): void {
    if (depth > MAX_NESTING) throw this.error(`objects and arrays are nested deeper than ${MAX_NESTING} levels`);
  }

  private expect(char: string, context: string): void {
    if (this.text[this.pos] !== char) throw this.error(`expected "${char}" ${context}, found ${this.describeNext()}`);
    this.pos++;
  }

  private skipWhitespace(): void {
    while (this.pos < this.text.length) {
      const char = this.text[this.pos];
      if (char !== ' ' && char !== '\t' && char !== '\n' && char !== '\r') return;
      this.pos++;
    }
  }

  private describeNext(offset = this.pos): string {
    const codePoint = this.text.codePointAt(offset);
    if (codePoint === undefined) return 'the end of the file';
    if (codePoint === 0xfeff) return 'a byte order mark (save the file as UTF-8 without BOM)';
    const hex = `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
    if (codePoint < 0x20 || codePoint === 0x7f) return hex;
    return codePoint < 0x80 ? `"${String.fromCodePoint(codePoint)}"` : `"${String.fromCodePoint(codePoint)}" (${hex})`;
  }

  private position(offset: number): { line: number; column: number } {
    const before = this.text.slice(0, offset);
    const lineStart = before.lastIndexOf('\n') + 1;
    return { line: before.split('\n').length, column: [...before.slice(lineStart)].length + 1 };
  }

  private error(problem: string, offset = this.pos): JsonSyntaxError {
    const { line, column } = this.position(offset);
    return new JsonSyntaxError(problem, { line, column });
  }
}

function loneSurrogate(unit: number): string {
  return `\\u${unit.toString(16).padStart(4, '0')} is half of a surrogate pair without its other half; escape the whole character`;
}
