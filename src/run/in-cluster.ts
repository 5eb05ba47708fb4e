// In-cluster mode: when the controller passes the Job's identity, the runner talks to the API
// server: Secrets hold backups and plan artifacts, and the finished result goes to a result Secret
// and the Job's annotations. Loaded lazily: local runs never pay for it.
import type { Settings } from '../schemas/config.ts';
import type { OutputValue, Result } from '../schemas/result.ts';
import { usageError } from '../errors.ts';
import { KubeClient } from '../kube/client.ts';
import { loadInClusterConfig } from '../kube/config.ts';
import { labelValueFor, shortenedName } from '../util/kube-names.ts';
import { objectStorePrefix } from '../store/object-names.ts';
import {
  annotateJob,
  readBlockedResults,
  writeResultSecret,
  type JobIdentity,
  type StoredResult,
} from '../kube/sinks.ts';
import { SecretChunkStore } from '../store/secret-store.ts';
import type { ChunkStore } from '../store/store.ts';
import type { Logger } from '../output/log.ts';
import type { Masker } from '../masking/mask.ts';

export interface InCluster {
  client: KubeClient;
  job: JobIdentity;
  /** Where this object's backups or plan artifacts live. */
  store(artifactKind: 'plan' | 'backup'): ChunkStore;
  /** A stored object named by a `secret:` reference (--plan-artifact, --backup). */
  reference(reference: string, artifactKind: 'plan' | 'backup'): { store: ChunkStore; object: string };
  /** Best effort, done by `untilMs` (Date.now() clock) whatever the API server does: what failed, for the result's warnings. */
  publish(
    result: Result,
    sensitiveOutputs: Record<string, OutputValue> | undefined,
    untilMs: number,
  ): Promise<string[]>;
  /** The newest result Secrets of this object's blocked applies for `approvalHash` (what an approval was given for). */
  blockedResults(approvalHash: string): Promise<{ found: StoredResult[]; problems: string[] }>;
}

/** undefined in local mode. A Job identity without a usable token or API address is a usage error, never a silent local run. */
export function inClusterFrom(settings: Settings, log: Logger, masker: Masker): InCluster | undefined {
  if (!settings.jobName && !settings.jobUid) return undefined;
  if (!settings.jobName || !settings.jobUid)
    throw usageError(
      'KubeConfigInvalid',
      'in-cluster mode needs both --job-name and --job-uid (CAPTF_JOB_NAME, CAPTF_JOB_UID): pass both, or neither for a local run',
    );
  if (!settings.object)
    throw usageError(
      'KubeConfigInvalid',
      'in-cluster mode needs --object NAME (CAPTF_OBJECT): backups and plan artifacts are kept per CAPTF object',
    );
  const config = loadInClusterConfig({ serviceAccountDir: settings.serviceAccountDir, env: process.env });
  const namespace = settings.namespace ?? config.namespace;
  if (!namespace)
    throw usageError(
      'KubeConfigInvalid',
      'in-cluster mode needs the namespace: pass --namespace (CAPTF_NAMESPACE) or mount the service account namespace file',
    );
  const client = new KubeClient(config, {
    masker,
    onRetry: (event) => log.warn({ retry: event }, 'Kubernetes API: retrying'),
  });
  const job: JobIdentity = { namespace, jobName: settings.jobName, jobUid: settings.jobUid };
  return {
    client,
    job,
    store: (artifactKind) => secretStore(client, job, settings, artifactKind),
    reference: (reference, artifactKind) => secretReference(client, job, reference, artifactKind),
    publish: (result, sensitiveOutputs, untilMs) => {
      client.setDeadline(untilMs, 'the hand-back budget');
      return publishToCluster(client, job, result, sensitiveOutputs, log);
    },
    blockedResults: (approvalHash) =>
      readBlockedResults(client, namespace, { approvalHash, objectKind: settings.kind, objectName: settings.object }),
  };
}

/** Where an object's backups or plan artifacts live: Secrets named `<objectStorePrefix>-…` (shortened to a Kubernetes name's 253), in the Job's namespace. */
function secretStore(
  client: KubeClient,
  job: JobIdentity,
  settings: Settings,
  artifactKind: 'plan' | 'backup',
): ChunkStore {
  return new SecretChunkStore({
    client,
    namespace: job.namespace,
    prefix: shortenedName(objectStorePrefix(artifactKind, settings.kind, job.namespace, settings.object!)),
    artifactKind,
    labels: {
      'captf.io/owner-kind': settings.kind,
      'captf.io/owner-namespace': job.namespace,
      'captf.io/owner-name': labelValueFor(settings.object!),
    },
  });
}

/** `secret:<prefix>/<object>` (in the Job's namespace) or `secret:<namespace>/<prefix>/<object>`. */
function secretReference(
  client: KubeClient,
  job: JobIdentity,
  reference: string,
  artifactKind: 'plan' | 'backup',
): { store: ChunkStore; object: string } {
  const parts = reference.slice('secret:'.length).split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => !p))
    throw usageError(
      'ArtifactReferenceInvalid',
      `"${reference}" is not a Secret reference: write secret:<prefix>/<object> or secret:<namespace>/<prefix>/<object>`,
    );
  const [namespace, prefix, object] = parts.length === 3 ? parts : [job.namespace, ...parts];
  return {
    store: new SecretChunkStore({ client, namespace: namespace!, prefix: prefix!, artifactKind }),
    object: object!,
  };
}

/**
 * Best effort, after result.json and the termination message exist: the result Secret, then the
 * Job's annotations. A failure is logged and returned, and never changes the exit code.
 */
async function publishToCluster(
  client: KubeClient,
  job: JobIdentity,
  result: Result,
  sensitiveOutputs: Record<string, OutputValue> | undefined,
  log: Logger,
): Promise<string[]> {
  const problems: string[] = [];
  const failed = (what: string, error: unknown) => {
    const message = `could not ${what}: ${(error as Error).message}`;
    log.error({ kind: (error as { kind?: string }).kind }, message);
    problems.push(message);
  };
  let secret: Awaited<ReturnType<typeof writeResultSecret>> | undefined;
  try {
    secret = await writeResultSecret(client, job, result, sensitiveOutputs);
    if (secret.cuts.length)
      log.warn(
        { cuts: secret.cuts },
        'the result was larger than a Secret holds: parts were cut (see cut.json in the Secret)',
      );
  } catch (error) {
    failed('write the result Secret', error);
  }
  try {
    await annotateJob(client, job, result, secret && { name: secret.name, sha256: secret.sha256 });
  } catch (error) {
    failed('annotate the Job', error);
  }
  return problems;
}
