// Kubernetes naming rules the runner must meet when it derives names and labels from other
// names (a Job name, an object name), and the labels every Secret it writes carries.
// Deterministic: the same input always gives the same name, so a retried run finds what an
// earlier attempt wrote.
import { sha256Hex } from './sha256.ts';

export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'captf-runner';
/** `result`, `plan` or `backup`: what a runner-written Secret holds. */
export const LABEL_ARTIFACT_KIND = 'captf.io/artifact-kind';

export const MAX_NAME_LENGTH = 253; // DNS subdomain (metadata.name of Secrets and Jobs)
const MAX_LABEL_VALUE_LENGTH = 63;

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_DNS_LABEL_LENGTH = 63;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
// An annotation or label key: an optional DNS-subdomain prefix and a name of at most 63 characters.
const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

export const isDnsSubdomain = (name: string) => name.length <= MAX_NAME_LENGTH && DNS_SUBDOMAIN.test(name);
/** A DNS-1123 label: a namespace's name (no "."). */
const isDnsLabel = (name: string) => name.length <= MAX_DNS_LABEL_LENGTH && DNS_LABEL.test(name);
export const isLabelValue = (value: string) => value.length <= MAX_LABEL_VALUE_LENGTH && LABEL_VALUE.test(value);
export const isQualifiedName = (key: string) => {
  const slash = key.indexOf('/');
  return QUALIFIED_NAME.test(key) && (slash < 0 || slash <= MAX_NAME_LENGTH);
};

const shortDigest = (value: string) => sha256Hex(value).slice(0, 10);

/**
 * `<base>-<suffix>`, shortened when it would pass 253 characters: the base is cut and a digest
 * of the whole base appended, so two long bases that share a beginning still get different names.
 * The base must already be a DNS subdomain (a Job name is).
 */
export function derivedName(base: string, suffix: string): string {
  const full = `${base}-${suffix}`;
  if (full.length <= MAX_NAME_LENGTH) return full;
  return `${shortenedName(base, MAX_NAME_LENGTH - suffix.length - 1)}-${suffix}`;
}

/** `name` itself when it has at most `most` characters, else its head and a digest of it all (the same rule as derivedName). */
export function shortenedName(name: string, most = MAX_NAME_LENGTH): string {
  if (name.length <= most) return name;
  return `${name.slice(0, most - 11).replace(/[-.]+$/, '')}-${shortDigest(name)}`; // 11 = '-' + digest(10)
}

/**
 * A DNS-subdomain form of `value`, to build names from: the value itself when it is one, else
 * lowercased with other characters as '-' plus a digest of the original, so that `Backup_1` and
 * `backup-1` still get different names.
 */
export function dnsNamePartFor(value: string): string {
  if (isDnsSubdomain(value)) return value;
  const cleaned = value
    .toLowerCase()
    .replace(/[^-a-z0-9]/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  return cleaned ? `${cleaned}-${shortDigest(value)}` : shortDigest(value);
}

/**
 * A label value that stands for `value`: the value itself when it is a valid label value, else a
 * readable head plus a digest (label values hold at most 63 characters). The full value belongs
 * in an annotation beside it.
 */
export function labelValueFor(value: string): string {
  if (isLabelValue(value)) return value;
  const head = value
    .replace(/[^-A-Za-z0-9_.]/g, '-')
    .slice(0, MAX_LABEL_VALUE_LENGTH - 11)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return head ? `${head}-${shortDigest(value)}` : shortDigest(value);
}

/** The value as a message quotes it: JSON, cut after 64 characters (saying how long it is). */
const quoted = (value: string) =>
  value.length > 64 ? `${JSON.stringify(value.slice(0, 64))}… (${value.length} characters)` : JSON.stringify(value);

/** Why `object` is no Kubernetes object name (a DNS-1123 subdomain), or undefined when it is one. */
export function objectNameProblem(object: string): string | undefined {
  if (isDnsSubdomain(object)) return undefined;
  return `${quoted(object)} is not a Kubernetes object name: a DNS-1123 subdomain, at most ${MAX_NAME_LENGTH} characters of lowercase letters, digits, "-" and ".", starting and ending with a letter or digit (as the CAPTF object's metadata.name)`;
}

/** Why `namespace` is no Kubernetes namespace name (a DNS-1123 label), or undefined when it is one. */
export function namespaceProblem(namespace: string): string | undefined {
  if (isDnsLabel(namespace)) return undefined;
  return `${quoted(namespace)} is not a Kubernetes namespace: a DNS-1123 label, at most ${MAX_DNS_LABEL_LENGTH} characters of lowercase letters, digits and "-", starting and ending with a letter or digit (as the CAPTF object's metadata.namespace)`;
}
