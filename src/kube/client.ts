// A small typed Kubernetes client over node:https: only the calls the runner makes (its own Job,
// Secrets in one namespace). A full client costs about a second and ~65 MB at start-up, paid by
// every one of thousands of Jobs; this costs nothing beyond node itself.
//
// Each call is one or more HTTPS exchanges (transport.ts). Transient failures are retried
// (retry.ts) within a bounded number of attempts and total time (a call, its attempts and waits
// included, ends within RetryPolicy.maxTotalMs, and never past the client's deadline); every other
// failure becomes a RunnerError of kind 'kube' (api-errors.ts).
import type { Masker } from '../masking/mask.ts';
import { readFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import type { Job } from 'kubernetes-types/batch/v1.js';
import type { Secret } from 'kubernetes-types/core/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import { RunnerError } from '../errors.ts';
import { errorFromResponse, isKubeError, isTlsVerificationError, kubeError, KubeReason } from './api-errors.ts';
import type { KubeConfig } from './config.ts';
import {
  backoffMs,
  DEFAULT_RETRY_POLICY,
  isRetryable,
  parseRetryAfter,
  type RetryEvent,
  type RetryPolicy,
} from './retry.ts';
import { JOBS, resourceLabel, SECRETS, send, type ApiRequest, type ApiResponse } from './transport.ts';

export type { Job, Secret, ObjectMeta };

export interface KubeClientOptions {
  retry?: Partial<RetryPolicy>;
  /** Timeout of one attempt, from request to the last byte of the response (default 30 s). */
  requestTimeoutMs?: number;
  /** Masks what an error quotes of an answer before it is cut (the run's masker: an answer may echo a secret). */
  masker?: Pick<Masker, 'mask'>;
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

const LIST_PAGE_SIZE = 250;
/**
 * Pages one listing may take: 10,000 Secrets, where a store keeps a few chunks per backup and plan of
 * one object and a Job leaves one result. Anyone who may create Secrets in the namespace could label
 * thousands more (or an API server could hand back the same continue token forever): the listing
 * fails the op, not exhausts the runner's memory or its deadline.
 */
const MAX_SECRET_LIST_PAGES = 40;
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
  private readonly masker: Pick<Masker, 'mask'> | undefined;
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
    this.masker = options.masker;
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
    return this.json<Secret>({
      verb: 'create',
      resource: SECRETS,
      namespace,
      name: secret.metadata?.name,
      body: secret,
    });
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

  /** Metadata of the Secrets matching a label selector (e.g. `a=b,c=d`), all pages up to `maxPages`; no data. */
  async listSecretMetadata(
    namespace: string,
    labelSelector: string,
    maxPages = MAX_SECRET_LIST_PAGES,
  ): Promise<ObjectMeta[]> {
    const items: ObjectMeta[] = [];
    let continueToken: string | undefined;
    let pages = 0;
    do {
      const query: Record<string, string> = { labelSelector, limit: String(LIST_PAGE_SIZE) };
      if (continueToken) query.continue = continueToken;
      const request: ApiRequest = { verb: 'list', resource: SECRETS, namespace, query, accept: METADATA_LIST_ACCEPT };
      if (++pages > maxPages) {
        throw kubeError(
          request,
          KubeReason.RequestFailed,
          `listing the Secrets labelled ${labelSelector} in namespace "${namespace}" took ${maxPages} pages ` +
            `(${maxPages * LIST_PAGE_SIZE} Secrets) and still had more, where the runner keeps a few per object. ` +
            `List them (kubectl get secrets -n ${namespace} -l '${labelSelector}'), delete those that are not ` +
            `the runner's, or check the API server's paging`,
          { labelSelector, pages: maxPages },
        );
      }
      const page = await this.json<{ items?: { metadata?: ObjectMeta }[]; metadata?: { continue?: string } }>(request);
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
    const body = options.uid
      ? { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: options.uid } }
      : undefined;
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
      throw kubeError(
        request,
        KubeReason.RequestFailed,
        `the API server answered ${response.status} with a body that is not JSON`,
        {
          httpStatus: response.status,
        },
      );
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
      if (response && !isRetryable(response.status))
        throw errorFromResponse(request, response, attempt, undefined, this.masker);

      const retryAfterMs = response ? parseRetryAfter(response.headers['retry-after'], this.now()) : undefined;
      const delayMs = retryAfterMs ?? backoffMs(this.retry, attempt, this.random());
      const elapsedMs = this.now() - started;
      if (attempt >= this.retry.maxAttempts || started + elapsedMs + delayMs >= endsAt) {
        const gaveUp = `gave up after ${attempt} attempt${attempt === 1 ? '' : 's'} in ${Math.round(elapsedMs / 1000)}s`;
        if (response) throw errorFromResponse(request, response, attempt, gaveUp, this.masker);
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
    const budget =
      this.deadline && this.deadline.atMs <= this.now()
        ? this.deadline.what
        : `the ${Math.round(this.retry.maxTotalMs / 1000)} s a call may take`;
    return kubeError(
      request,
      KubeReason.TimeBudgetExceeded,
      `no time is left of ${budget}: the API server at ${this.config.server} did not answer in time (${attempts} attempt${attempts === 1 ? '' : 's'})`,
      { attempts },
    );
  }

  private async send(request: ApiRequest, timeoutMs: number): Promise<ApiResponse> {
    return send(this.config, this.agent, request, await this.readToken(request), timeoutMs);
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
