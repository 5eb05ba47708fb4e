// One HTTPS exchange with the Kubernetes API server: the request for a call, its path, its body
// and headers, and the whole answer read within a time limit and a size limit. No retries and no
// interpretation of the status: client.ts retries (retry.ts) and api-errors.ts says what went wrong.
import type { Agent } from 'node:https';
import { request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { KubeConfig } from './config.ts';

export type Verb = 'get' | 'list' | 'create' | 'patch' | 'delete';

export interface ResourceType {
  group: string; // '' for the core group
  version: string;
  plural: string;
}

export const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets' };
export const JOBS: ResourceType = { group: 'batch', version: 'v1', plural: 'jobs' };

export interface ApiRequest {
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

export interface ApiResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const METHODS: Record<Verb, string> = { get: 'GET', list: 'GET', create: 'POST', patch: 'PATCH', delete: 'DELETE' };
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** `secrets` or `jobs.batch`, as Kubernetes names resources in messages. */
export const resourceLabel = (resource: ResourceType) =>
  resource.group ? `${resource.plural}.${resource.group}` : resource.plural;

function apiPath({ verb, resource, namespace, name, query }: ApiRequest): string {
  const root = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
  let path = `${root}/namespaces/${encodeURIComponent(namespace)}/${resource.plural}`;
  if (name !== undefined && verb !== 'create') path += `/${encodeURIComponent(name)}`;
  if (query) path += `?${new URLSearchParams(query).toString()}`;
  return path;
}

/**
 * Sends one request and reads the whole answer, whatever its status. Rejects with the network's
 * error, or when the answer takes longer than `timeoutMs` (from the request to its last byte: a
 * socket timeout would restart with every byte, and with the TLS handshake) or exceeds 32 MiB.
 */
export function send(
  config: KubeConfig,
  agent: Agent,
  request: ApiRequest,
  token: string,
  timeoutMs: number,
): Promise<ApiResponse> {
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
        host: config.host,
        port: config.port,
        method: METHODS[request.verb],
        path: apiPath(request),
        headers,
        agent,
        ca: config.ca,
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
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(body);
  });
}
