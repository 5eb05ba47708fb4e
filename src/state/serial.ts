// Restoring a state means pushing it as the backend's newest version: its serial must be above the
// current one. The state is rewritten as text, touching only the top-level serial, because a
// JSON round trip in JavaScript would round big numbers in resource attributes.
import { RunnerError } from '../errors.ts';

/** The state text with its top-level "serial" set to `serial`; everything else byte for byte. */
export function withSerial(stateText: string, serial: number): string {
  const found = topLevelSerial(stateText);
  if (!found) throw new RunnerError({ kind: 'state', reason: 'StateUnreadable', message: 'the backed-up state has no top-level "serial": it is not a terraform state file' });
  return stateText.slice(0, found.start) + String(serial) + stateText.slice(found.end);
}

/** Where the value of the top-level "serial" key is, skipping strings and nested values. */
function topLevelSerial(text: string): { start: number; end: number } | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      if (depth === 1 && text.slice(i, end + 1) === '"serial"') {
        const match = /^\s*:\s*(\d+)/.exec(text.slice(end + 1, end + 64));
        if (match) {
          const start = end + 1 + match[0].length - match[1]!.length;
          return { start, end: start + match[1]!.length };
        }
      }
      i = end;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return undefined;
}

function stringEnd(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return text.length;
}
