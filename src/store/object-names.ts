// What every store takes as an object name, the prefix that keeps one CAPTF object's artifacts
// apart in a store, and how every store says a chunk is missing.
import { RunnerError, usageError } from '../errors.ts';
import { namespaceProblem, objectNameProblem } from '../util/kube-names.ts';
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
 * `captf-<plan|backup>-<kindshort>.<namespace>.<object>`: the key of one CAPTF object's artifacts in
 * a store (PostgreSQL's `store` column, S3's key prefix before `/`; the Secret store's prefix,
 * shortened). The namespace (a DNS-1123 label: no ".") ends at the first "." after the kind, so no
 * two objects (namespace, kind, name) share a key, and a key of this layout never is one of the
 * layout before it (`captf-<family>-<kindshort>-<object>`: a "-" after the kind). Up to 335
 * characters: not shortened, so no digest stands for a name. Both names are checked as settings are.
 */
export function objectStorePrefix(family: ArtifactFamily, kind: ObjectKind, namespace: string, object: string): string {
  const problem = namespaceProblem(namespace) ?? objectNameProblem(object);
  if (problem) throw usageError('SettingsInvalid', problem);
  return `captf-${family}-${KIND_SHORT[kind]}.${namespace}.${object}`;
}
