// The runner's record (terraform_data.captf_inputs_hash, contract.md §2) set back after an apply or
// destroy that did not succeed. terraform may write it before a step that then fails: it updates
// the dependents of a create_before_destroy object (the record among them) before that object's
// delete, and a destroy deletes the record first. The state keeps the record's value as it was
// before the op; everything else stays as terraform left it, byte for byte.
import { arrayItems, documentSpan, objectMembers, replaceSpan, type Span } from './json-text.ts';
import { isInputsHashResource } from './summary.ts';

/** The record's resource entry as a state holds it ({mode, type, name, provider, instances}). */
export type RecordEntry = Record<string, unknown>;

type Instance = { attributes?: Record<string, unknown> } & Record<string, unknown>;

const firstInstance = (entry: RecordEntry | undefined): Instance | undefined => {
  const instances = entry?.instances;
  return Array.isArray(instances) && typeof instances[0] === 'object' && instances[0] !== null
    ? (instances[0] as Instance)
    : undefined;
};

/** What the record says: the `input` attribute ({value, type}) of its instance, null when there is none. */
const recordInput = (entry: RecordEntry | undefined): unknown => firstInstance(entry)?.attributes?.input ?? null;

/** Whether the record says something else in `after` than in `before`. */
export const recordChanged = (before: RecordEntry | undefined, after: RecordEntry | undefined): boolean =>
  JSON.stringify(recordInput(before)) !== JSON.stringify(recordInput(after));

/**
 * The record `after` with `before`'s value: its input and output as they were (null when there was
 * no record), its dependencies both terraform's new ones and the old (terraform orders the record's
 * next update after the deletes of what it depends on in the state, and the old ones may still be
 * there), the rest as terraform left it; `before` itself when terraform deleted it.
 */
export function setBackEntry(before: RecordEntry | undefined, after: RecordEntry | undefined): RecordEntry | undefined {
  const instance = firstInstance(after);
  if (!instance) return before;
  const was = firstInstance(before);
  const attributes = {
    ...instance.attributes,
    input: was?.attributes?.input ?? null,
    output: was?.attributes?.output ?? null,
  };
  const dependencies = [...new Set([...stringList(instance.dependencies), ...stringList(was?.dependencies)])];
  const [, ...rest] = after!.instances as unknown[];
  return {
    ...after,
    instances: [{ ...instance, attributes, ...(dependencies.length ? { dependencies } : {}) }, ...rest],
  };
}

const stringList = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

/**
 * The state text with the record set back to `before`'s value (setBackEntry), everything else byte
 * for byte: the record's entry replaced, or inserted when terraform deleted it.
 */
export function withRecordSetBack(stateText: string, before: RecordEntry | undefined): string {
  const root = objectMembers(stateText, documentSpan(stateText));
  const resources = root.get('resources');
  if (!resources) throw new SyntaxError('the state has no "resources"');
  const items = arrayItems(stateText, resources);
  const found = items.find((item) => isRecordEntry(stateText, item));
  const after = found ? (JSON.parse(stateText.slice(found.start, found.end)) as RecordEntry) : undefined;
  const entry = setBackEntry(before, after);
  if (!entry) return stateText;
  const json = JSON.stringify(entry);
  if (found) return replaceSpan(stateText, found, json);
  return items.length
    ? replaceSpan(stateText, { start: items[0]!.start, end: items[0]!.start }, `${json},`)
    : replaceSpan(stateText, resources, `[${json}]`);
}

/** Whether the resource entry at `item` is the record, read from its small members alone (a resource's instances can be large). */
function isRecordEntry(text: string, item: Span): boolean {
  if (text[item.start] !== '{') return false;
  const members = objectMembers(text, item);
  const head: Record<string, unknown> = {};
  for (const key of ['module', 'mode', 'type', 'name']) {
    const span = members.get(key);
    if (span) head[key] = JSON.parse(text.slice(span.start, span.end));
  }
  return isInputsHashResource(head);
}
