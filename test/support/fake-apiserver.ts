// A loopback HTTPS fake of the Kubernetes API server, for the Jobs and Secrets the runner touches.
// It enforces the rules the runner meets in a real cluster, answering as the real API server does
// (status codes, Status bodies, message formats): authentication (401), RBAC from a per-test table
// (403), request bodies over 3 MiB (413), validation of names, labels, annotations and Secret
// data (422), immutable Secrets (422), AlreadyExists and resourceVersion/uid conflicts (409), label
// selectors, JSON merge patch, injected 429/5xx/dropped connections, and an API server that takes
// requests and never answers (`silent`).
//
// Its own CA and server certificate are made with openssl at test time. Tests start it and stop it.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile, readFile, mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const MAX_SECRET_DATA_BYTES = 1_048_576;
const MAX_ANNOTATIONS_BYTES = 262_144;
const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

type Verb = 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete';
type Resource = 'secrets' | 'jobs';
type KubeObject = { apiVersion?: string; kind?: string; metadata: Record<string, any>; [key: string]: any };

/** One RBAC rule: which verbs on which resources, optionally only in some namespaces or for some names. */
export interface RbacRule {
  verbs: string[];
  /** As in a Role: `""` is the core group (Secrets), `batch` holds Jobs. Absent: any group (a shorthand for tests). */
  apiGroups?: string[];
  resources: Resource[];
  namespaces?: string[];
  /** As in a Role: matches only requests that name an object, so never a create or a list. */
  resourceNames?: string[];
}

export type Fault = { status: 429 | 500 | 502 | 503 | 504; retryAfter?: string } | { reset: true };

export interface FaultMatch {
  verb?: Verb;
  resource?: Resource;
  name?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  verb: Verb;
  resource: Resource;
  namespace: string;
  name: string | undefined;
  token: string | undefined;
  accept: string | undefined;
  status: number;
  /** The request body's bytes, and the answer body's (what crossed the wire besides headers). */
  requestBytes: number;
  responseBytes: number;
  /** A create's object name (from its body: the path names none). */
  created?: string;
}

export interface FakeApiServerOptions {
  /** Listen on [::1] instead of 127.0.0.1. */
  ipv6?: boolean;
  /** The service account the tokens belong to, for 403 messages. */
  serviceAccount?: { namespace: string; name: string };
  /** Valid bearer tokens; default one random token. */
  tokens?: string[];
}

const RESOURCE_INFO: Record<Resource, { group: string; apiVersion: string; kind: string; qualified: string }> = {
  secrets: { group: '', apiVersion: 'v1', kind: 'Secret', qualified: 'secrets' },
  jobs: { group: 'batch', apiVersion: 'batch/v1', kind: 'Job', qualified: 'jobs.batch' },
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(String(body.message));
  }
}

const statusBody = (code: number, reason: string, message: string, details?: Record<string, unknown>) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason,
  ...(details && { details }),
  code,
});

export class FakeApiServer {
  /** Bearer tokens the server accepts; tests change it to simulate rotation or revocation. */
  readonly validTokens: Set<string>;
  /** undefined: everything is allowed. Else a request must match a rule. */
  rbac: RbacRule[] | undefined;
  readonly requests: RecordedRequest[] = [];
  /** While true, every request is taken (TLS, headers) and never answered: a hung API server. */
  silent = false;
  /** The clock that stamps creationTimestamp; tests move it to order objects. */
  now: () => Date = () => new Date();
  /** Changes each object created before it is stored (and echoed): a server that keeps other bytes than it was sent. */
  alterCreated: ((object: KubeObject) => void) | undefined;

  private readonly objects = new Map<string, KubeObject>();
  private readonly faults: { match: FaultMatch; fault: Fault }[] = [];
  private resourceVersion = 1000;

  private constructor(
    private readonly server: Server,
    readonly host: string,
    readonly port: number,
    readonly ca: string,
    readonly serviceAccount: { namespace: string; name: string },
    tokens: string[],
  ) {
    this.validTokens = new Set(tokens);
  }

  static async start(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const pki = await testPki();
    const host = options.ipv6 ? '::1' : '127.0.0.1';
    const server = createServer({ key: pki.serverKey, cert: pki.serverCert });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    const fake = new FakeApiServer(
      server,
      host,
      (server.address() as AddressInfo).port,
      pki.caCert,
      options.serviceAccount ?? { namespace: 'captf-system', name: 'captf-runner' },
      options.tokens ?? [randomUUID()],
    );
    server.on('request', (req, res) => void fake.handle(req, res));
    return fake;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** KUBERNETES_SERVICE_HOST/PORT as the kubelet sets them. */
  get env(): Record<string, string> {
    return { KUBERNETES_SERVICE_HOST: this.host, KUBERNETES_SERVICE_PORT: String(this.port) };
  }

  /** A service account dir as the kubelet mounts it: token, ca.crt, namespace. */
  async writeServiceAccountDir(dir: string, token = [...this.validTokens][0]): Promise<string> {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'token'), token ?? '');
    await writeFile(join(dir, 'ca.crt'), this.ca);
    await writeFile(join(dir, 'namespace'), this.serviceAccount.namespace);
    return dir;
  }

  /** Adds the Job `job` and writes a service account dir in `dir`: the runner's flags and environment to run as that Job for the object `demo`. */
  async runAsJob(
    namespace: string,
    job: string,
    dir: string,
  ): Promise<{ args: string[]; env: Record<string, string> }> {
    const { metadata } = this.addJob(namespace, job);
    const sa = await this.writeServiceAccountDir(join(dir, 'sa'));
    return {
      args: [
        '--job-name',
        job,
        '--job-uid',
        metadata.uid!,
        '--service-account-dir',
        sa,
        '--namespace',
        namespace,
        '--object',
        'demo',
      ],
      env: this.env,
    };
  }

  /** The next requests matching `match` get these answers, in order, before normal handling. */
  injectFaults(match: FaultMatch, ...faults: Fault[]): void {
    for (const fault of faults) this.faults.push({ match, fault });
  }

  addJob(namespace: string, name: string, annotations: Record<string, string> = {}): KubeObject {
    const job: KubeObject = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, namespace, annotations },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'source', image: 'runner' }] } } },
    };
    return this.store('jobs', job, true);
  }

  job(namespace: string, name: string): KubeObject | undefined {
    return structuredClone(this.objects.get(key('jobs', namespace, name)));
  }

  secret(namespace: string, name: string): KubeObject | undefined {
    return structuredClone(this.objects.get(key('secrets', namespace, name)));
  }

  secrets(namespace: string): KubeObject[] {
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(`secrets/${namespace}/`))
      .map(([, object]) => structuredClone(object))
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  /** Puts a Secret in place behind the runner's back, immutable or not (e.g. a chunk someone changed). */
  setSecret(namespace: string, secret: KubeObject): void {
    this.store('secrets', { ...secret, metadata: { ...secret.metadata, namespace } }, true);
  }

  /** Removes an object behind the runner's back (e.g. a chunk lost to a partial write). */
  removeSecret(namespace: string, name: string): void {
    this.objects.delete(key('secrets', namespace, name));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://fake');
    const route = parseRoute(req.method ?? 'GET', url.pathname);
    if (!route) {
      send(res, 404, statusBody(404, 'NotFound', 'the server could not find the requested resource'));
      return;
    }
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : undefined;
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname + url.search,
      ...route,
      token,
      accept: req.headers.accept,
      status: 0,
      requestBytes: 0,
      responseBytes: 0,
    };
    this.requests.push(record);
    if (this.silent) return; // the connection stays open until the client gives up (or stop())

    try {
      const faultIndex = this.faults.findIndex(({ match }) => matches(match, route));
      if (faultIndex >= 0) {
        const [{ fault }] = this.faults.splice(faultIndex, 1);
        if ('reset' in fault) {
          record.status = -1;
          req.socket.destroy();
          return;
        }
        const reason =
          fault.status === 429 ? 'TooManyRequests' : fault.status === 503 ? 'ServiceUnavailable' : 'InternalError';
        const message =
          fault.status === 429
            ? 'Too many requests, please try again later.'
            : 'the server is currently unable to handle the request';
        throw new HttpError(
          fault.status,
          statusBody(fault.status, reason, message),
          fault.retryAfter ? { 'Retry-After': fault.retryAfter } : {},
        );
      }
      if (!token || !this.validTokens.has(token)) {
        throw new HttpError(401, statusBody(401, 'Unauthorized', 'Unauthorized'));
      }
      this.authorize(route);
      const body = await readBody(req);
      record.requestBytes = body.length;
      if (route.verb === 'create') record.created = (parseJson(body).metadata as { name?: string } | undefined)?.name;
      const { status, object } = this.dispatch(route, url, body, req.headers);
      record.status = status;
      record.responseBytes = send(res, status, object);
    } catch (error) {
      // A bug in the fake shows up as a 500 the test sees, not as a crash of the test process.
      const answer =
        error instanceof HttpError
          ? error
          : new HttpError(500, statusBody(500, 'InternalError', `fake apiserver: ${String(error)}`));
      record.status = answer.status;
      record.responseBytes = send(res, answer.status, answer.body, answer.headers);
    }
  }

  private authorize({ verb, resource, namespace, name }: Route): void {
    if (!this.rbac) return;
    const { group, qualified } = RESOURCE_INFO[resource];
    const allowed = this.rbac.some(
      (rule) =>
        rule.verbs.includes(verb) &&
        (!rule.apiGroups || rule.apiGroups.includes(group) || rule.apiGroups.includes('*')) &&
        rule.resources.includes(resource) &&
        (!rule.namespaces || rule.namespaces.includes(namespace)) &&
        (!rule.resourceNames || (name !== undefined && rule.resourceNames.includes(name))),
    );
    if (allowed) return;
    const user = `system:serviceaccount:${this.serviceAccount.namespace}:${this.serviceAccount.name}`;
    const subject = name === undefined ? qualified : `${qualified} "${name}"`;
    throw new HttpError(
      403,
      statusBody(
        403,
        'Forbidden',
        `${subject} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${group}" in the namespace "${namespace}"`,
        { ...(name !== undefined && { name }), group, kind: resource },
      ),
    );
  }

  private dispatch(
    route: Route,
    url: URL,
    body: Buffer,
    headers: IncomingMessage['headers'],
  ): { status: number; object: unknown } {
    const { verb, resource, namespace, name } = route;
    const existing = name === undefined ? undefined : this.objects.get(key(resource, namespace, name));
    const notFound = () =>
      new HttpError(
        404,
        statusBody(404, 'NotFound', `${RESOURCE_INFO[resource].qualified} "${name}" not found`, {
          name,
          kind: resource,
        }),
      );

    switch (verb) {
      case 'get':
        if (!existing) throw notFound();
        return { status: 200, object: existing };
      case 'list':
        return { status: 200, object: this.list(resource, namespace, url, headers.accept) };
      case 'create': {
        const object = parseJson(body);
        if (object.metadata?.namespace && object.metadata.namespace !== namespace) {
          throw new HttpError(
            400,
            statusBody(
              400,
              'BadRequest',
              'the namespace of the provided object does not match the namespace sent on the request',
            ),
          );
        }
        object.metadata = { ...object.metadata, namespace };
        this.validate(resource, object, undefined);
        if (this.objects.has(key(resource, namespace, object.metadata.name))) {
          const { qualified } = RESOURCE_INFO[resource];
          throw new HttpError(
            409,
            statusBody(409, 'AlreadyExists', `${qualified} "${object.metadata.name}" already exists`, {
              name: object.metadata.name,
              group: RESOURCE_INFO[resource].group,
              kind: resource,
            }),
          );
        }
        this.alterCreated?.(object);
        return { status: 201, object: this.store(resource, object, true) };
      }
      case 'update':
      case 'patch': {
        if (!existing) throw notFound();
        if (verb === 'patch' && !String(headers['content-type']).startsWith('application/merge-patch+json')) {
          throw new HttpError(415, statusBody(415, 'UnsupportedMediaType', 'the fake supports only merge patches'));
        }
        const next = verb === 'patch' ? mergePatch(existing, parseJson(body)) : parseJson(body);
        this.checkPreconditions(resource, existing, next);
        next.metadata = {
          ...next.metadata,
          namespace,
          name,
          uid: existing.metadata.uid,
          creationTimestamp: existing.metadata.creationTimestamp,
        };
        this.validate(resource, next, existing);
        return { status: 200, object: this.store(resource, next, false) };
      }
      case 'delete': {
        if (!existing) throw notFound();
        const options = (body.length ? parseJson(body) : {}) as { preconditions?: { uid?: string } };
        const uid = options.preconditions?.uid;
        if (uid && uid !== existing.metadata.uid) {
          throw conflict(
            resource,
            name!,
            `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${existing.metadata.uid}`,
          );
        }
        this.objects.delete(key(resource, namespace, name!));
        return {
          status: 200,
          object: {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Success',
            details: { name, kind: resource, uid: existing.metadata.uid },
          },
        };
      }
    }
  }

  private checkPreconditions(resource: Resource, existing: KubeObject, next: KubeObject): void {
    const name = existing.metadata.name;
    const uid = next.metadata?.uid;
    if (uid && uid !== existing.metadata.uid) {
      throw conflict(
        resource,
        name,
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${existing.metadata.uid}`,
      );
    }
    const rv = next.metadata?.resourceVersion;
    if (rv && rv !== existing.metadata.resourceVersion) {
      throw conflict(
        resource,
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
  }

  private list(resource: Resource, namespace: string, url: URL, accept: string | undefined): unknown {
    const selector = parseSelector(url.searchParams.get('labelSelector') ?? '');
    const all = [...this.objects.entries()]
      .filter(([k, object]) => k.startsWith(`${resource}/${namespace}/`) && selector(object.metadata.labels ?? {}))
      .map(([, object]) => object)
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    // limit/continue as the real server pages: an opaque token, here an offset.
    const offset = Number(url.searchParams.get('continue') ?? 0);
    const limit = Number(url.searchParams.get('limit') ?? 0) || all.length;
    const page = all.slice(offset, offset + limit);
    const more = offset + limit < all.length;
    const listMeta = {
      resourceVersion: String(this.resourceVersion),
      ...(more && { continue: String(offset + limit) }),
    };
    if (accept?.includes('as=PartialObjectMetadataList')) {
      return {
        kind: 'PartialObjectMetadataList',
        apiVersion: 'meta.k8s.io/v1',
        metadata: listMeta,
        items: page.map((object) => ({
          kind: 'PartialObjectMetadata',
          apiVersion: 'meta.k8s.io/v1',
          metadata: object.metadata,
        })),
      };
    }
    const { apiVersion, kind } = RESOURCE_INFO[resource];
    return { kind: `${kind}List`, apiVersion, metadata: listMeta, items: page };
  }

  // The checks of the real API server's validation that the runner can run into, with its wording.
  private validate(resource: Resource, object: KubeObject, existing: KubeObject | undefined): void {
    const errors: Cause[] = [];
    const fail = (reason: string, field: string, message: string) => errors.push({ reason, field, message });
    const meta = object.metadata ?? {};

    if (!meta.name) fail('FieldValueRequired', 'metadata.name', 'Required value: name or generateName is required');
    else if (!isDnsSubdomain(meta.name))
      fail('FieldValueInvalid', 'metadata.name', `Invalid value: ${JSON.stringify(meta.name)}: ${DNS_SUBDOMAIN_RULE}`);

    for (const [labelKey, value] of Object.entries<string>(meta.labels ?? {})) {
      if (!isQualifiedName(labelKey))
        fail(
          'FieldValueInvalid',
          'metadata.labels',
          `Invalid value: ${JSON.stringify(labelKey)}: ${QUALIFIED_NAME_RULE}`,
        );
      if (typeof value !== 'string' || value.length > 63) {
        fail(
          'FieldValueInvalid',
          'metadata.labels',
          `Invalid value: ${JSON.stringify(value)}: must be no more than 63 characters`,
        );
      } else if (!LABEL_VALUE.test(value)) {
        fail('FieldValueInvalid', 'metadata.labels', `Invalid value: ${JSON.stringify(value)}: ${LABEL_VALUE_RULE}`);
      }
    }

    let annotationBytes = 0;
    for (const [annotationKey, value] of Object.entries<string>(meta.annotations ?? {})) {
      if (!isQualifiedName(annotationKey)) {
        fail(
          'FieldValueInvalid',
          'metadata.annotations',
          `Invalid value: ${JSON.stringify(annotationKey)}: ${QUALIFIED_NAME_RULE}`,
        );
      }
      annotationBytes += Buffer.byteLength(annotationKey) + Buffer.byteLength(String(value));
    }
    if (annotationBytes > MAX_ANNOTATIONS_BYTES)
      fail('FieldValueTooLong', 'metadata.annotations', `Too long: must have at most ${MAX_ANNOTATIONS_BYTES} bytes`);

    for (const [index, owner] of (meta.ownerReferences ?? []).entries()) {
      for (const field of ['apiVersion', 'kind', 'name', 'uid']) {
        if (!owner?.[field])
          fail('FieldValueRequired', `metadata.ownerReferences[${index}].${field}`, 'Required value');
      }
    }

    if (resource === 'secrets') validateSecret(object, existing, fail);
    if (errors.length === 0) return;

    const { kind, group } = RESOURCE_INFO[resource];
    const shown = errors.map((cause) => `${cause.field}: ${cause.message}`);
    const subject = `${group ? `${kind}.${group}` : kind} ${JSON.stringify(meta.name ?? '')}`;
    const message = `${subject} is invalid: ${shown.length === 1 ? shown[0] : `[${shown.join(', ')}]`}`;
    throw new HttpError(422, statusBody(422, 'Invalid', message, { name: meta.name, group, kind, causes: errors }));
  }

  private store(resource: Resource, object: KubeObject, isNew: boolean): KubeObject {
    const { apiVersion, kind } = RESOURCE_INFO[resource];
    const stored: KubeObject = structuredClone({ ...object, apiVersion, kind });
    stored.metadata.resourceVersion = String(++this.resourceVersion);
    if (isNew) {
      stored.metadata.uid = randomUUID();
      stored.metadata.creationTimestamp = this.now()
        .toISOString()
        .replace(/\.\d+Z$/, 'Z');
    }
    this.objects.set(key(resource, stored.metadata.namespace, stored.metadata.name), stored);
    return structuredClone(stored);
  }
}

const DNS_SUBDOMAIN_RULE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_RULE = "name part must consist of alphanumeric characters, '-', '_' or '.'";
const LABEL_VALUE_RULE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const IMMUTABLE_RULE = 'Forbidden: field is immutable when `immutable` is set';

function validateSecret(
  secret: KubeObject,
  existing: KubeObject | undefined,
  fail: (reason: string, field: string, message: string) => void,
): void {
  // stringData is write-only: it is merged into data.
  if (secret.stringData) {
    secret.data = { ...secret.data };
    for (const [dataKey, value] of Object.entries<string>(secret.stringData))
      secret.data[dataKey] = Buffer.from(value).toString('base64');
    delete secret.stringData;
  }
  // The limit counts decoded bytes, not the base64 in the request.
  let dataBytes = 0;
  for (const [dataKey, value] of Object.entries<string>(secret.data ?? {})) {
    if (!/^[-._a-zA-Z0-9]+$/.test(dataKey)) {
      fail(
        'FieldValueInvalid',
        `data[${dataKey}]`,
        `Invalid value: ${JSON.stringify(dataKey)}: a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
      );
    }
    if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) {
      fail('FieldValueInvalid', `data[${dataKey}]`, 'Invalid value: illegal base64 data');
      continue;
    }
    dataBytes += Buffer.from(value, 'base64').length;
  }
  if (dataBytes > MAX_SECRET_DATA_BYTES)
    fail('FieldValueTooLong', 'data', `Too long: must have at most ${MAX_SECRET_DATA_BYTES} bytes`);
  if (existing?.immutable) {
    if (JSON.stringify(secret.data ?? {}) !== JSON.stringify(existing.data ?? {}))
      fail('FieldValueForbidden', 'data', IMMUTABLE_RULE);
    if (secret.immutable !== true) fail('FieldValueForbidden', 'immutable', IMMUTABLE_RULE);
  }
}

interface Route {
  verb: Verb;
  resource: Resource;
  namespace: string;
  name: string | undefined;
}

interface Cause {
  reason: string;
  field: string;
  message: string;
}

const key = (resource: Resource, namespace: string, name: string) => `${resource}/${namespace}/${name}`;

function parseRoute(method: string, pathname: string): Route | undefined {
  const match = /^\/(?:api\/v1|apis\/batch\/v1)\/namespaces\/([^/]+)\/(secrets|jobs)(?:\/([^/]+))?$/.exec(pathname);
  if (!match) return undefined;
  const resource = match[2] as Resource;
  if ((resource === 'jobs') !== pathname.startsWith('/apis/batch/v1/')) return undefined;
  const namespace = decodeURIComponent(match[1]);
  const name = match[3] === undefined ? undefined : decodeURIComponent(match[3]);
  const verbs: Record<string, Verb | undefined> =
    name === undefined
      ? { GET: 'list', POST: 'create' }
      : { GET: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };
  const verb = verbs[method];
  return verb && { verb, resource, namespace, name };
}

const matches = (match: FaultMatch, route: Route) =>
  (!match.verb || match.verb === route.verb) &&
  (!match.resource || match.resource === route.resource) &&
  (!match.name || match.name === route.name);

const conflict = (resource: Resource, name: string, why: string) =>
  new HttpError(
    409,
    statusBody(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${RESOURCE_INFO[resource].qualified} "${name}": ${why}`,
      {
        name,
        group: RESOURCE_INFO[resource].group,
        kind: resource,
      },
    ),
  );

// The real server reads at most 3 MiB of a body and answers 413 beyond. The whole body is read
// first so the client sees the answer rather than a reset. (Bodies left unread on earlier answers
// are discarded by node's server.)
async function readBody(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req as AsyncIterable<Buffer>) {
    size += part.length;
    if (size <= MAX_REQUEST_BODY_BYTES) parts.push(part);
  }
  if (size > MAX_REQUEST_BODY_BYTES) {
    throw new HttpError(
      413,
      statusBody(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_REQUEST_BODY_BYTES}`),
    );
  }
  return Buffer.concat(parts);
}

function parseJson(body: Buffer): KubeObject {
  try {
    const parsed = JSON.parse(body.toString('utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
  } catch {
    // answered below
  }
  throw new HttpError(400, statusBody(400, 'BadRequest', 'the body of the request was in an unknown format'));
}

/** Sends a JSON answer; returns its body's size in bytes. */
function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): number {
  const text = JSON.stringify(body);
  const bytes = Buffer.byteLength(text);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': bytes, ...headers });
  res.end(text);
  return bytes;
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: any, patch: any): any {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return structuredClone(patch);
  const result = target !== null && typeof target === 'object' && !Array.isArray(target) ? structuredClone(target) : {};
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) delete result[field];
    else result[field] = mergePatch(result[field], value);
  }
  return result;
}

// Equality-based selectors (`a=b`, `a==b`, `a!=b`), existence (`a`, `!a`) and set-based
// (`a in (x,y)`, `a notin (x,y)`), comma-separated: what kubectl and clients send.
function parseSelector(text: string): (labels: Record<string, string>) => boolean {
  const requirements: ((labels: Record<string, string>) => boolean)[] = [];
  for (const part of text.match(/[^,(]+(\([^)]*\))?/g) ?? []) {
    const term = part.trim();
    if (!term) continue;
    let m: RegExpExecArray | null;
    if ((m = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term))) {
      const [, labelKey, op, list] = m;
      const values = list.split(',').map((v) => v.trim());
      requirements.push((labels) =>
        op === 'in' ? values.includes(labels[labelKey]) : !values.includes(labels[labelKey]),
      );
    } else if ((m = /^([^!=\s]+)\s*(==|=|!=)\s*([^=\s]*)$/.exec(term))) {
      const [, labelKey, op, value] = m;
      requirements.push((labels) => (op === '!=' ? labels[labelKey] !== value : labels[labelKey] === value));
    } else if ((m = /^(!?)([^!=\s]+)$/.exec(term))) {
      const [, not, labelKey] = m;
      requirements.push((labels) => labelKey in labels !== (not === '!'));
    } else {
      throw new HttpError(400, statusBody(400, 'BadRequest', `unable to parse requirement: ${JSON.stringify(term)}`));
    }
  }
  return (labels) => requirements.every((requirement) => requirement(labels));
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const isDnsSubdomain = (name: string) => name.length <= 253 && DNS_SUBDOMAIN.test(name);
function isQualifiedName(name: string): boolean {
  const [prefix, local] = name.includes('/') ? name.split(/\/(.*)/s) : [undefined, name];
  if (prefix !== undefined && !isDnsSubdomain(prefix)) return false;
  return local.length > 0 && local.length <= 63 && /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(local);
}

interface Pki {
  caCert: string;
  serverKey: string;
  serverCert: string;
}

let pki: Promise<Pki> | undefined;

/** A CA and a server certificate for 127.0.0.1, ::1 and localhost; made once per test process. */
function testPki(): Promise<Pki> {
  pki ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fake-apiserver-pki-'));
    try {
      const file = (name: string) => join(dir, name);
      const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
      await run('openssl', [
        'req',
        '-x509',
        ...ec,
        '-keyout',
        file('ca.key'),
        '-out',
        file('ca.crt'),
        '-days',
        '2',
        '-subj',
        '/CN=fake-apiserver-ca',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ]);
      await run('openssl', [
        'req',
        '-new',
        ...ec,
        '-keyout',
        file('server.key'),
        '-out',
        file('server.csr'),
        '-subj',
        '/CN=kube-apiserver',
      ]);
      await writeFile(
        file('server.ext'),
        'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n',
      );
      await run('openssl', [
        'x509',
        '-req',
        '-in',
        file('server.csr'),
        '-CA',
        file('ca.crt'),
        '-CAkey',
        file('ca.key'),
        '-CAcreateserial',
        '-out',
        file('server.crt'),
        '-days',
        '2',
        '-extfile',
        file('server.ext'),
      ]);
      const [caCert, serverKey, serverCert] = await Promise.all(
        ['ca.crt', 'server.key', 'server.crt'].map((name) => readFile(file(name), 'utf8')),
      );
      return { caCert, serverKey, serverCert };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  return pki;
}
