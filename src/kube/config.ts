// In-cluster configuration: what a pod has to reach the API server as its service account.
// Read once at start-up; the token itself is re-read by the client on every request because the
// kubelet rotates projected tokens while the pod runs.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { usageError } from '../errors.ts';

export interface KubeConfig {
  /** Base URL of the API server, e.g. `https://10.96.0.1:443` or `https://[fd00::1]:443`. */
  server: string;
  /** Host as `https.request` wants it: an IPv6 literal without brackets. */
  host: string;
  port: number;
  /** PEM bundle the API server's certificate must chain to. */
  ca: Buffer;
  tokenFile: string;
  /** The pod's namespace from the service account dir, when the file is there. */
  namespace: string | undefined;
}

export interface InClusterConfigSource {
  serviceAccountDir: string;
  env: Record<string, string | undefined>;
}

/** `https://host:port`, with IPv6 literals bracketed as URLs require. */
export function apiServerUrl(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return `https://${bare.includes(':') ? `[${bare}]` : bare}:${port}`;
}

/**
 * Reads the service account dir and `KUBERNETES_SERVICE_HOST`/`_PORT`. Called only when a Job
 * identity is given: anything missing then is a usage error (exit 2), never a fall-back to local mode.
 */
export function loadInClusterConfig({ serviceAccountDir, env }: InClusterConfigSource): KubeConfig {
  const invalid = (what: string) =>
    usageError(
      'KubeConfigInvalid',
      `--job-name and --job-uid were given, so the runner must report to the Kubernetes API, but ${what}. ` +
        'Run it in a pod with a service account token mounted (automountServiceAccountToken or a projected token volume), ' +
        'or drop --job-name/--job-uid to run locally.',
      { serviceAccountDir },
    );

  const hostValue = env.KUBERNETES_SERVICE_HOST?.trim();
  const portValue = env.KUBERNETES_SERVICE_PORT?.trim();
  if (!hostValue) throw invalid('KUBERNETES_SERVICE_HOST is not set');
  if (!portValue) throw invalid('KUBERNETES_SERVICE_PORT is not set');
  const port = Number(portValue);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw invalid(`KUBERNETES_SERVICE_PORT=${JSON.stringify(portValue)} is not a port number`);
  }

  const tokenFile = join(serviceAccountDir, 'token');
  const token = readOptional(tokenFile);
  if (token === undefined) throw invalid(`there is no readable token at ${tokenFile}`);
  if (token.toString('utf8').trim() === '') throw invalid(`the token at ${tokenFile} is empty`);

  const caFile = join(serviceAccountDir, 'ca.crt');
  const ca = readOptional(caFile);
  if (ca === undefined || !ca.includes('-----BEGIN CERTIFICATE-----')) {
    throw invalid(`there is no PEM CA certificate at ${caFile}`);
  }

  const namespace = readOptional(join(serviceAccountDir, 'namespace'))?.toString('utf8').trim() || undefined;
  const host = hostValue.replace(/^\[(.*)\]$/, '$1');
  return { server: apiServerUrl(host, port), host, port, ca, tokenFile, namespace };
}

function readOptional(file: string): Buffer | undefined {
  try {
    if (!statSync(file).isFile()) return undefined;
    return readFileSync(file);
  } catch {
    return undefined;
  }
}
