// Where the values of a JSON document are in its text, without parsing it whole: a state is edited
// as text, because a JSON round trip in JavaScript would round big numbers in resource attributes.
// The text is terraform's (a state it printed or wrote): a document that is not JSON is an error.

/** A value's place in the text: `text.slice(start, end)` is the value. */
export interface Span {
  start: number;
  end: number;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

function skipWhitespace(text: string, at: number): number {
  while (at < text.length && WHITESPACE.has(text[at]!)) at++;
  return at;
}

/** The index of the quote that closes the string opening at `open`. */
function stringEnd(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  throw new SyntaxError(`an unterminated string at offset ${open}`);
}

/** Where the value starting at `start` ends: strings and nested values skipped. */
function valueEnd(text: string, start: number): number {
  const first = text[start];
  if (first === '"') return stringEnd(text, start) + 1;
  if (first === '{' || first === '[') {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (c === '"') i = stringEnd(text, i);
      else if (c === '{' || c === '[') depth++;
      else if ((c === '}' || c === ']') && --depth === 0) return i + 1;
    }
    throw new SyntaxError(`an unclosed ${first} at offset ${start}`);
  }
  let end = start;
  while (
    end < text.length &&
    !WHITESPACE.has(text[end]!) &&
    text[end] !== ',' &&
    text[end] !== '}' &&
    text[end] !== ']'
  )
    end++;
  if (end === start) throw new SyntaxError(`no value at offset ${start}`);
  return end;
}

/** The entries of the object or array at `container`: each value's span, with its key in an object. */
function* entries(text: string, container: Span): Generator<{ key?: string; value: Span }> {
  const open = text[container.start];
  const close = open === '{' ? '}' : ']';
  if (open !== '{' && open !== '[') throw new SyntaxError(`no object or array at offset ${container.start}`);
  let at = skipWhitespace(text, container.start + 1);
  if (text[at] === close) return;
  for (;;) {
    let key: string | undefined;
    if (open === '{') {
      if (text[at] !== '"') throw new SyntaxError(`no key at offset ${at}`);
      const keyEnd = stringEnd(text, at);
      key = JSON.parse(text.slice(at, keyEnd + 1)) as string;
      at = skipWhitespace(text, keyEnd + 1);
      if (text[at] !== ':') throw new SyntaxError(`no colon at offset ${at}`);
      at = skipWhitespace(text, at + 1);
    }
    const end = valueEnd(text, at);
    yield { key, value: { start: at, end } };
    at = skipWhitespace(text, end);
    if (text[at] === close) return;
    if (text[at] !== ',') throw new SyntaxError(`no comma at offset ${at}`);
    at = skipWhitespace(text, at + 1);
  }
}

/** The whole document's span (leading and trailing whitespace left out). */
export function documentSpan(text: string): Span {
  const start = skipWhitespace(text, 0);
  return { start, end: valueEnd(text, start) };
}

/** The members of the object at `object`, by key (the last one when a key repeats, as JSON.parse reads it). */
export function objectMembers(text: string, object: Span): Map<string, Span> {
  if (text[object.start] !== '{') throw new SyntaxError(`no object at offset ${object.start}`);
  const members = new Map<string, Span>();
  for (const { key, value } of entries(text, object)) members.set(key!, value);
  return members;
}

/** The items of the array at `array`. */
export function arrayItems(text: string, array: Span): Span[] {
  if (text[array.start] !== '[') throw new SyntaxError(`no array at offset ${array.start}`);
  return [...entries(text, array)].map((entry) => entry.value);
}

/** `text` with `span` replaced by `value`. */
export const replaceSpan = (text: string, span: Span, value: string): string =>
  text.slice(0, span.start) + value + text.slice(span.end);
