// What the module declassifies: each call of nonsensitive() the scan found, named for review by
// contract check (a warning) and by every op that runs the module (the notice NonsensitiveCalls).
// What terraform prints of a declassified value is the module author's act: the runner masks the
// values it knows, in the forms terraform prints them in, and nothing a module computes beyond them.
import { relative } from 'node:path';
import type { Notice } from '../schemas/result.ts';
import type { SourcePlace } from './scan.ts';

/** The most calls a notice lists by file and line; it counts the rest. */
const NONSENSITIVE_CALLS_LISTED = 20;

/** A call's place as `file:line`, the file relative to the module dir whatever path reached it. */
const placeInModule = (moduleDir: string, call: SourcePlace) =>
  `${relative(moduleDir, call.file) || call.file}:${call.line}`;

/** What a call does, and what follows from it: said once for contract check and the notice. */
export const DECLASSIFIES = 'declassifies a sensitive value';
export const DECLASSIFIED_IS_PRINTED =
  'terraform prints what it returns in clear, and the runner masks only the values it knows in the forms terraform prints them in (contract/sections/faults.md §5)';

/** The notice for the module's nonsensitive() calls (the first NONSENSITIVE_CALLS_LISTED named), or none without a call. */
export function nonsensitiveNotice(moduleDir: string, calls: readonly SourcePlace[]): Notice | undefined {
  if (calls.length === 0) return undefined;
  const listed = calls.slice(0, NONSENSITIVE_CALLS_LISTED).map((call) => placeInModule(moduleDir, call));
  const more = calls.length - listed.length;
  const one = calls.length === 1;
  return {
    code: 'NonsensitiveCalls',
    message: `the module calls nonsensitive() ${one ? 'once' : `${calls.length} times`}, at ${listed.join(', ')}${more ? ` and ${more} more (contract check lists them all)` : ''}: ${one ? 'it' : 'each'} ${DECLASSIFIES}: ${DECLASSIFIED_IS_PRINTED}; review ${one ? 'it' : 'each'}`,
  };
}
