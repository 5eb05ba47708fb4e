// A result masked for a sink. Masking by value cannot tell a secret from a word of the protocol: a
// secret "succeeded" would mask the outcome and break the result's own schema. The runner's own
// fields are constants it chose, never text from the inputs, so they are given back as they were.
import type { Result } from '../schemas/result.ts';
import { maskValue, type Masker } from './mask.ts';

export const PROTOCOL_WORD_WARNING =
  'a secret equals a word of the runner protocol (an op, outcome, reason, step, status or object kind): it is masked everywhere but in those fields, which hold the runner\'s own words';

/** The paths of the fields that hold only the runner's own words (and the exit code). */
function protocolPaths(result: Result): (string | number)[][] {
  return [
    ['op'], ['outcome'], ['reason'], ['exitCode'], ['object', 'kind'],
    ['error', 'kind'], ['error', 'reason'], ['error', 'step'],
    ['annotations', 'captf.io/outcome'], ['annotations', 'captf.io/reason'],
    ...result.steps.flatMap((_, index) => [['steps', index, 'name'], ['steps', index, 'status']]),
  ];
}

type Node = Record<string | number, unknown>;

/** `unmasked` masked field by field, its protocol fields as they were, with a warning when masking had changed one. */
export function maskResult(masker: Masker, unmasked: Result): Result {
  const masked = maskValue(masker, unmasked);
  let restored = false;
  for (const path of protocolPaths(unmasked)) {
    const key = path.at(-1)!;
    const from = path.slice(0, -1).reduce<Node | undefined>((node, step) => node?.[step] as Node | undefined, unmasked as unknown as Node);
    const to = path.slice(0, -1).reduce<Node | undefined>((node, step) => node?.[step] as Node | undefined, masked as unknown as Node);
    if (!from || !to || from[key] === undefined || to[key] === from[key]) continue;
    to[key] = from[key];
    restored = true;
  }
  return restored ? { ...masked, warnings: [...masked.warnings, PROTOCOL_WORD_WARNING] } : masked;
}
