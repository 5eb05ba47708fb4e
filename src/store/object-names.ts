// What every store takes as an object name, the prefix that keeps one CAPTF object's artifacts
// apart in a store, and how every store says a chunk is missing.
import { RunnerError, usageError } from '../errors.ts';
import { dnsNamePartFor, shortenedName } from '../kube/names.ts';
import { KIND_SHORT, type ObjectKind } from '../object-kind.ts';

/** 1 to 200 letters, digits, ".", "_" or "-", starting with a letter or digit: a directory name, a key part, a Secret name part (mapped). */
export const OBJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

export function checkObjectName(object: string): string {
  if (!OBJECT_NAME.test(object)) {
    throw usageError(
      'InvalidObjectName',
      `"${object}" is not a valid object name: use 1 to 200 letters, digits, ".", "_" or "-", starting with a letter or digit`,
    );
  }
  return object;
}

/** A chunk the manifest or a listing named is not there (any more): the object changed while being read. */
export function missingChunk(
  location: string,
  object: string,
  index: number,
  detail?: Record<string, unknown>,
): RunnerError {
  return new RunnerError({
    kind: 'artifact',
    reason: 'ArtifactIncomplete',
    message: `chunk ${index} of "${object}" is missing from ${location}: the object was deleted or changed while being read`,
    detail: { location, object, chunk: index, ...detail },
  });
}

export type ArtifactFamily = 'plan' | 'backup';

/**
 * `captf-<plan|backup>-<kindshort>-<object>`: the Secret name prefix of an object's artifacts, and
 * its key prefix in the other stores. Shortened with a digest when a long object name (up to 253
 * characters) would pass a name's 253.
 */
export function objectStorePrefix(family: ArtifactFamily, kind: ObjectKind, object: string): string {
  return shortenedName(`captf-${family}-${KIND_SHORT[kind]}-${dnsNamePartFor(object)}`);
}
