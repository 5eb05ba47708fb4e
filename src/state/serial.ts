// Restoring a state means pushing it as the backend's newest version: its serial must be above the
// current one. The state is rewritten as text, touching only the top-level serial, because a
// JSON round trip in JavaScript would round big numbers in resource attributes.
import { RunnerError } from '../errors.ts';
import { documentSpan, objectMembers, replaceSpan } from './json-text.ts';

/** The state text with its top-level "serial" set to `serial`; everything else byte for byte. */
export function withSerial(stateText: string, serial: number): string {
  const found = topLevelSerial(stateText);
  if (!found)
    throw new RunnerError({
      kind: 'state',
      reason: 'StateUnreadable',
      message: 'the state has no top-level "serial": it is not a terraform state file',
    });
  return replaceSpan(stateText, found, String(serial));
}

/** Where the value of the top-level "serial" key is, when it is a whole number. */
function topLevelSerial(text: string) {
  try {
    const span = objectMembers(text, documentSpan(text)).get('serial');
    return span && /^\d+$/.test(text.slice(span.start, span.end)) ? span : undefined;
  } catch {
    return undefined;
  }
}
