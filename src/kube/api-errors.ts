// What a failed Kubernetes API call means, in one place: every failure becomes a RunnerError of kind
// 'kube' whose reason callers can branch on and whose message says what the runner lacks or which
// limit it hit.
import { MASKED_WHOLE, maskThenCut } from '../masking/boundary.ts';
import type { Masker } from '../masking/mask.ts';
import type { Status } from 'kubernetes-types/meta/v1.js';
import { RunnerError } from '../errors.ts';
import { resourceLabel, type ApiRequest, type ApiResponse } from './transport.ts';

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

/** A certificate that does not verify will not verify on the next attempt either. */
export const isTlsVerificationError = (error: Error) =>
  /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(String((error as NodeJS.ErrnoException).code ?? ''));

/** The most characters of an answer that is no Kubernetes Status the error quotes. */
const NON_STATUS_BODY_CHARS = 500;

const SECRET_DATA_LIMIT = '1 MiB (1,048,576 bytes), the most a Secret may hold';
const ANNOTATIONS_LIMIT = '256 KiB (262,144 bytes), the most all annotations of one object may hold together';

/** The error of an answer with a failing status; `gaveUp` says how the retries ended, for a retryable one. */
export function errorFromResponse(
  request: ApiRequest,
  response: ApiResponse,
  attempts: number,
  gaveUp?: string,
  masker: Pick<Masker, 'mask'> = MASKED_WHOLE,
): RunnerError {
  const status = parseStatus(response.body);
  // An answer that is no Status (a proxy's page) is cut: masked whole first, as every text the runner writes.
  const apiMessage =
    status?.message ??
    (maskThenCut(masker, response.body.toString('utf8'), NON_STATUS_BODY_CHARS) || `HTTP ${response.status}`);
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
          "the token is expired, revoked or not from this cluster; check the pod's service account token mount",
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
        : kubeError(
            request,
            KubeReason.Conflict,
            `could not ${request.verb} ${target} ${where}: ${apiMessage}`,
            detail,
          );
    case 413:
      return kubeError(
        request,
        KubeReason.RequestTooLarge,
        `could not ${request.verb} ${target} ${where}: the request body is over the API server's limit ` +
          `(3 MiB by default; this one was refused: ${apiMessage})`,
        detail,
      );
    case 422:
      return kubeError(
        request,
        KubeReason.Invalid,
        `could not ${request.verb} ${target} ${where}: ${explainInvalid(status, apiMessage)}`,
        {
          ...detail,
          causes: status?.details?.causes,
        },
      );
    default: {
      const reason =
        response.status === 429
          ? KubeReason.Throttled
          : response.status >= 500
            ? KubeReason.ServerError
            : KubeReason.RequestFailed;
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
  const tooLong = (field: string) =>
    causes.some((cause) => cause.reason === 'FieldValueTooLong' && cause.field === field);
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

/** A RunnerError of kind 'kube' about one request: the call (verb, resource, namespace, name) is in its detail. */
export function kubeError(
  request: ApiRequest,
  reason: KubeReason,
  message: string,
  detail: Record<string, unknown>,
  cause?: unknown,
): RunnerError {
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
