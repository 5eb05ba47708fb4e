// The in-cluster sinks of a finished result: the result Secret (the full result, sensitive output
// values included) and the annotations on the runner's own Job. Both are written after the local
// result exists; the caller decides what a failure means (contract/sections/kubernetes.md).
import type { ObjectMeta, OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { OutputValue, Result } from '../schemas/result.ts';
import { RunnerError } from '../errors.ts';
import { isKubeError, KubeReason } from './api-errors.ts';
import type { KubeClient, Secret } from './client.ts';
import {
  derivedName,
  isQualifiedName,
  LABEL_ARTIFACT_KIND,
  LABEL_MANAGED_BY,
  labelValueFor,
  MANAGED_BY,
} from '../util/kube-names.ts';
import { fitResult, type ResultCut } from './result-fit.ts';
import { sha256Hex } from '../util/sha256.ts';
import { CUTS, MASKED_WHOLE, maskThenCut } from '../masking/boundary.ts';

export interface JobIdentity {
  namespace: string;
  jobName: string;
  jobUid: string;
}

export interface ResultSecretRef {
  name: string;
  /** sha256 of the bytes under `result.json`. */
  sha256: string;
}

export interface WrittenResultSecret extends ResultSecretRef {
  /** What was cut to fit the Secret; empty when the whole result fit. */
  cuts: ResultCut[];
  /** An earlier attempt of the same Job had written a different result, now replaced. */
  replaced: boolean;
}

const JobAnnotation = {
  outcome: 'captf.io/outcome',
  reason: 'captf.io/reason',
  inputsHash: 'captf.io/inputs-hash',
  resultSecret: 'captf.io/result-secret',
  resultSha256: 'captf.io/result-sha256',
} as const;

export const RESULT_KEY = 'result.json';
export const CUT_KEY = 'cut.json';
/** A Secret's data may hold 1,048,576 bytes; cut.json gets the rest of this reserve. */
export const RESULT_BYTES_LIMIT = 1_048_576 - 64 * 1024;
const CUT_RECORD_LIMIT_BYTES = 60 * 1024;

/** Each annotation value is capped, and so is the number taken from result.annotations, which
 * keeps the runner's share of the Job's 256 KiB annotation budget under ~30 KiB in the worst case. */
export const MAX_ANNOTATION_VALUE_LENGTH = CUTS.annotation;
const MAX_RESULT_ANNOTATIONS = 16;

/** The result Secret's name: the Job's name with `-result`, shortened with a digest past 253 characters. */
export const resultSecretName = (jobName: string) => derivedName(jobName, 'result');

export interface AnnotatedJob {
  /** What was patched; `null` removes an annotation left by an earlier attempt of the Job. */
  annotations: Record<string, string | null>;
  /** Keys of result.annotations left out (not a valid annotation key, or over the count). */
  skipped: string[];
}

/**
 * Sets the outcome, reason, inputs hash, result.annotations and the result Secret's name and
 * sha256 on the Job with one JSON merge patch. The patch names the Job's uid, so it never lands on
 * another Job of the same name (409 Conflict instead).
 */
export async function annotateJob(
  client: KubeClient,
  job: JobIdentity,
  result: Result,
  resultSecretRef: ResultSecretRef | undefined,
): Promise<AnnotatedJob> {
  const annotations: Record<string, string | null> = {};
  const skipped: string[] = [];
  const resultEntries = Object.entries(result.annotations);
  for (const [index, [key, value]] of resultEntries.entries()) {
    if (index >= MAX_RESULT_ANNOTATIONS || !isQualifiedName(key)) skipped.push(key);
    else annotations[key] = capValue(value);
  }
  Object.assign(annotations, {
    [JobAnnotation.outcome]: result.outcome,
    [JobAnnotation.reason]: capValue(result.reason),
    [JobAnnotation.inputsHash]: result.inputsHash ?? null,
    [JobAnnotation.resultSecret]: resultSecretRef?.name ?? null,
    [JobAnnotation.resultSha256]: resultSecretRef?.sha256 ?? null,
  });
  await client.patchJob(job.namespace, job.jobName, { metadata: { uid: job.jobUid, annotations } });
  return { annotations, skipped };
}

/** A value cut to fit, at the boundary: the result is masked whole by the caller. */
const capValue = (value: string) => maskThenCut(MASKED_WHOLE, value, MAX_ANNOTATION_VALUE_LENGTH);

/**
 * Writes the one result Secret of this run: `result.json` is the full result (masked by the
 * caller) with the values of `sensitiveOutputs` in result.outputs, cut to fit when needed
 * (`cut.json` then says what was cut). Immutable and owned by the Job, so it goes when the Job goes.
 *
 * A retry that finds its own identical Secret succeeds; one that finds a different result of an
 * earlier attempt of the same Job (a pod that was replaced) replaces it: the newest attempt wins.
 */
export async function writeResultSecret(
  client: KubeClient,
  job: JobIdentity,
  result: Result,
  sensitiveOutputs: Record<string, OutputValue> | undefined,
): Promise<WrittenResultSecret> {
  const fitted = fitResult(
    { ...result, ...(sensitiveOutputs && { outputs: { ...result.outputs, ...sensitiveOutputs } }) },
    RESULT_BYTES_LIMIT,
  );
  const sha256 = sha256Hex(fitted.json);
  const name = resultSecretName(job.jobName);
  const secret = resultSecret(name, job, result, fitted.json, sha256, fitted.cuts, fitted.originalBytes);
  const written = { name, sha256, cuts: fitted.cuts };

  try {
    await client.createSecret(job.namespace, secret);
    return { ...written, replaced: false };
  } catch (error) {
    if (!isKubeError(error, KubeReason.AlreadyExists)) throw error;
  }
  const existing = await client.getSecret(job.namespace, name);
  if (existing && !isResultSecret(existing)) {
    throw new RunnerError({
      kind: 'kube',
      reason: KubeReason.Conflict,
      message: `Secret "${name}" in namespace "${job.namespace}" exists and is not a CAPTF result Secret; the runner leaves it alone and writes no result Secret`,
      detail: { name, namespace: job.namespace },
    });
  }
  if (existing?.metadata?.annotations?.[JobAnnotation.resultSha256] === sha256) return { ...written, replaced: false };
  // Secrets are immutable: replacing means delete and create. The uid precondition makes sure
  // only the Secret just read is deleted.
  if (existing) await client.deleteSecret(job.namespace, name, { uid: existing.metadata?.uid });
  await client.createSecret(job.namespace, secret);
  return { ...written, replaced: true };
}

/** Label (a stand-in of the hash) and annotation (the hash) of a result Secret: the result's approvalHash. */
const RESULT_APPROVAL_HASH = 'captf.io/approval-hash';

/** A result document read back from a result Secret that checks out (labels, digest, JSON). */
export interface StoredResult {
  /** `secret:<namespace>/<name>` */
  location: string;
  document: unknown;
}

/** How many of the newest matching result Secrets are read (each a `get` of up to 1 MiB). */
const BLOCKED_RESULTS_READ = 3;

/**
 * The newest result Secrets of blocked applies of one CAPTF object for one approval hash (the
 * result Secrets of the blocked Jobs, while those Jobs are kept), newest first: listed by label
 * (metadata only), then read. A Secret not owned by the Job it names (writeResultSecret gives every
 * result Secret an ownerReference to its Job), or whose `result.json` does not match its own
 * `captf.io/result-sha256` or the hash in full, is skipped and named in `problems`.
 */
export async function readBlockedResults(
  client: KubeClient,
  namespace: string,
  wanted: { approvalHash: string; objectKind: string; objectName?: string },
): Promise<{ found: StoredResult[]; problems: string[] }> {
  const selector = [
    `${LABEL_MANAGED_BY}=${MANAGED_BY}`,
    `${LABEL_ARTIFACT_KIND}=result`,
    'captf.io/op=apply',
    'captf.io/outcome=blocked',
    `captf.io/object-kind=${wanted.objectKind}`,
    wanted.objectName === undefined
      ? '!captf.io/object-name'
      : `captf.io/object-name=${labelValueFor(wanted.objectName)}`,
    `${RESULT_APPROVAL_HASH}=${labelValueFor(wanted.approvalHash)}`,
  ].join(',');
  const found: StoredResult[] = [];
  const problems: string[] = [];
  const listed = (await client.listSecretMetadata(namespace, selector))
    .filter((meta) => meta.name && meta.annotations?.[RESULT_APPROVAL_HASH] === wanted.approvalHash)
    .sort(
      (a, b) =>
        (b.creationTimestamp ?? '').localeCompare(a.creationTimestamp ?? '') ||
        (b.name ?? '').localeCompare(a.name ?? ''),
    );
  // Before the newest few are picked, so Secrets no Job owns cannot crowd out the real records.
  const unowned = listed.filter((meta) => !ownedByItsJob(meta));
  if (unowned.length) {
    const named = unowned
      .slice(0, UNOWNED_NAMED)
      .map((meta) => `secret:${namespace}/${meta.name}`)
      .join(', ');
    const more = unowned.length > UNOWNED_NAMED ? ` and ${unowned.length - UNOWNED_NAMED} more` : '';
    problems.push(
      `${named}${more} not owned by the Job ${unowned.length === 1 ? 'it names' : 'they name'} (no ownerReference of kind Job): skipped`,
    );
  }
  for (const meta of listed.filter(ownedByItsJob).slice(0, BLOCKED_RESULTS_READ)) {
    const location = `secret:${namespace}/${meta.name}`;
    const secret = await client.getSecret(namespace, meta.name!);
    if (!secret) continue; // gone with its Job meanwhile
    const encoded = secret.data?.[RESULT_KEY];
    if (!isResultSecret(secret) || encoded === undefined) {
      problems.push(`${location} is not a result Secret`);
      continue;
    }
    const bytes = Buffer.from(encoded, 'base64');
    if (sha256Hex(bytes) !== secret.metadata?.annotations?.[JobAnnotation.resultSha256]) {
      problems.push(`${location}: result.json does not match its ${JobAnnotation.resultSha256}`);
      continue;
    }
    try {
      found.push({ location, document: JSON.parse(bytes.toString('utf8')) });
    } catch {
      problems.push(`${location}: result.json is not JSON`);
    }
  }
  return { found, problems };
}

/** At most this many Secrets not owned by their Job are named in `problems`. */
const UNOWNED_NAMED = 3;

/** A result Secret as writeResultSecret writes it: owned by a Job, the one its `captf.io/job-name` annotation names. */
function ownedByItsJob(meta: ObjectMeta): boolean {
  const jobName = meta.annotations?.['captf.io/job-name'];
  return (meta.ownerReferences ?? []).some(
    (owner) => owner.kind === 'Job' && owner.apiVersion === 'batch/v1' && !!owner.uid && owner.name === jobName,
  );
}

const isResultSecret = (secret: Secret) =>
  secret.metadata?.labels?.[LABEL_MANAGED_BY] === MANAGED_BY &&
  secret.metadata?.labels?.[LABEL_ARTIFACT_KIND] === 'result';

function jobOwnerReference(job: JobIdentity): OwnerReference {
  // blockOwnerDeletion stays false: setting it true needs delete permission on the Job, which the
  // runner's Role does not grant. Background and foreground deletion of the Job still collect the
  // Secret; foreground deletion just does not wait for it.
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    name: job.jobName,
    uid: job.jobUid,
    controller: false,
    blockOwnerDeletion: false,
  };
}

function resultSecret(
  name: string,
  job: JobIdentity,
  result: Result,
  json: Buffer,
  sha256: string,
  cuts: ResultCut[],
  originalBytes: number,
): Secret {
  const data: Record<string, string> = { [RESULT_KEY]: json.toString('base64') };
  if (cuts.length > 0) data[CUT_KEY] = Buffer.from(cutRecord(cuts, originalBytes)).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: job.namespace,
      labels: {
        [LABEL_MANAGED_BY]: MANAGED_BY,
        [LABEL_ARTIFACT_KIND]: 'result',
        'captf.io/job-name': labelValueFor(job.jobName),
        'captf.io/job-uid': labelValueFor(job.jobUid),
        'captf.io/op': result.op,
        'captf.io/outcome': result.outcome,
        'captf.io/object-kind': result.object.kind,
        ...(result.object.name && { 'captf.io/object-name': labelValueFor(result.object.name) }),
        // 64 hex digits do not fit a label value (63): a head and a digest, the full hash beside it.
        ...(result.approvalHash && { [RESULT_APPROVAL_HASH]: labelValueFor(result.approvalHash) }),
      },
      annotations: {
        [JobAnnotation.resultSha256]: sha256,
        'captf.io/job-name': job.jobName,
        ...(result.approvalHash && { [RESULT_APPROVAL_HASH]: result.approvalHash }),
      },
      ownerReferences: [jobOwnerReference(job)],
    },
    type: 'Opaque',
    immutable: true,
    data,
  };
}

/** cut.json: what was cut, bounded itself (a result with ten thousand outputs lists the first ones). */
function cutRecord(cuts: ResultCut[], originalBytes: number): string {
  const listed: ResultCut[] = [];
  let bytes = 0;
  for (const cut of cuts) {
    bytes += JSON.stringify(cut).length + 1;
    if (bytes > CUT_RECORD_LIMIT_BYTES) break;
    listed.push(cut);
  }
  return JSON.stringify({ limitBytes: RESULT_BYTES_LIMIT, originalBytes, cutsTotal: cuts.length, cuts: listed });
}
