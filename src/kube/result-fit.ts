// Fits a result into the bytes a Secret can hold. Pure: no I/O.
//
// Cuts the biggest thing first until the JSON fits: the largest output value, or half of the
// longest bounded list that carries its own total (plan.destructive, plan.actions, plan.drift,
// plan.changes, plan.partial.deferred, drift.resourceDrift, drift.inputsDiffer), whichever saves more; as a last resort, every string over 4 KiB. Every cut
// is recorded, and a warning in the result itself says that it was cut.
import type { Result } from '../schemas/result.ts';
import { printableJson } from '../output/printable.ts';
import { CUTS, MASKED_WHOLE, maskThenCut } from '../masking/boundary.ts';

export interface ResultCut {
  /** Where in result.json, e.g. `outputs.kubeconfig.value` or `plan.destructive`. */
  path: string;
  note: string;
}

export interface FittedResult {
  json: Buffer;
  cuts: ResultCut[];
  originalBytes: number;
}

const LAST_RESORT_STRING_LENGTH = CUTS.secretString;
const WARNING_NAMES_SHOWN = 20;

type BoundedList = {
  path: string;
  get: (r: Result) => unknown[] | undefined;
  set: (r: Result, list: unknown[]) => void;
};

const BOUNDED_LISTS: BoundedList[] = [
  {
    path: 'plan.destructive',
    get: (r) => r.plan?.destructive,
    set: (r, list) => void (r.plan!.destructive = list as never),
  },
  { path: 'plan.actions', get: (r) => r.plan?.actions, set: (r, list) => void (r.plan!.actions = list as never) },
  { path: 'plan.drift', get: (r) => r.plan?.drift, set: (r, list) => void (r.plan!.drift = list as never) },
  { path: 'plan.changes', get: (r) => r.plan?.changes, set: (r, list) => void (r.plan!.changes = list as never) },
  {
    path: 'plan.partial.deferred',
    get: (r) => r.plan?.partial?.deferred,
    set: (r, list) => void (r.plan!.partial!.deferred = list as never),
  },
  {
    path: 'drift.resourceDrift',
    get: (r) => r.drift?.resourceDrift,
    set: (r, list) => void (r.drift!.resourceDrift = list as never),
  },
  {
    path: 'drift.inputsDiffer',
    get: (r) => r.drift?.inputsDiffer,
    set: (r, list) => void (r.drift!.inputsDiffer = list as never),
  },
];

// Printed as result.json is (output/printable.ts): no character in it acts on a terminal.
const serialize = (result: Result) => Buffer.from(printableJson(JSON.stringify(result)));

export function fitResult(input: Result, limitBytes: number): FittedResult {
  const result = structuredClone(input);
  const originalBytes = serialize(result).length;
  const cuts: ResultCut[] = [];
  // Room for the warning this function adds to the result.
  const budget = limitBytes - 2048;

  // Sizes are estimated as cuts are made and measured again once the estimate fits, so a result
  // with thousands of outputs is not serialized once per cut.
  const outputs = outputValuesBySize(result);
  let bytes = originalBytes;
  while (bytes > budget) {
    const output = outputs[0];
    const list = longestList(result);
    if (!output && !list) break;
    if (output && (!list || output.bytes >= list.bytes / 2)) {
      outputs.shift();
      delete output.output.value;
      bytes -= output.bytes;
      cuts.push({
        path: `outputs.${output.name}.value`,
        note: `value of ${output.bytes} bytes removed${output.output.sensitive ? ' (sensitive)' : ''}`,
      });
    } else if (list) {
      bytes -= halve(result, list, cuts);
    }
    if (bytes <= budget) bytes = serialize(result).length;
  }
  if (bytes > budget) shortenLongStrings(result, cuts);

  if (cuts.length > 0) {
    const names = cuts.map((cut) => cut.path);
    const shown =
      names.slice(0, WARNING_NAMES_SHOWN).join(', ') +
      (names.length > WARNING_NAMES_SHOWN ? ` and ${names.length - WARNING_NAMES_SHOWN} more` : '');
    result.warnings = [
      ...result.warnings,
      `the result was cut from ${originalBytes} bytes to fit the ${limitBytes}-byte limit of the result Secret (the Secret's cut.json lists every cut): ${shown}`,
    ];
  }
  const json = serialize(result);
  if (json.length > limitBytes)
    throw new Error(`the result is still ${json.length} bytes after every cut (limit ${limitBytes})`);
  return { json, cuts, originalBytes };
}

function outputValuesBySize(result: Result) {
  return Object.entries(result.outputs ?? {})
    .filter(([, output]) => output.value !== undefined)
    .map(([name, output]) => ({ name, output, bytes: Buffer.byteLength(JSON.stringify(output.value)) }))
    .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
}

interface ListInResult {
  list: BoundedList;
  entries: unknown[];
  bytes: number;
}

function longestList(result: Result): ListInResult | undefined {
  let longest: ListInResult | undefined;
  for (const list of BOUNDED_LISTS) {
    const entries = list.get(result) ?? [];
    if (entries.length === 0) continue;
    const bytes = Buffer.byteLength(JSON.stringify(entries));
    if (!longest || bytes > longest.bytes) longest = { list, entries, bytes };
  }
  return longest;
}

/** Keeps the first half of the list; returns the bytes that saved. */
function halve(result: Result, { list, entries }: ListInResult, cuts: ResultCut[]): number {
  const kept = Math.floor(entries.length / 2);
  list.set(result, entries.slice(0, kept));
  const note = `kept the first ${kept} entries (the total count is unchanged)`;
  const previous = cuts.find((cut) => cut.path === list.path);
  if (previous) previous.note = note;
  else cuts.push({ path: list.path, note });
  return Buffer.byteLength(JSON.stringify(entries.slice(kept)));
}

function shortenLongStrings(result: Result, cuts: ResultCut[]): void {
  const visit = (value: unknown, path: string): unknown => {
    if (typeof value === 'string' && value.length > LAST_RESORT_STRING_LENGTH) {
      cuts.push({ path, note: `string of ${value.length} characters shortened to ${LAST_RESORT_STRING_LENGTH}` });
      return maskThenCut(MASKED_WHOLE, value, LAST_RESORT_STRING_LENGTH); // masked whole by the caller
    }
    if (Array.isArray(value)) return value.map((item, index) => visit(item, `${path}[${index}]`));
    if (value && typeof value === 'object') {
      for (const [field, item] of Object.entries(value))
        (value as Record<string, unknown>)[field] = visit(item, path ? `${path}.${field}` : field);
    }
    return value;
  };
  visit(result, '');
}
