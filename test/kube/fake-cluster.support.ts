// Shared set-up of the kube tests: a fake API server, a service account dir that points at it,
// and a client whose retries do not really sleep. Everything is torn down with the test.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Result, RESULT_API_VERSION } from '../../src/schemas/result.ts';
import { noCounts } from '../../src/plan/actions.ts';
import { KubeClient, type KubeClientOptions } from '../../src/kube/client.ts';
import { loadInClusterConfig, type KubeConfig } from '../../src/kube/config.ts';
import { FakeApiServer, type FakeApiServerOptions } from '../support/fake-apiserver.ts';

export const NAMESPACE = 'captf-prod';

export interface FakeCluster {
  fake: FakeApiServer;
  client: KubeClient;
  config: KubeConfig;
  serviceAccountDir: string;
  /** Delays the client asked to sleep, in order. */
  sleeps: number[];
  /** A client on the same config with other options (closed with the cluster). */
  newClient(options?: KubeClientOptions): KubeClient;
}

/** `t` tears the cluster down: a test's context, or what a file's `after` hook runs (one cluster for a file's tests). */
export async function startFakeCluster(
  t: { after(fn: () => unknown): void },
  options: FakeApiServerOptions & { client?: KubeClientOptions } = {},
): Promise<FakeCluster> {
  const fake = await FakeApiServer.start({
    serviceAccount: { namespace: NAMESPACE, name: 'captf-runner-prod' },
    ...options,
  });
  const dir = await mkdtemp(join(tmpdir(), 'captf-kube-test-'));
  const clients: KubeClient[] = [];
  t.after(async () => {
    for (const client of clients) client.close();
    await fake.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const serviceAccountDir = await fake.writeServiceAccountDir(join(dir, 'serviceaccount'));
  const config = loadInClusterConfig({ serviceAccountDir, env: fake.env });
  const sleeps: number[] = [];
  const newClient = (clientOptions: KubeClientOptions = {}) => {
    const client = new KubeClient(config, {
      sleep: async (ms) => void sleeps.push(ms),
      random: () => 0.5,
      ...clientOptions,
    });
    clients.push(client);
    return client;
  };
  return { fake, client: newClient(options.client), config, serviceAccountDir, sleeps, newClient };
}

const HASH_A = 'a'.repeat(64);

/** A blocked apply, as the core writes it; parsed, so a fixture that breaks the schema fails here. */
/** The lineage of the state blockedResult's run planned against. */
export const BLOCKED_LINEAGE = '8d9f6c2e-3b1a-4c5d-9e7f-0a1b2c3d4e5f';

export function blockedResult(overrides: Partial<Result> = {}): Result {
  return Result.parse({
    apiVersion: RESULT_API_VERSION,
    op: 'apply',
    outcome: 'blocked',
    reason: 'DestructivePlanBlocked',
    message: 'the plan deletes or replaces 1 resource; nothing was applied',
    exitCode: 3,
    runnerVersion: '0.1.0',
    object: { kind: 'cluster', name: 'prod', namespace: NAMESPACE },
    inputsHash: HASH_A,
    approvalHash: HASH_A,
    applied: false,
    mayHaveChanged: false,
    state: { serialBefore: 3, serialAfter: 3, lineage: BLOCKED_LINEAGE },
    plan: {
      gated: true,
      formatVersion: '1.2',
      errored: false,
      complete: true,
      applyable: true,
      hasResourceChanges: true,
      hasOutputChanges: false,
      destructive: [{ address: 'terraform_data.cluster', action: 'replace', actions: ['delete', 'create'] }],
      destructiveTotal: 1,
      counts: { ...noCounts(), replace: 1 },
      outputChanges: { create: 0, update: 0, delete: 0 },
      drift: [],
      driftTotal: 0,
      changes: [{ address: 'terraform_data.cluster', actions: ['delete', 'create'] }],
      changesTotal: 1,
      failClosed: [],
      sensitiveVariables: [],
      actions: [],
      actionsTotal: 0,
    },
    outputs: {
      endpoint: { sensitive: false, known: true, value: 'https://prod.example.com' },
      kubeconfig: { sensitive: true, known: true },
    },
    steps: [{ name: 'plan', status: 'ok', startedAt: '2025-01-01T00:00:00Z', durationMs: 1200, exitCode: 2 }],
    annotations: { 'captf.io/destructive-plan-blocked': HASH_A },
    warnings: [],
    error: { kind: 'blocked', reason: 'DestructivePlanBlocked', message: 'approval needed' },
    startedAt: '2025-01-01T00:00:00Z',
    finishedAt: '2025-01-01T00:00:05Z',
    ...overrides,
  });
}
