// Characters that change how a text is shown instead of showing themselves: a terminal acts on ESC
// and BEL, a lone CR moves back over what was printed, C1 controls are ESC's eight-bit forms, and the
// bidirectional overrides and isolates reorder what follows. Terraform prints whatever a module
// computes, so every sink escapes them (pure): tab and newline are the only controls a reader sees as
// such, and the runner decides where its own lines break.

/** Every control but tab and newline, DEL and C1, the bidirectional marks, overrides and isolates, and the Unicode line and paragraph separators. */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_OR_NEWLINE =
  /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r' };

/** The escape a reader sees instead of the character: `\r`, `\n`, `\x1b`, `\x07`, `\u202e`. */
function escaped(char: string): string {
  const named = NAMED[char];
  if (named) return named;
  const code = char.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every such character escaped; its newlines stay. */
export const printable = (text: string): string => text.replace(UNSAFE, escaped);

/** One line: `text` with its newlines escaped too, so that nothing in it starts a line of its own. */
export const printableLine = (text: string): string => text.replace(UNSAFE_OR_NEWLINE, escaped);

/**
 * A JSON text with the same characters as `\u` escapes. JSON.stringify escapes the controls below
 * U+0020 but writes DEL, C1 and the bidirectional characters as they are; outside its strings a JSON
 * text holds none of them, so the replacement changes no value.
 */
export const printableJson = (json: string): string =>
  json.replace(UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
