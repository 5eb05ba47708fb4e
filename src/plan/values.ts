// Reading the JSON values of a plan document, whose shape nothing guarantees: every field may be
// missing or of any JSON type, so the classifier checks each one it relies on with these. Pure.

/** A value as the reader built it: the fields of T, each any JSON value (or absent). */
export type Unchecked<T> = { [K in keyof T]?: unknown };

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const optionalString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** A string as it is, anything else as JSON. */
export const shown = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** "an array", "a string", ...: how the shape problems name a JSON value's type. */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** The fields of an object as the reader built it, or none when the value is not an object. */
export const fieldsOf = <T>(value: unknown): Unchecked<T> => (isRecord(value) ? (value as Unchecked<T>) : {});
