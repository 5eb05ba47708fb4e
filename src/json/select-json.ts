// A streaming JSON reader that builds only the parts of a document a Selector asks for and skips
// the rest without building anything. terraform's plan and state documents can be larger than the
// largest string Node can hold (512 MiB), and almost all their bytes are attribute values the runner
// never reads. The whole document is still validated as JSON (RFC 8259 grammar, string escapes,
// number syntax), so truncated or malformed input is always an error with its byte offset.
//
// Why not a library: on a 266 MB plan from scripts/generators/gen-plan.mjs (Node 20, one core), stream-json
// 2.1.0 (parser + pick + streamArray) classified at ~10 MB/s and @streamparser/json 0.0.26 with
// path selection at ~37 MB/s (its tokenizer alone: ~65 MB/s), below the 100 MB/s target; this
// reader classifies the same file at ~110-170 MB/s with a flat ~100 MB RSS.

import { JsonSyntaxError } from '../util/json-syntax-error.ts';

/** Build this value completely (only for values known to be small). */
export const KEEP = 'keep';

export interface Shape {
  /** For an object: the selector of each wanted key (a function may look at the fields built so far). */
  fields?: Readonly<Record<string, Selector>> | ((key: string, built: Record<string, unknown>) => Selector | undefined);
  /** With a `fields` record: the selector of a key that is not in it (such keys are then decoded, so keep it to small objects). */
  otherFields?: (key: string) => Selector | undefined;
  /** For an object: one selector for every key (a map such as output_changes). */
  members?: Selector;
  /** For an array: the selector of every item. */
  items?: Selector;
  /**
   * Hands the finished value over instead of storing it in its parent, so that a long list is never
   * held: `key` is its key or index in the parent. A value of an unexpected type comes as it is
   * (scalars) or empty (an array where an object was expected gives [], and the reverse {}).
   */
  emit?: (value: unknown, key: string | number | undefined) => void;
}

/**
 * Builds nothing, and tells whether the value holds content: a non-empty array or object, or a
 * scalar other than null and false. `key` is its key or index in the parent.
 */
export interface Probe {
  probe: (hasContent: boolean, key: string | number | undefined) => void;
}
export type Selector = typeof KEEP | Shape | Probe;

const isProbe = (selector: Selector | undefined): selector is Probe =>
  typeof selector === 'object' && (selector as Partial<Probe>).probe !== undefined;
/** Whether a token under this selector is built (a probe only needs to know it is there). */
const builds = (selector: Selector | undefined) => selector !== undefined && !isProbe(selector);

// The reader's states are const enums: esbuild writes their members as the plain numbers the hot
// loop switches on (an object of named numbers measured about a tenth slower on a 300 MB plan).

/** Where the lexer is between bytes. */
const enum Lex {
  /** A value must start (whitespace allowed). */
  Value,
  /** Right after '{'. */
  FirstKeyOrEnd,
  /** After ',' in an object. */
  Key,
  Colon,
  /** After a value inside a container. */
  CommaOrEnd,
  /** Right after '['. */
  FirstItemOrEnd,
  String,
  /** After a backslash. */
  StringEscape,
  /** Inside \uXXXX. */
  StringUnicode,
  Number,
  /** true, false, null. */
  Literal,
  /** The top-level value is complete: only whitespace may follow. */
  Done,
}

/** Where a number is in the JSON number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`. */
const enum NumberPart {
  Minus,
  Zero,
  Int,
  Dot,
  Fraction,
  E,
  ExponentSign,
  Exponent,
}

/** The kind of an open container. */
const enum Container {
  Object = 1,
  Array = 2,
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const isWhitespace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHexDigit = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const LITERALS: Readonly<Record<number, string>> = { 0x74: 'true', 0x66: 'false', 0x6e: 'null' };
const LITERAL_VALUES: Readonly<Record<string, unknown>> = { true: true, false: false, null: null };
const ESCAPABLE = new Set([...'"\\/bfnrtu'].map((c) => c.charCodeAt(0)));

// Byte tables for the loop that reads between tokens (#fast): one lookup per byte where
// the byte-by-byte path makes comparisons and calls.
const enum Byte {
  Other,
  Space,
  Quote,
  OpenObject,
  CloseObject,
  OpenArray,
  CloseArray,
  Colon,
  Comma,
  NumberStart,
  LiteralStart,
}
const BYTE_CLASS = new Uint8Array(256);
for (const c of ' \n\r\t') BYTE_CLASS[c.charCodeAt(0)] = Byte.Space;
for (const c of '-0123456789') BYTE_CLASS[c.charCodeAt(0)] = Byte.NumberStart;
for (const c of 'tfn') BYTE_CLASS[c.charCodeAt(0)] = Byte.LiteralStart;
BYTE_CLASS[QUOTE] = Byte.Quote;
BYTE_CLASS[0x7b] = Byte.OpenObject;
BYTE_CLASS[0x7d] = Byte.CloseObject;
BYTE_CLASS[0x5b] = Byte.OpenArray;
BYTE_CLASS[0x5d] = Byte.CloseArray;
BYTE_CLASS[0x3a] = Byte.Colon;
BYTE_CLASS[0x2c] = Byte.Comma;

/** Inside a string: a byte that needs no decision, the closing quote, a backslash, a control character. */
const enum InString {
  Plain,
  Quote,
  Backslash,
  Control,
}
const IN_STRING = new Uint8Array(256);
IN_STRING.fill(InString.Control, 0, 0x20);
IN_STRING[QUOTE] = InString.Quote;
IN_STRING[BACKSLASH] = InString.Backslash;

const byteSet = (chars: string) => {
  const set = new Uint8Array(256);
  for (const c of chars) set[c.charCodeAt(0)] = 1;
  return set;
};
const DIGIT = byteSet('0123456789');
const HEX_DIGIT = byteSet('0123456789abcdefABCDEF');
/** The escapes other than \u. */
const SHORT_ESCAPE = byteSet('"\\/bfnrt');
/** The bytes a number may go on with: after one, the byte-by-byte grammar decides (1.2.3, 01, 1e). */
const NUMBER_GOES_ON = byteSet('0123456789.eE+-');
const LITERAL_BYTES: Readonly<Record<number, Buffer>> = Object.fromEntries(
  Object.entries(LITERALS).map(([c, literal]) => [c, Buffer.from(literal)]),
);

/** Whether the string skipString last read whole held an escape. */
let stringHadEscape = false;

/** The closing quote of a valid string whose contents start at `j`, or -1 when the chunk ends first or the string is malformed. */
function skipString(buf: Buffer, j: number): number {
  const n = buf.length;
  stringHadEscape = false;
  while (j < n) {
    const kind = IN_STRING[buf[j]!]!;
    if (kind === InString.Plain) {
      j++;
    } else if (kind === InString.Quote) {
      return j;
    } else if (kind === InString.Backslash && j + 1 < n && SHORT_ESCAPE[buf[j + 1]!] === 1) {
      stringHadEscape = true;
      j += 2;
    } else if (
      kind === InString.Backslash &&
      j + 5 < n &&
      buf[j + 1] === 0x75 &&
      HEX_DIGIT[buf[j + 2]!]! & HEX_DIGIT[buf[j + 3]!]! & HEX_DIGIT[buf[j + 4]!]! & HEX_DIGIT[buf[j + 5]!]!
    ) {
      stringHadEscape = true;
      j += 6;
    } else {
      return -1;
    }
  }
  return -1;
}

/** The end of a valid number starting at `i` and followed by a byte that cannot continue it, or -1. */
function skipNumber(buf: Buffer, i: number): number {
  const n = buf.length;
  let j = buf[i] === 0x2d ? i + 1 : i;
  if (j < n && buf[j] === 0x30) j++;
  else if (j < n && DIGIT[buf[j]!] === 1) while (j < n && DIGIT[buf[j]!] === 1) j++;
  else return -1;
  if (j < n && buf[j] === 0x2e) {
    if (++j === n || DIGIT[buf[j]!] === 0) return -1;
    while (j < n && DIGIT[buf[j]!] === 1) j++;
  }
  if (j < n && (buf[j] === 0x65 || buf[j] === 0x45)) {
    if (++j < n && (buf[j] === 0x2b || buf[j] === 0x2d)) j++;
    if (j === n || DIGIT[buf[j]!] === 0) return -1;
    while (j < n && DIGIT[buf[j]!] === 1) j++;
  }
  return j === n || NUMBER_GOES_ON[buf[j]!] === 1 ? -1 : j;
}

/** No bytes of the token kept from earlier chunks (shared: most tokens fit in one chunk). */
const NO_PARTS: Buffer[] = [];

/** A container being built: the selector that chose it and what it holds so far. */
interface Frame {
  selector: typeof KEEP | Shape;
  value: Record<string, unknown> | unknown[];
  /** The current key (objects) or the index of the next item (arrays). */
  key: string | undefined;
  index: number;
}

/**
 * Buffer's own decoders, which toString calls through JavaScript of Node's (an encoding switch and
 * two calls, more code for V8 to compile in a fresh process, per token). Node has them on every
 * Buffer; the unit test of this file fails if a Node version drops them.
 */
interface Decoders {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}
const latin1 = (buf: Buffer, start: number, end: number) => (buf as unknown as Decoders).latin1Slice(start, end);
const utf8 = (buf: Buffer, start: number, end: number) => (buf as unknown as Decoders).utf8Slice(start, end);

/** Field names by their bytes read as latin1 (one character a byte), per `fields` record, to match keys without decoding them. */
const fieldNamesByBytes = new WeakMap<object, ReadonlyMap<string, string>>();

function describeByte(c: number): string {
  return c >= 0x20 && c < 0x7f ? JSON.stringify(String.fromCharCode(c)) : `byte 0x${c.toString(16).padStart(2, '0')}`;
}

/**
 * Feed bytes with write(), then call end(). Throws JsonSyntaxError at the first byte that cannot
 * continue a JSON document, and from end() when the document is incomplete or empty.
 */
export class SelectiveJsonReader {
  readonly #root: Selector;
  #state: Lex = Lex.Value;
  #offset = 0; // bytes consumed before the current chunk
  #started = false;

  // Open containers: the kind of every one (skipped ones too, to check the grammar), and a frame for
  // each one being built. Built containers are always the outermost ones: frames[d] is depth d.
  #kinds = new Uint8Array(64);
  #depth = 0;
  readonly #frames: Frame[] = [];
  /** Depth of the outermost skipped container, or -1 when nothing is being skipped. */
  #skipFrom = -1;
  /** The probe of the skipped container at #skipFrom, if a probe chose it: whether it got a first item or key. */
  #probe: { selector: Probe; depth: number; content: boolean } | undefined;

  // The token being read (string, number or literal): its selector (undefined: skipped), and its
  // bytes when it is built (tokenStart in the current chunk, tokenParts from earlier chunks).
  #tokenSelector: Selector | undefined;
  #tokenIsKey = false;
  #capture = false;
  #tokenStart = 0;
  #tokenParts: Buffer[] = NO_PARTS;
  #stringHasEscape = false;
  #unicodeDigitsLeft = 0;
  #numberState: NumberPart = NumberPart.Minus;
  #literal = '';
  #literalIndex = 0;
  /** #fast gave up at the current byte: the byte-by-byte path reads it (and the token it starts). */
  #byteByByte = false;

  constructor(root: Selector) {
    this.#root = root;
  }

  /** Whether anything but whitespace has been read. */
  get started(): boolean {
    return this.#started;
  }

  write(chunk: Uint8Array): void {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.#tokenStart = 0; // a token carried over from the previous chunk goes on from byte 0
    const n = buf.length;
    let i = 0;
    while (i < n) {
      if (this.#depth > 0 && this.#state <= Lex.FirstItemOrEnd && !this.#byteByByte) {
        i = this.#fast(buf, i);
        continue;
      }
      this.#byteByByte = false;
      const c = buf[i]!;
      switch (this.#state) {
        case Lex.String: {
          // The hot loop: most of a plan's bytes are inside strings.
          let j = i;
          while (j < n && IN_STRING[buf[j]!] === InString.Plain) j++;
          const d = buf[j]!;
          if (j === n) {
            i = n;
          } else if (d === QUOTE) {
            this.#endString(buf, j);
            i = j + 1;
          } else if (d === BACKSLASH) {
            this.#stringHasEscape = true;
            this.#state = Lex.StringEscape;
            i = j + 1;
          } else {
            this.#fail(j, `control character ${describeByte(d)} inside a string`);
          }
          break;
        }
        case Lex.StringEscape:
          if (!ESCAPABLE.has(c)) this.#fail(i, `invalid escape "\\${String.fromCharCode(c)}" in a string`);
          if (c === 0x75) {
            this.#state = Lex.StringUnicode;
            this.#unicodeDigitsLeft = 4;
          } else this.#state = Lex.String;
          i++;
          break;
        case Lex.StringUnicode:
          if (!isHexDigit(c)) this.#fail(i, `invalid \\u escape: ${describeByte(c)} is not a hex digit`);
          if (--this.#unicodeDigitsLeft === 0) this.#state = Lex.String;
          i++;
          break;
        case Lex.Number:
          if (this.#continueNumber(c)) i++;
          else this.#endNumber(buf, i); // c follows the number: read it again in the new state
          break;
        case Lex.Literal:
          if (c !== this.#literal.charCodeAt(this.#literalIndex)) {
            this.#fail(i, `invalid literal: expected ${JSON.stringify(this.#literal)}`);
          }
          if (++this.#literalIndex === this.#literal.length)
            this.#deliver(LITERAL_VALUES[this.#literal], this.#tokenSelector);
          i++;
          break;
        default:
          if (isWhitespace(c)) {
            i++;
          } else {
            this.#structural(i, c);
            i = this.#wholeToken(buf, i);
          }
      }
    }
    if (this.#capture) {
      // The token goes on in the next chunk: keep a copy of its bytes (built tokens are small).
      if (this.#tokenParts === NO_PARTS) this.#tokenParts = [];
      this.#tokenParts.push(Buffer.from(buf.subarray(this.#tokenStart)));
    }
    this.#offset += n;
  }

  /**
   * Reads on from `i` inside the document's containers, between tokens, until the chunk ends or a
   * byte needs the byte-by-byte path: a token the chunk cuts, anything malformed (that path says what
   * is wrong and where), a nesting deeper than #kinds holds while skipping. Skipped containers, most
   * of a document's bytes, cost no call per token; in built ones, whole tokens are read here and only
   * what builds is called (#open, #close, a key, a scalar's delivery). This loop keeps its state in
   * locals and makes no call per byte, so that it is fast in a fresh process, from the first
   * document (the byte-by-byte path, a switch on a field and calls per byte, is not before V8 has
   * optimised it). Returns where reading goes on.
   */
  #fast(buf: Buffer, i: number): number {
    const n = buf.length;
    let kinds = this.#kinds;
    let skipFrom = this.#skipFrom;
    let probe = this.#probe;
    let depth = this.#depth;
    let state = this.#state;
    let gaveUp = false;
    read: while (i < n) {
      const c = buf[i]!;
      const byte = BYTE_CLASS[c]!;
      if (byte === Byte.Space) {
        i++;
        continue;
      }
      // A container's end: inside a skipped one counted here; its own end, or a built one's, by #close.
      let closes = false;
      switch (state) {
        case Lex.Colon:
          if (byte !== Byte.Colon) break;
          state = Lex.Value;
          i++;
          continue read;
        case Lex.CommaOrEnd: {
          const kind = kinds[depth - 1];
          if (byte === Byte.Comma) {
            state = kind === Container.Object ? Lex.Key : Lex.Value;
            i++;
            continue read;
          }
          closes =
            (byte === Byte.CloseObject && kind === Container.Object) ||
            (byte === Byte.CloseArray && kind === Container.Array);
          break;
        }
        case Lex.FirstKeyOrEnd:
        case Lex.Key: {
          if (state === Lex.FirstKeyOrEnd && byte === Byte.CloseObject) {
            closes = true;
            break;
          }
          if (byte !== Byte.Quote) break;
          const end = skipString(buf, i + 1);
          if (end < 0) break;
          if (skipFrom < 0) {
            // A key of a built object: #readKey matches or decodes it.
            this.#tokenStart = i + 1;
            this.#tokenParts = NO_PARTS;
            this.#stringHasEscape = stringHadEscape;
            this.#capture = true;
            this.#frames[depth - 1]!.key = this.#readKey(buf, end);
          } else if (state === Lex.FirstKeyOrEnd && probe !== undefined && depth === probe.depth + 1)
            probe.content = true;
          state = Lex.Colon;
          i = end + 1;
          continue read;
        }
        case Lex.FirstItemOrEnd:
        case Lex.Value: {
          if (state === Lex.FirstItemOrEnd && byte === Byte.CloseArray) {
            closes = true;
            break;
          }
          // A first item (as the byte-by-byte path, before it reads the item: a malformed one throws anyway).
          if (state === Lex.FirstItemOrEnd && probe !== undefined && depth === probe.depth + 1) probe.content = true;
          if (byte === Byte.OpenObject || byte === Byte.OpenArray) {
            const kind = byte === Byte.OpenObject ? Container.Object : Container.Array;
            if (skipFrom < 0) {
              this.#depth = depth;
              this.#open(kind);
              kinds = this.#kinds;
              skipFrom = this.#skipFrom;
              probe = this.#probe;
              depth = this.#depth;
            } else {
              if (depth === kinds.length) break;
              kinds[depth++] = kind;
            }
            state = kind === Container.Object ? Lex.FirstKeyOrEnd : Lex.FirstItemOrEnd;
            i++;
            continue read;
          }
          let end = -1;
          if (byte === Byte.Quote) {
            end = skipString(buf, i + 1);
            if (end >= 0) end++;
          } else if (byte === Byte.NumberStart) {
            end = skipNumber(buf, i);
          } else if (byte === Byte.LiteralStart) {
            const literal = LITERAL_BYTES[c]!;
            let k = 1;
            while (k < literal.length && buf[i + k] === literal[k]) k++;
            if (k === literal.length) end = i + k;
          }
          if (end < 0) break;
          if (skipFrom < 0) this.#builtScalar(buf, i, end, byte);
          state = Lex.CommaOrEnd;
          i = end;
          continue read;
        }
      }
      if (!closes) {
        gaveUp = true;
        break;
      }
      if (depth - 1 > skipFrom && skipFrom >= 0) {
        depth--;
      } else {
        // A built container's end, or the skipped one's own (its probe is told).
        this.#depth = depth;
        this.#close();
        skipFrom = this.#skipFrom;
        probe = this.#probe;
        depth = this.#depth;
        if (depth === 0) {
          state = Lex.Done;
          i++;
          break;
        }
      }
      state = Lex.CommaOrEnd;
      i++;
    }
    this.#depth = depth;
    this.#state = state;
    this.#byteByByte = gaveUp;
    return i;
  }

  /**
   * A whole scalar token [start, end) in a built container, read by #fast: delivered as the
   * byte-by-byte path would, without that path's steps per token (each function called per token is
   * one more that V8 compiles in a fresh process, BENCHMARKS.md: the JSON reader).
   */
  #builtScalar(buf: Buffer, start: number, end: number, byte: Byte): void {
    const selector = this.#selectorHere();
    let value: unknown; // a probed or skipped string or number is not built
    if (byte === Byte.LiteralStart) value = LITERAL_VALUES[LITERALS[buf[start]!]!];
    else if (selector !== undefined && !isProbe(selector)) {
      if (byte === Byte.Quote) {
        const text = utf8(buf, start + 1, end - 1);
        // skipString checked the escapes, so parsing the quoted raw text cannot fail.
        value = stringHadEscape ? (JSON.parse(`"${text}"`) as string) : text;
      } else value = Number(latin1(buf, start, end));
    }
    this.#deliver(value, selector);
  }

  /**
   * After the first byte of a token at `i` (#structural has begun it): reads the whole token at once
   * when it is valid and the chunk holds it and the byte after it, as the byte-by-byte states would
   * have read it, and returns where reading goes on. Anything else (a token the chunk cuts, a
   * malformed one) is left to those states, which say where it broke.
   */
  #wholeToken(buf: Buffer, i: number): number {
    const state = this.#state;
    if (state === Lex.String) {
      const end = skipString(buf, i + 1);
      if (end < 0) return i + 1;
      this.#stringHasEscape = stringHadEscape;
      this.#endString(buf, end);
      return end + 1;
    }
    if (state === Lex.Number) {
      const end = skipNumber(buf, i);
      if (end < 0) return i + 1;
      this.#numberState = NumberPart.Int; // a whole number: skipNumber read its grammar
      this.#endNumber(buf, end);
      return end;
    }
    if (state === Lex.Literal) {
      const literal = this.#literal;
      let k = 1;
      while (k < literal.length && buf[i + k] === literal.charCodeAt(k)) k++;
      if (k < literal.length) return i + 1;
      this.#deliver(LITERAL_VALUES[literal], this.#tokenSelector);
      return i + k;
    }
    return i + 1;
  }

  end(): void {
    if (this.#state === Lex.Number) this.#endNumber(Buffer.alloc(0), 0);
    if (this.#state === Lex.Done) return;
    if (!this.#started) throw new JsonSyntaxError('the document is empty', { offset: this.#offset });
    const where =
      this.#state === Lex.String || this.#state === Lex.StringEscape || this.#state === Lex.StringUnicode
        ? 'inside a string'
        : this.#state === Lex.Literal
          ? `inside the literal ${JSON.stringify(this.#literal)}`
          : `with ${this.#depth} unclosed ${this.#depth === 1 ? 'object or array' : 'objects or arrays'}`;
    throw new JsonSyntaxError(`the document is truncated: it ends ${where}`, { offset: this.#offset });
  }

  /** A byte outside any token: structure, or the first byte of a value. */
  #structural(i: number, c: number): void {
    switch (this.#state) {
      case Lex.FirstItemOrEnd:
        if (c === 0x5d) return this.#close();
        this.#noteFirstChild();
        return this.#startValue(i, c);
      case Lex.Value:
        return this.#startValue(i, c);
      case Lex.FirstKeyOrEnd:
      case Lex.Key:
        if (c === 0x7d && this.#state === Lex.FirstKeyOrEnd) return this.#close();
        if (c !== QUOTE) return this.#fail(i, `unexpected ${describeByte(c)} where an object key was expected`);
        if (this.#state === Lex.FirstKeyOrEnd) this.#noteFirstChild();
        this.#tokenIsKey = true;
        return this.#startString(i, this.#skipFrom < 0);
      case Lex.Colon:
        if (c !== 0x3a) return this.#fail(i, `unexpected ${describeByte(c)} where ":" was expected`);
        this.#state = Lex.Value;
        return;
      case Lex.CommaOrEnd: {
        const kind = this.#kinds[this.#depth - 1];
        if (c === 0x2c) {
          this.#state = kind === Container.Object ? Lex.Key : Lex.Value;
          return;
        }
        if ((c === 0x7d && kind === Container.Object) || (c === 0x5d && kind === Container.Array)) return this.#close();
        return this.#fail(
          i,
          `unexpected ${describeByte(c)} where "," or "${kind === Container.Object ? '}' : ']'}" was expected`,
        );
      }
      default: // Lex.Done
        return this.#fail(i, `unexpected ${describeByte(c)} after the end of the document`);
    }
  }

  /** A container's first item or key: a probed container holds content. */
  #noteFirstChild(): void {
    if (this.#probe !== undefined && this.#depth === this.#probe.depth + 1) this.#probe.content = true;
  }

  /** The selector of the value that starts now, or undefined to skip it. */
  #selectorHere(): Selector | undefined {
    if (this.#depth === 0) return this.#root;
    if (this.#skipFrom >= 0) return undefined;
    const parent = this.#frames[this.#depth - 1]!;
    if (parent.selector === KEEP) return KEEP;
    if (Array.isArray(parent.value)) return parent.selector.items;
    const { fields, members, otherFields } = parent.selector;
    const key = parent.key;
    if (typeof fields === 'function') return fields(key!, parent.value);
    if (fields !== undefined) {
      if (key === undefined) return undefined;
      return Object.hasOwn(fields, key) ? fields[key] : otherFields?.(key);
    }
    return members;
  }

  #startValue(i: number, c: number): void {
    this.#started = true;
    this.#tokenIsKey = false;
    if (c === 0x7b) return this.#open(Container.Object);
    if (c === 0x5b) return this.#open(Container.Array);
    this.#tokenSelector = this.#selectorHere();
    if (c === QUOTE) return this.#startString(i, builds(this.#tokenSelector));
    if (c === 0x2d || isDigit(c)) {
      this.#state = Lex.Number;
      this.#numberState = c === 0x2d ? NumberPart.Minus : c === 0x30 ? NumberPart.Zero : NumberPart.Int;
      this.#startToken(i, builds(this.#tokenSelector));
      return;
    }
    const literal = LITERALS[c];
    if (literal === undefined) return this.#fail(i, `unexpected ${describeByte(c)} where a value was expected`);
    this.#state = Lex.Literal;
    this.#literal = literal;
    this.#literalIndex = 1;
  }

  #startToken(start: number, capture: boolean): void {
    this.#capture = capture;
    this.#tokenStart = start;
    this.#tokenParts = NO_PARTS;
  }

  #startString(i: number, capture: boolean): void {
    this.#state = Lex.String;
    this.#stringHasEscape = false;
    this.#startToken(i + 1, capture);
  }

  #endString(buf: Buffer, closingQuote: number): void {
    if (!this.#tokenIsKey)
      return this.#deliver(this.#capture ? this.#decodeString(buf, closingQuote) : undefined, this.#tokenSelector);
    this.#state = Lex.Colon;
    if (this.#capture) this.#frames[this.#depth - 1]!.key = this.#readKey(buf, closingQuote);
  }

  #decodeString(buf: Buffer, end: number): string {
    const text = this.#takeToken(buf, end, 'utf8');
    // The escapes were checked while reading, so parsing the quoted raw text cannot fail.
    return this.#stringHasEscape ? (JSON.parse(`"${text}"`) as string) : text;
  }

  /**
   * The key just read in a container being built. Keys of objects with a fixed set of fields are
   * matched as bytes, without decoding: most keys of a plan entry are not wanted (undefined). A key
   * the chunk holds whole without escapes (almost every one) is read here, in this one call.
   */
  #readKey(buf: Buffer, end: number): string | undefined {
    if (this.#stringHasEscape || this.#tokenParts.length > 0) return this.#decodeString(buf, end);
    this.#capture = false;
    const { selector } = this.#frames[this.#depth - 1]!;
    const fields = selector === KEEP ? undefined : selector.fields;
    if (fields === undefined || typeof fields === 'function') return utf8(buf, this.#tokenStart, end);
    let names = fieldNamesByBytes.get(fields);
    if (names === undefined) {
      names = new Map(Object.keys(fields).map((name) => [Buffer.from(name, 'utf8').toString('latin1'), name]));
      fieldNamesByBytes.set(fields, names);
    }
    const name = names.get(latin1(buf, this.#tokenStart, end));
    if (name === undefined && selector !== KEEP && selector.otherFields !== undefined)
      return utf8(buf, this.#tokenStart, end);
    return name;
  }

  /** Advances the number grammar by one byte; false when the byte cannot continue the number. */
  #continueNumber(c: number): boolean {
    const digit = isDigit(c);
    switch (this.#numberState) {
      case NumberPart.Minus:
        if (!digit) return false;
        this.#numberState = c === 0x30 ? NumberPart.Zero : NumberPart.Int;
        return true;
      case NumberPart.Int:
      case NumberPart.Zero:
        if (digit && this.#numberState === NumberPart.Int) return true;
        if (c === 0x2e) this.#numberState = NumberPart.Dot;
        else if (c === 0x65 || c === 0x45) this.#numberState = NumberPart.E;
        else return false;
        return true;
      case NumberPart.Dot:
        if (!digit) return false;
        this.#numberState = NumberPart.Fraction;
        return true;
      case NumberPart.Fraction:
        if (c === 0x65 || c === 0x45) this.#numberState = NumberPart.E;
        else if (!digit) return false;
        return true;
      case NumberPart.E:
        if (c === 0x2b || c === 0x2d) this.#numberState = NumberPart.ExponentSign;
        else if (digit) this.#numberState = NumberPart.Exponent;
        else return false;
        return true;
      default: // NumberPart.ExponentSign, NumberPart.Exponent
        if (!digit) return false;
        this.#numberState = NumberPart.Exponent;
        return true;
    }
  }

  #endNumber(buf: Buffer, end: number): void {
    const s = this.#numberState;
    if (s !== NumberPart.Zero && s !== NumberPart.Int && s !== NumberPart.Fraction && s !== NumberPart.Exponent) {
      if (end < buf.length) this.#fail(end, `invalid number: unexpected ${describeByte(buf[end]!)}`);
      throw new JsonSyntaxError('the document is truncated: it ends inside a number', { offset: this.#offset + end });
    }
    this.#deliver(this.#capture ? Number(this.#takeToken(buf, end, 'latin1')) : undefined, this.#tokenSelector);
  }

  /** The token's text, its bytes decoded (read straight from the chunk when it began in it: no Buffer made per token). */
  #takeToken(buf: Buffer, end: number, encoding: 'utf8' | 'latin1'): string {
    this.#capture = false;
    if (this.#tokenParts.length === 0)
      return encoding === 'utf8' ? utf8(buf, this.#tokenStart, end) : latin1(buf, this.#tokenStart, end);
    const whole = Buffer.concat([...this.#tokenParts, buf.subarray(this.#tokenStart, end)]);
    this.#tokenParts = NO_PARTS;
    return whole.toString(encoding);
  }

  #open(kind: Container): void {
    const selector = this.#selectorHere();
    if (selector === undefined || isProbe(selector)) {
      if (this.#skipFrom < 0) {
        this.#skipFrom = this.#depth;
        if (selector !== undefined) this.#probe = { selector, depth: this.#depth, content: false };
      }
    } else {
      this.#frames.push({ selector, value: kind === Container.Object ? {} : [], key: undefined, index: 0 });
    }
    if (this.#depth === this.#kinds.length) {
      const grown = new Uint8Array(this.#kinds.length * 2);
      grown.set(this.#kinds);
      this.#kinds = grown;
    }
    this.#kinds[this.#depth++] = kind;
    this.#state = kind === Container.Object ? Lex.FirstKeyOrEnd : Lex.FirstItemOrEnd;
  }

  #close(): void {
    this.#depth--;
    this.#state = this.#depth === 0 ? Lex.Done : Lex.CommaOrEnd;
    if (this.#skipFrom >= 0) {
      if (this.#skipFrom !== this.#depth) return;
      this.#skipFrom = -1; // the skipped container itself ended
      const probe = this.#probe;
      this.#probe = undefined;
      // As a scalar would be: true holds content, null does not.
      if (probe !== undefined) this.#deliver(probe.content ? true : null, probe.selector);
      return;
    }
    const frame = this.#frames.pop()!;
    this.#deliver(frame.value, frame.selector);
  }

  /** A value ended (the reader goes on after it): hand it to its selector's emit, or store it in its parent. */
  #deliver(value: unknown, selector: Selector | undefined): void {
    this.#state = this.#depth === 0 ? Lex.Done : Lex.CommaOrEnd;
    if (selector === undefined) return;
    const parent = this.#depth > 0 ? this.#frames[this.#depth - 1]! : undefined;
    const isItem = parent !== undefined && Array.isArray(parent.value);
    const key = parent === undefined ? undefined : isItem ? parent.index++ : parent.key;
    // A probed string or number was not built (undefined): it holds content.
    if (isProbe(selector)) return selector.probe(value !== null && value !== false, key);
    if (selector !== KEEP && selector.emit !== undefined) return selector.emit(value, key);
    if (parent === undefined) return;
    if (isItem) (parent.value as unknown[]).push(value);
    // Like JSON.parse, make "__proto__" an own property rather than the object's prototype.
    else if (key === '__proto__')
      Object.defineProperty(parent.value, key, { value, enumerable: true, writable: true, configurable: true });
    else (parent.value as Record<string, unknown>)[key as string] = value;
  }

  #fail(i: number, problem: string): never {
    throw new JsonSyntaxError(problem, { offset: this.#offset + i });
  }
}

/** Bytes as they arrive: a Node Readable (without an encoding, or with utf8) or any async iterable. */
export type ByteSource = AsyncIterable<Uint8Array | string>;

/**
 * Reads a whole source through a SelectiveJsonReader. Returns false when the source held nothing
 * but whitespace (some callers treat that as "no document"); throws JsonSyntaxError otherwise.
 */
export async function readSelected(
  source: ByteSource,
  root: Selector,
  afterChunk?: () => Promise<void>,
): Promise<boolean> {
  const reader = new SelectiveJsonReader(root);
  for await (const chunk of source) {
    reader.write(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    await afterChunk?.();
  }
  if (!reader.started) return false;
  reader.end();
  return true;
}
