// A loopback fake of the S3 API, for the S3 store: path-style requests over HTTP on 127.0.0.1,
// enforcing what the real service does to the requests that store makes. Every request must carry
// a valid AWS Signature Version 4 (recomputed here with the key's secret: 403 SignatureDoesNotMatch
// otherwise) and a payload hash that matches its body; an access key reaches only the key prefixes
// granted to it (as an IAM policy would: 403 AccessDenied); PutObject honours `If-None-Match: *`
// (412 PreconditionFailed when the key exists) and checks `x-amz-checksum-sha256` (400 BadDigest);
// GetObject honours `Range`; ListObjectsV2 pages with continuation tokens (a small page size can be
// forced); faults can be injected (503 SlowDown, 500, a connection reset, a socket that is taken
// and never answered). It also answers STS's AssumeRoleWithWebIdentity (point AWS_ENDPOINT_URL_STS
// here): a web identity token it knows becomes temporary credentials, as IRSA's do; and EKS Pod
// Identity's agent (AWS_CONTAINER_CREDENTIALS_FULL_URI), whose token does the same. No real
// S3-compatible server can be installed here: the S3 store is verified against this fake and the
// AWS SDK only.
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const REGION = 'us-east-1';

export interface S3Grant {
  secretAccessKey: string;
  /** The key prefixes (`bucket/prefix…`) this key may read, write, list and delete under. */
  prefixes: string[];
  /** Temporary credentials (STS's): every request must carry and sign this x-amz-security-token. */
  sessionToken?: string;
}

/** A 5xx answer, a connection reset before the request is served, a socket taken and never answered, or a request served whose answer is lost (the connection reset instead). */
export type S3Fault = { status: 500 | 503 } | { reset: true } | { hang: true } | { loseAnswer: true };

export interface S3FaultMatch {
  method?: string;
  /** Matches requests whose key (or list prefix) starts with it. */
  key?: string;
}

export interface S3Request {
  method: string;
  bucket: string;
  key: string;
  /** ListObjectsV2: the prefix listed. */
  list?: string;
  accessKeyId: string | undefined;
  status: number;
  requestBytes: number;
  responseBytes: number;
}

interface StoredObject {
  data: Buffer;
  lastModified: Date;
  etag: string;
}

/** What a web identity token (IRSA's projected token) is exchanged for: a role and the grant of its temporary credentials. */
export interface WebIdentity {
  roleArn: string;
  grant: S3Grant;
}

export interface FakeS3Options {
  buckets?: string[];
  /** Web identity tokens STS accepts, each for one role. */
  webIdentities?: Record<string, WebIdentity>;
  /** EKS Pod Identity: the tokens its agent accepts (the pod's projected token), each for one grant. */
  podIdentities?: Record<string, S3Grant>;
  /** Access keys and what each may reach; default one key for everything. */
  grants?: Record<string, S3Grant>;
  /** At most this many keys per ListObjectsV2 page (the real service: 1,000). */
  pageSize?: number;
}

export class FakeS3 {
  readonly requests: S3Request[] = [];
  /** Changes each object put before it is stored: a service that keeps other bytes than it was sent. */
  alterPut: ((key: string, data: Buffer) => Buffer) | undefined;
  now: () => Date = () => new Date();
  pageSize: number;
  /** A faulty service: every ListObjectsV2 page is empty and says there is more, under a new token each time. */
  endlessLists = false;
  readonly grants: Map<string, S3Grant>;

  private readonly objects = new Map<string, StoredObject>();
  private readonly buckets: Set<string>;
  private readonly faults: { match: S3FaultMatch; fault: S3Fault }[] = [];
  private readonly hung = new Set<Socket>();
  private readonly webIdentities: Map<string, WebIdentity>;
  private readonly podIdentities: Map<string, S3Grant>;

  private constructor(
    private readonly server: Server,
    readonly endpoint: string,
    options: FakeS3Options,
  ) {
    this.buckets = new Set(options.buckets ?? ['captf-artifacts']);
    this.grants = new Map(
      Object.entries(options.grants ?? { AKIDFAKES3EXAMPLE: { secretAccessKey: 'fake-secret-key', prefixes: [''] } }),
    );
    this.pageSize = options.pageSize ?? 1000;
    this.webIdentities = new Map(Object.entries(options.webIdentities ?? {}));
    this.podIdentities = new Map(Object.entries(options.podIdentities ?? {}));
  }

  static async start(options: FakeS3Options = {}): Promise<FakeS3> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const fake = new FakeS3(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, options);
    server.on('request', (req, res) => void fake.handle(req, res));
    return fake;
  }

  async stop(): Promise<void> {
    for (const socket of this.hung) socket.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * The environment a process needs to reach this fake the way the SDK finds its settings: the
   * endpoint, the region and an access key from the variables, and nothing else (no config files,
   * no instance metadata: nothing leaves the machine).
   */
  env(accessKeyId = [...this.grants.keys()][0]!): Record<string, string> {
    return {
      ...this.sdkSettings(),
      AWS_ACCESS_KEY_ID: accessKeyId,
      AWS_SECRET_ACCESS_KEY: this.grants.get(accessKeyId)!.secretAccessKey,
    };
  }

  /**
   * The environment EKS gives a pod with IRSA (the role and its projected token's file, no key at
   * all), with S3 and STS pointed at this fake: the SDK exchanges the token for temporary credentials.
   */
  webIdentityEnv(roleArn: string, tokenFile: string): Record<string, string> {
    return {
      ...this.sdkSettings(),
      AWS_ENDPOINT_URL_STS: this.endpoint,
      AWS_ROLE_ARN: roleArn,
      AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
    };
  }

  /**
   * The environment EKS Pod Identity gives a pod (its agent's URL and the token file, no key), with
   * the agent's endpoint served by this fake on loopback, which the SDK allows over plain HTTP.
   */
  podIdentityEnv(tokenFile: string): Record<string, string> {
    return {
      ...this.sdkSettings(),
      AWS_CONTAINER_CREDENTIALS_FULL_URI: `${this.endpoint}${POD_IDENTITY_PATH}`,
      AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: tokenFile,
    };
  }

  private sdkSettings(): Record<string, string> {
    return {
      AWS_ENDPOINT_URL_S3: this.endpoint,
      AWS_REGION: REGION,
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    };
  }

  injectFaults(match: S3FaultMatch, ...faults: S3Fault[]): void {
    for (const fault of faults) this.faults.push({ match, fault });
  }

  object(bucket: string, key: string): Buffer | undefined {
    return this.objects.get(`${bucket}/${key}`)?.data;
  }

  /** Keys of a bucket under a prefix, in order. */
  keys(bucket: string, prefix = ''): string[] {
    return [...this.objects.keys()]
      .filter((k) => k.startsWith(`${bucket}/${prefix}`))
      .map((k) => k.slice(bucket.length + 1))
      .sort();
  }

  /** Puts or replaces an object behind the store's back. */
  setObject(bucket: string, key: string, data: Buffer): void {
    this.objects.set(`${bucket}/${key}`, { data, lastModified: this.now(), etag: md5(data) });
  }

  removeObject(bucket: string, key: string): void {
    this.objects.delete(`${bucket}/${key}`);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const [, bucket = '', ...rest] = url.pathname.split('/');
    const key = rest.map(decodeURIComponent).join('/');
    const list =
      req.method === 'GET' && key === '' && url.searchParams.get('list-type') === '2'
        ? (url.searchParams.get('prefix') ?? '')
        : undefined;
    const body = await readAll(req);
    const record: S3Request = {
      method: req.method ?? 'GET',
      bucket,
      key,
      ...(list !== undefined && { list }),
      accessKeyId: undefined,
      status: 0,
      requestBytes: body.length,
      responseBytes: 0,
    };
    this.requests.push(record);
    let loseAnswer = false;
    const answer = (status: number, payload: string | Buffer = '', headers: Record<string, string> = {}) => {
      const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
      record.status = status;
      if (loseAnswer) {
        record.status = -3; // served, but the client never hears of it
        req.socket.destroy();
        return;
      }
      record.responseBytes = req.method === 'HEAD' ? 0 : bytes.length;
      res.writeHead(status, {
        'x-amz-request-id': randomUUID(),
        'content-length': String(bytes.length),
        ...(bytes.length && typeof payload === 'string' && { 'content-type': 'application/xml' }),
        ...headers,
      });
      res.end(req.method === 'HEAD' ? undefined : bytes);
    };
    const fail = (status: number, code: string, message: string, extra = '') =>
      answer(
        status,
        req.method === 'HEAD'
          ? ''
          : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xml(message)}</Message>${extra}<RequestId>${randomUUID()}</RequestId></Error>`,
      );

    if (req.method === 'POST' && url.pathname === '/')
      return this.assumeRoleWithWebIdentity(new URLSearchParams(body.toString('utf8')), answer, fail);
    if (req.method === 'GET' && url.pathname === POD_IDENTITY_PATH)
      return this.podIdentityCredentials(String(req.headers.authorization ?? ''), answer);

    const faultAt = this.faults.findIndex(
      ({ match }) =>
        (!match.method || match.method === req.method) &&
        (match.key === undefined || (list ?? key).startsWith(match.key)),
    );
    if (faultAt >= 0) {
      const [{ fault }] = this.faults.splice(faultAt, 1);
      if ('reset' in fault) {
        record.status = -1;
        req.socket.destroy();
        return;
      }
      if ('hang' in fault) {
        record.status = -2;
        this.hung.add(req.socket); // taken, never answered: the client's timeout must end the wait
        return;
      }
      if ('loseAnswer' in fault) loseAnswer = true;
      else if (fault.status === 503) return fail(503, 'SlowDown', 'Please reduce your request rate.');
      else return fail(500, 'InternalError', 'We encountered an internal error. Please try again.');
    }

    const auth = this.authenticate(req, url, body);
    if ('error' in auth) return fail(auth.status, auth.error, auth.message);
    record.accessKeyId = auth.accessKeyId;
    if (!this.buckets.has(bucket))
      return fail(
        404,
        'NoSuchBucket',
        'The specified bucket does not exist',
        `<BucketName>${xml(bucket)}</BucketName>`,
      );
    const reached = `${bucket}/${list ?? key}`;
    if (!auth.grant.prefixes.some((prefix) => reached.startsWith(prefix)))
      return fail(403, 'AccessDenied', 'Access Denied');

    const id = `${bucket}/${key}`;
    const stored = this.objects.get(id);
    switch (req.method) {
      case 'PUT': {
        if (!key) return fail(400, 'InvalidRequest', 'a key is required');
        if (req.headers['if-none-match'] === '*' && stored) {
          return fail(
            412,
            'PreconditionFailed',
            'At least one of the pre-conditions you specified did not hold',
            '<Condition>If-None-Match</Condition>',
          );
        }
        const claimed = req.headers['x-amz-checksum-sha256'];
        if (typeof claimed === 'string' && claimed !== sha256Base64(body)) {
          return fail(400, 'BadDigest', 'The SHA256 you specified did not match the calculated checksum.');
        }
        const data = this.alterPut ? this.alterPut(key, Buffer.from(body)) : body;
        const object = { data, lastModified: this.now(), etag: md5(data) };
        this.objects.set(id, object);
        return answer(200, '', {
          etag: `"${object.etag}"`,
          ...(typeof claimed === 'string' && { 'x-amz-checksum-sha256': sha256Base64(data) }),
        });
      }
      case 'GET':
      case 'HEAD': {
        if (list !== undefined) return answer(200, this.listPage(bucket, list, url));
        if (!stored) return fail(404, 'NoSuchKey', 'The specified key does not exist.', `<Key>${xml(key)}</Key>`);
        const headers: Record<string, string> = {
          etag: `"${stored.etag}"`,
          'last-modified': stored.lastModified.toUTCString(),
          'content-type': 'application/octet-stream',
        };
        if (req.headers['x-amz-checksum-mode'] === 'ENABLED')
          headers['x-amz-checksum-sha256'] = sha256Base64(stored.data);
        const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''));
        if (!range) return answer(200, stored.data, headers);
        const start = Number(range[1]);
        const end = Math.min(range[2] ? Number(range[2]) : stored.data.length - 1, stored.data.length - 1);
        if (start >= stored.data.length) return fail(416, 'InvalidRange', 'The requested range is not satisfiable');
        return answer(206, stored.data.subarray(start, end + 1), {
          ...headers,
          'content-range': `bytes ${start}-${end}/${stored.data.length}`,
        });
      }
      case 'DELETE':
        this.objects.delete(id);
        return answer(204);
      default:
        return fail(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
    }
  }

  /** STS (the query protocol, unsigned as the SDK sends it): a known token for its role gives temporary credentials, valid as its grant says. */
  private assumeRoleWithWebIdentity(
    form: URLSearchParams,
    answer: (status: number, payload: string) => void,
    fail: (status: number, code: string, message: string) => void,
  ): void {
    const identity = this.webIdentities.get(form.get('WebIdentityToken') ?? '');
    if (form.get('Action') !== 'AssumeRoleWithWebIdentity')
      return fail(400, 'InvalidAction', 'only AssumeRoleWithWebIdentity is served here');
    if (!identity || identity.roleArn !== form.get('RoleArn'))
      return fail(403, 'AccessDenied', 'Not authorized to perform sts:AssumeRoleWithWebIdentity');
    const { accessKeyId, sessionToken, expiration } = this.issueTemporary(identity.grant);
    answer(
      200,
      `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>${accessKeyId}</AccessKeyId><SecretAccessKey>${xml(identity.grant.secretAccessKey)}</SecretAccessKey><SessionToken>${sessionToken}</SessionToken><Expiration>${expiration}</Expiration></Credentials><AssumedRoleUser><Arn>${xml(identity.roleArn)}/captf</Arn><AssumedRoleId>AROA:captf</AssumedRoleId></AssumedRoleUser></AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>`,
    );
  }

  /** EKS Pod Identity's agent (the container credentials endpoint): the pod's token in Authorization gives temporary credentials as JSON. */
  private podIdentityCredentials(token: string, answer: (status: number, payload: string) => void): void {
    const grant = this.podIdentities.get(token);
    if (!grant) return answer(403, JSON.stringify({ message: 'the pod identity token is not valid' }));
    const { accessKeyId, sessionToken, expiration } = this.issueTemporary(grant);
    answer(
      200,
      JSON.stringify({
        AccessKeyId: accessKeyId,
        SecretAccessKey: grant.secretAccessKey,
        Token: sessionToken,
        AccountId: '123456789012',
        Expiration: expiration,
      }),
    );
  }

  /** Temporary credentials (`ASIA…`, valid for an hour) for a grant: every request must carry their session token. */
  private issueTemporary(grant: S3Grant): { accessKeyId: string; sessionToken: string; expiration: string } {
    const accessKeyId = `ASIA${randomUUID().replace(/-/g, '').slice(0, 16).toUpperCase()}`;
    const sessionToken = `session-${randomUUID()}`;
    this.grants.set(accessKeyId, { ...grant, sessionToken });
    return { accessKeyId, sessionToken, expiration: new Date(this.now().getTime() + 3600_000).toISOString() };
  }

  private listPage(bucket: string, prefix: string, url: URL): string {
    const maxKeys = Math.min(Number(url.searchParams.get('max-keys') ?? 1000) || 1000, this.pageSize);
    const after = url.searchParams.get('continuation-token');
    if (this.endlessLists) {
      return `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${xml(bucket)}</Name><Prefix>${xml(prefix)}</Prefix><KeyCount>0</KeyCount><MaxKeys>${maxKeys}</MaxKeys><IsTruncated>true</IsTruncated><NextContinuationToken>${randomUUID()}</NextContinuationToken></ListBucketResult>`;
    }
    const all = this.keys(bucket, prefix);
    const from = after ? all.findIndex((k) => k > Buffer.from(after, 'base64url').toString('utf8')) : 0;
    const page = from < 0 ? [] : all.slice(from, from + maxKeys);
    const truncated = from >= 0 && from + maxKeys < all.length;
    const contents = page
      .map((k) => {
        const object = this.objects.get(`${bucket}/${k}`)!;
        return `<Contents><Key>${xml(k)}</Key><LastModified>${object.lastModified.toISOString()}</LastModified><ETag>"${object.etag}"</ETag><Size>${object.data.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`;
      })
      .join('');
    const next = truncated
      ? `<NextContinuationToken>${Buffer.from(page.at(-1)!).toString('base64url')}</NextContinuationToken>`
      : '';
    return `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${xml(bucket)}</Name><Prefix>${xml(prefix)}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${maxKeys}</MaxKeys><IsTruncated>${truncated}</IsTruncated>${after ? `<ContinuationToken>${xml(after)}</ContinuationToken>` : ''}${next}${contents}</ListBucketResult>`;
  }

  /** AWS Signature Version 4, recomputed from the request as it arrived and the key's secret. */
  private authenticate(
    req: IncomingMessage,
    url: URL,
    body: Buffer,
  ): { accessKeyId: string; grant: S3Grant } | { status: number; error: string; message: string } {
    const header = String(req.headers.authorization ?? '');
    const parsed =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
        header,
      );
    if (!parsed)
      return {
        status: 403,
        error: 'AccessDenied',
        message: 'an AWS Signature Version 4 Authorization header is required',
      };
    const [, accessKeyId, day, region, signedHeaders, signature] = parsed as unknown as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const grant = this.grants.get(accessKeyId);
    if (!grant)
      return {
        status: 403,
        error: 'InvalidAccessKeyId',
        message: 'The AWS Access Key Id you provided does not exist in our records.',
      };
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const payloadHash = String(req.headers['x-amz-content-sha256'] ?? '');
    if (!amzDate.startsWith(day) || region !== REGION || !payloadHash)
      return {
        status: 403,
        error: 'AccessDenied',
        message: 'x-amz-date, the region and x-amz-content-sha256 must match the credential scope',
      };
    if (/^[0-9a-f]{64}$/.test(payloadHash) && payloadHash !== createHash('sha256').update(body).digest('hex')) {
      return {
        status: 400,
        error: 'XAmzContentSHA256Mismatch',
        message: "The provided 'x-amz-content-sha256' header does not match what was computed.",
      };
    }
    const names = signedHeaders.split(';');
    if (!names.includes('host') || !names.includes('x-amz-date'))
      return { status: 403, error: 'AccessDenied', message: 'host and x-amz-date must be signed' };
    if (
      grant.sessionToken !== undefined &&
      (req.headers['x-amz-security-token'] !== grant.sessionToken || !names.includes('x-amz-security-token'))
    ) {
      return { status: 403, error: 'InvalidToken', message: 'The provided token is malformed or otherwise invalid.' };
    }
    const canonicalHeaders = names
      .map(
        (name) =>
          `${name}:${String(req.headers[name] ?? '')
            .trim()
            .replace(/\s+/g, ' ')}\n`,
      )
      .join('');
    const canonicalQuery = [...url.searchParams.entries()]
      .map(([k, v]) => [rfc3986(k), rfc3986(v)])
      .sort(([a, x], [b, y]) => (a! < b! ? -1 : a! > b! ? 1 : x! < y! ? -1 : x! > y! ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`)
      .join('&');
    const canonicalRequest = [
      req.method,
      url.pathname,
      canonicalQuery,
      canonicalHeaders,
      signedHeaders,
      payloadHash,
    ].join('\n');
    const scope = `${day}/${region}/s3/aws4_request`;
    const stringToSign = [
      'AWS4-HMAC-SHA256',
      amzDate,
      scope,
      createHash('sha256').update(canonicalRequest).digest('hex'),
    ].join('\n');
    const signingKey = ['s3', 'aws4_request'].reduce(
      (k, part) => hmac(k, part),
      hmac(hmac(`AWS4${grant.secretAccessKey}`, day), region),
    );
    if (hmac(signingKey, stringToSign).toString('hex') !== signature) {
      return {
        status: 403,
        error: 'SignatureDoesNotMatch',
        message: 'The request signature we calculated does not match the signature you provided.',
      };
    }
    return { accessKeyId, grant };
  }
}

/** Where the fake serves EKS Pod Identity's agent (the real one: http://169.254.170.23/v1/credentials). */
const POD_IDENTITY_PATH = '/v1/credentials';

const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
const sha256Base64 = (data: Buffer) => createHash('sha256').update(data).digest('base64');
const rfc3986 = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const xml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req as AsyncIterable<Buffer>) parts.push(part);
  return Buffer.concat(parts);
}
