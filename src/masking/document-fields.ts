// The fields of a secret that is a JSON document (pure): terraform prints such a value field by field.

/** Fields of one JSON document learned at most: the document is still masked whole past them. */
export const MAX_DOCUMENT_FIELDS = 10_000;

/** The string leaves and object keys of `text` when it is a JSON object or array (nested documents are the caller's to open). */
export function documentFields(text: string): { leaves: string[]; keys: string[] } {
  const fields = { leaves: [] as string[], keys: [] as string[] };
  if (!/^\s*[[{]/.test(text)) return fields;
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return fields;
  }
  // A stack, not recursion: a document may nest deeper than the call stack goes.
  const stack = [document];
  while (stack.length && fields.leaves.length + fields.keys.length < MAX_DOCUMENT_FIELDS) {
    const value = stack.pop();
    if (typeof value === 'string') fields.leaves.push(value);
    else if (Array.isArray(value)) for (const item of value) stack.push(item);
    else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        fields.keys.push(key);
        stack.push(item);
      }
    }
  }
  return fields;
}
