// A small typed Kubernetes client over node:https: only the calls the runner makes (its own Job,
// Secrets in one namespace). A full client costs about a second and ~65 MB at start-up, paid by
// every one of thousands of Jobs; this costs nothing beyond node itself.
//
// Transient failures (429, 5xx, a dropped connection, no answer in time) are retried with capped
// exponential backoff within a bounded number of attempts and total time (a call, its attempts
// and waits included, ends within RetryPolicy.maxTotalMs, and never past the client's deadline);
// every other failure becomes a RunnerError of kind 'kube' whose message says what the runner
// lacks or which limit it hit.
import { readFile } from 'node:fs/promises';
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { Job } from 'kubernetes-types/batch/v1.js';
import type { Secret } from 'kubernetes-types/core/v1.js';
import type { ObjectMeta, Status } from 'kubernetes-types/meta/v1.js';
import { RunnerError } from '../errors.ts';
import type { KubeConfig } from './config.ts';

export type { Job, Secret, ObjectMeta };

/** RunnerError reasons of kind 'kube'. Callers branch on these (e.g. AlreadyExists on a retried create). */
export const KubeReason = {
  Unauthorized: 'KubeUnauthorized',
  Forbidden: 'KubeForbidden',
  NotFound: 'KubeNotFound',
  AlreadyExists: 'KubeAlreadyExists',
  Conflict: 'KubeConflict',
  Invalid: 'KubeInvalid',
  RequestTooLarge: 'KubeRequestTooLarge',
  Throttled: 'KubeThrottled',
  ServerError: 'KubeServerError',
  Unreachable: 'KubeUnreachable',
  TimeBudgetExceeded: 'KubeTimeBudgetExceeded',
  TokenUnreadable: 'KubeTokenUnreadable',
  RequestFailed: 'KubeRequestFailed',
} as const;
export type KubeReason = (typeof KubeReason)[keyof typeof KubeReason];

export const isKubeError = (error: unknown, reason: KubeReason): error is RunnerError =>
  error instanceof RunnerError && error.kind === 'kube' && error.reason === reason;

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Backoff before the second attempt; doubled for each further one. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A call ends this long after its first attempt started: no retry starts later, and a running attempt is cut off then. */
  maxTotalMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 250, maxDelayMs: 8_000, maxTotalMs: 30_000 };

export interface RetryEvent {
  verb: Verb;
  resource: string;
  name: string | undefined;
  attempt: number;
  delayMs: number;
  /** HTTP status, or the network error's message. */
  cause: number | string;
}

export interface KubeClientOptions {
  retry?: Partial<RetryPolicy>;
  /** Timeout of one attempt, from request to the last byte of the response (default 30 s). */
  requestTimeoutMs?: number;
  /** Told before each retry: the caller's hook for logging. */
  onRetry?: (event: RetryEvent) => void;
  // Injectable for tests.
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** In [0, 1): spreads retries of thousands of Jobs that failed at the same moment. */
  random?: () => number;
}

/** RFC 7386: objects merge, `null` deletes a key, anything else replaces. */
export type JsonMergePatch = { [key: string]: unknown };

type Verb = 'get' | 'list' | 'create' | 'patch' | 'delete';

interface ResourceType {
  group: string; // '' for the core group
  version: string;
  plural: string;
}

const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets' };
const JOBS: ResourceType = { group: 'batch', version: 'v1', plural: 'jobs' };

interface ApiRequest {
  verb: Verb;
  resource: ResourceType;
  namespace: string;
  /** The object's name; for a create it is in the body, and named here only for messages. */
  name?: string;
  query?: Record<string, string>;
  body?: unknown;
  contentType?: string;
  accept?: string;
}

interface ApiResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const METHODS: Record<Verb, string> = { get: 'GET', list: 'GET', create: 'POST', patch: 'PATCH', delete: 'DELETE' };
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
const LIST_PAGE_SIZE = '250';
// Ask for metadata only: listing chunk Secrets must not download every chunk.
const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json';

export class KubeClient {
  private readonly agent: Agent;
  private readonly retry: RetryPolicy;
  private readonly requestTimeoutMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly onRetry: ((event: RetryEvent) => void) | undefined;
  private deadline: { atMs: number; what: string } | undefined;

  constructor(
    private readonly config: KubeConfig,
    options: KubeClientOptions = {},
  ) {
    // keepAlive: the runner makes a handful of calls in a row; idle sockets are unref'd, so they
    // never hold the process open.
    this.agent = new Agent({ keepAlive: true, maxSockets: 4, ca: config.ca });
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.onRetry = options.onRetry;
  }

  /**
   * No attempt starts, and none runs, past `atMs` (on the `now` clock): a slow or silent API
   * server cannot hold the runner past its deadline. `what` names the budget in messages.
   */
  setDeadline(atMs: number | undefined, what = 'the time the runner gives the Kubernetes API'): void {
    this.deadline = atMs === undefined ? undefined : { atMs, what };
  }

  /** Closes idle connections (tests; the runner's process simply ends). */
  close(): void {
    this.agent.destroy();
  }

  async getJob(namespace: string, name: string): Promise<Job> {
    return this.json<Job>({ verb: 'get', resource: JOBS, namespace, name });
  }

  /** A JSON merge patch. Put `metadata.uid` in it to make it apply only to that very Job. */
  async patchJob(namespace: string, name: string, patch: JsonMergePatch): Promise<Job> {
    return this.json<Job>({
      verb: 'patch',
      resource: JOBS,
      namespace,
      name,
      body: patch,
      contentType: 'application/merge-patch+json',
    });
  }

  async createSecret(namespace: string, secret: Secret): Promise<Secret> {
    return this.json<Secret>({ verb: 'create', resource: SECRETS, namespace, name: secret.metadata?.name, body: secret });
  }

  /** The Secret, or undefined when there is none of that name. */
  async getSecret(namespace: string, name: string): Promise<Secret | undefined> {
    try {
      return await this.json<Secret>({ verb: 'get', resource: SECRETS, namespace, name });
    } catch (error) {
      if (isKubeError(error, KubeReason.NotFound)) return undefined;
      throw error;
    }
  }

  /** Metadata of the Secrets matching a label selector (e.g. `a=b,c=d`), all pages; no data. */
  async listSecretMetadata(namespace: string, labelSelector: string): Promise<ObjectMeta[]> {
    const items: ObjectMeta[] = [];
    let continueToken: string | undefined;
    do {
      const query: Record<string, string> = { labelSelector, limit: LIST_PAGE_SIZE };
      if (continueToken) query.continue = continueToken;
      const page = await this.json<{ items?: { metadata?: ObjectMeta }[]; metadata?: { continue?: string } }>({
        verb: 'list',
        resource: SECRETS,
        namespace,
        query,
        accept: METADATA_LIST_ACCEPT,
      });
      for (const item of page.items ?? []) if (item.metadata) items.push(item.metadata);
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken);
    return items;
  }

  /**
   * Deletes a Secret; false when it was already gone. With `uid`, deletes only that very object
   * (a Secret re-created under the same name meanwhile is left alone: 409 Conflict).
   */
  async deleteSecret(namespace: string, name: string, options: { uid?: string } = {}): Promise<boolean> {
    const body = options.uid ? { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: options.uid } } : undefined;
    try {
      await this.json<unknown>({ verb: 'delete', resource: SECRETS, namespace, name, body });
      return true;
    } catch (error) {
      if (isKubeError(error, KubeReason.NotFound)) return false;
      throw error;
    }
  }

  private async json<T>(request: ApiRequest): Promise<T> {
    const response = await this.withRetries(request);
    try {
      return JSON.parse(response.body.toString('utf8')) as T;
    } catch {
      throw kubeError(request, KubeReason.RequestFailed, `the API server answered ${response.status} with a body that is not JSON`, {
        httpStatus: response.status,
      });
    }
  }

  private async withRetries(request: ApiRequest): Promise<ApiResponse> {
    const started = this.now();
    for (let attempt = 1; ; attempt++) {
      let response: ApiResponse | undefined;
      let networkError: Error | undefined;
      const endsAt = Math.min(started + this.retry.maxTotalMs, this.deadline?.atMs ?? Infinity);
      const timeoutMs = Math.min(this.requestTimeoutMs, endsAt - this.now());
      if (timeoutMs <= 0) throw this.outOfTime(request, attempt - 1);
      try {
        response = await this.send(request, timeoutMs);
      } catch (error) {
        if (error instanceof RunnerError) throw error;
        networkError = error instanceof Error ? error : new Error(String(error));
        if (isTlsVerificationError(networkError)) {
          throw kubeError(
            request,
            KubeReason.Unreachable,
            `the API server at ${this.config.server} failed TLS verification (${networkError.message}); ` +
              'the ca.crt of the service account dir must be the CA of this cluster',
            {},
            networkError,
          );
        }
      }
      if (response && response.status < 400) return response;
      if (response && !isRetryable(response.status)) throw errorFromResponse(request, response, attempt);

      const retryAfterMs = response ? parseRetryAfter(response.headers['retry-after'], this.now()) : undefined;
      const delayMs = retryAfterMs ?? this.backoff(attempt);
      const elapsedMs = this.now() - started;
      if (attempt >= this.retry.maxAttempts || started + elapsedMs + delayMs >= endsAt) {
        const gaveUp = `gave up after ${attempt} attempt${attempt === 1 ? '' : 's'} in ${Math.round(elapsedMs / 1000)}s`;
        if (response) throw errorFromResponse(request, response, attempt, gaveUp);
        throw kubeError(
          request,
          KubeReason.Unreachable,
          `the API server at ${this.config.server} could not be reached (${networkError?.message}); ${gaveUp}`,
          { attempts: attempt },
          networkError,
        );
      }
      this.onRetry?.({
        verb: request.verb,
        resource: resourceLabel(request.resource),
        name: request.name,
        attempt,
        delayMs,
        cause: response ? response.status : (networkError?.message ?? 'unknown'),
      });
      await this.sleep(delayMs);
    }
  }

  private outOfTime(request: ApiRequest, attempts: number): RunnerError {
    const budget = this.deadline && this.deadline.atMs <= this.now() ? this.deadline.what : `the ${Math.round(this.retry.maxTotalMs / 1000)} s a call may take`;
    return kubeError(request, KubeReason.TimeBudgetExceeded, `no time is left of ${budget}: the API server at ${this.config.server} did not answer in time (${attempts} attempt${attempts === 1 ? '' : 's'})`, { attempts });
  }

  private backoff(attempt: number): number {
    const capped = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
    return Math.round(capped * (0.5 + this.random() / 2));
  }

  private async send(request: ApiRequest, timeoutMs: number): Promise<ApiResponse> {
    const token = await this.readToken(request);
    const body = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
    const headers: Record<string, string | number> = {
      Authorization: `Bearer ${token}`,
      Accept: request.accept ?? 'application/json',
      'User-Agent': 'captf-runner',
    };
    if (body) {
      headers['Content-Type'] = request.contentType ?? 'application/json';
      headers['Content-Length'] = body.length;
    }
    return new Promise<ApiResponse>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: this.config.host,
          port: this.config.port,
          method: METHODS[request.verb],
          path: apiPath(request),
          headers,
          agent: this.agent,
          ca: this.config.ca,
        },
        (res) => {
          const parts: Buffer[] = [];
          let size = 0;
          res.on('data', (part: Buffer) => {
            size += part.length;
            if (size > MAX_RESPONSE_BYTES) {
              req.destroy(new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`));
              return;
            }
            parts.push(part);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
          res.on('error', reject);
        },
      );
      // From the request to the last byte of the answer (a socket timeout would restart with every byte, and with the TLS handshake).
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      req.on('close', () => clearTimeout(timer));
      req.on('error', reject);
      req.end(body);
    });
  }

  // Re-read on every request: the kubelet rotates projected service account tokens in place.
  private async readToken(request: ApiRequest): Promise<string> {
    try {
      const token = (await readFile(this.config.tokenFile, 'utf8')).trim();
      if (token) return token;
    } catch {
      // reported below, like an empty token
    }
    throw kubeError(
      request,
      KubeReason.TokenUnreadable,
      `the service account token at ${this.config.tokenFile} is missing or empty; the pod needs a mounted service account token`,
      {},
    );
  }
}

const isRetryable = (status: number) => status === 429 || status >= 500;

// A certificate that does not verify will not verify on the next attempt either.
const isTlsVerificationError = (error: Error) =>
  /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(String((error as NodeJS.ErrnoException).code ?? ''));

function apiPath({ verb, resource, namespace, name, query }: ApiRequest): string {
  const root = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
  let path = `${root}/namespaces/${encodeURIComponent(namespace)}/${resource.plural}`;
  if (name !== undefined && verb !== 'create') path += `/${encodeURIComponent(name)}`;
  if (query) path += `?${new URLSearchParams(query).toString()}`;
  return path;
}

/** `secrets` or `jobs.batch`, as Kubernetes names resources in messages. */
const resourceLabel = (resource: ResourceType) => (resource.group ? `${resource.plural}.${resource.group}` : resource.plural);

/** Retry-After: delay-seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

const SECRET_DATA_LIMIT = '1 MiB (1,048,576 bytes), the most a Secret may hold';
const ANNOTATIONS_LIMIT = '256 KiB (262,144 bytes), the most all annotations of one object may hold together';

function errorFromResponse(request: ApiRequest, response: ApiResponse, attempts: number, gaveUp?: string): RunnerError {
  const status = parseStatus(response.body);
  const apiMessage = status?.message ?? (response.body.toString('utf8').slice(0, 500) || `HTTP ${response.status}`);
  const detail = { httpStatus: response.status, apiReason: status?.reason, apiMessage, attempts };
  const where = `in namespace "${request.namespace}"`;
  const resource = resourceLabel(request.resource);
  const target = request.name ? `${resource} "${request.name}"` : resource;

  switch (response.status) {
    case 401:
      return kubeError(
        request,
        KubeReason.Unauthorized,
        `the API server rejected the service account token (401 Unauthorized) when the runner tried to ${request.verb} ${target} ${where}: ` +
          'the token is expired, revoked or not from this cluster; check the pod\'s service account token mount',
        detail,
      );
    case 403: {
      const group = request.resource.group;
      return kubeError(
        request,
        KubeReason.Forbidden,
        `the runner's Role lacks "${request.verb}" on "${request.resource.plural}" (API group "${group}") ${where}: ${apiMessage}. ` +
          `Add verb "${request.verb}" for resource "${request.resource.plural}" in apiGroups [${JSON.stringify(group)}] ` +
          "to the Role bound to the runner's ServiceAccount (see runner/role.example.yaml)",
        detail,
      );
    }
    case 404:
      return kubeError(request, KubeReason.NotFound, `${target} not found ${where}`, detail);
    case 409:
      return status?.reason === 'AlreadyExists'
        ? kubeError(request, KubeReason.AlreadyExists, `${target} already exists ${where}`, detail)
        : kubeError(request, KubeReason.Conflict, `could not ${request.verb} ${target} ${where}: ${apiMessage}`, detail);
    case 413:
      return kubeError(
        request,
        KubeReason.RequestTooLarge,
        `could not ${request.verb} ${target} ${where}: the request body is over the API server's limit ` +
          `(3 MiB by default; this one was refused: ${apiMessage})`,
        detail,
      );
    case 422:
      return kubeError(request, KubeReason.Invalid, `could not ${request.verb} ${target} ${where}: ${explainInvalid(status, apiMessage)}`, {
        ...detail,
        causes: status?.details?.causes,
      });
    default: {
      const reason = response.status === 429 ? KubeReason.Throttled : response.status >= 500 ? KubeReason.ServerError : KubeReason.RequestFailed;
      return kubeError(
        request,
        reason,
        `could not ${request.verb} ${target} ${where}: ${response.status} ${apiMessage}${gaveUp ? `; ${gaveUp}` : ''}`,
        detail,
      );
    }
  }
}

/** Says which limit a 422 hit when it is one the runner can meet; else the API server's words. */
function explainInvalid(status: Status | undefined, apiMessage: string): string {
  const causes = status?.details?.causes ?? [];
  const tooLong = (field: string) => causes.some((cause) => cause.reason === 'FieldValueTooLong' && cause.field === field);
  if (tooLong('data')) return `the Secret's data is over ${SECRET_DATA_LIMIT} (${apiMessage})`;
  if (tooLong('metadata.annotations')) return `the annotations are over ${ANNOTATIONS_LIMIT} (${apiMessage})`;
  if (/field is immutable/.test(apiMessage)) return `the object is immutable and cannot be changed (${apiMessage})`;
  return `the API server found the object invalid: ${apiMessage}`;
}

function parseStatus(body: Buffer): Status | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as Status;
    return parsed && parsed.kind === 'Status' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function kubeError(request: ApiRequest, reason: KubeReason, message: string, detail: Record<string, unknown>, cause?: unknown): RunnerError {
  return new RunnerError({
    kind: 'kube',
    reason,
    message: `Kubernetes API: ${message}`,
    cause,
    detail: {
      verb: request.verb,
      resource: resourceLabel(request.resource),
      namespace: request.namespace,
      ...(request.name !== undefined && { name: request.name }),
      ...detail,
    },
  });
}
