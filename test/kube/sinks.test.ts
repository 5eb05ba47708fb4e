import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { Result, type OutputValue } from '../../src/schemas/result.ts';
import { RunnerError } from '../../src/errors.ts';
import { KubeReason } from '../../src/kube/api-errors.ts';
import { isDnsSubdomain, labelValueFor } from '../../src/util/kube-names.ts';
import {
  annotateJob,
  CUT_KEY,
  MAX_ANNOTATION_VALUE_LENGTH,
  readBlockedResults,
  RESULT_BYTES_LIMIT,
  RESULT_KEY,
  resultSecretName,
  writeResultSecret,
  type JobIdentity,
} from '../../src/kube/sinks.ts';
import { blockedResult, NAMESPACE, startFakeCluster, type FakeCluster } from './fake-cluster.support.ts';

const decode = (value: string) => Buffer.from(value, 'base64');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const FULL_OUTPUTS: Record<string, OutputValue> = {
  endpoint: { sensitive: false, known: true, value: 'https://prod.example.com' },
  kubeconfig: { sensitive: true, known: true, value: 'CANARY-kubeconfig-secret' },
};

function jobOf(h: FakeCluster, name = 'captf-apply-prod-7f3c2'): JobIdentity {
  const job = h.fake.addJob(NAMESPACE, name, { 'captf.io/after-interrupted-apply': 'true' });
  return { namespace: NAMESPACE, jobName: name, jobUid: job.metadata.uid };
}

describe('result Secret and Job annotations', () => {
  test('a blocked apply writes its result Secret and annotates its Job', async (t) => {
    const h = await startFakeCluster(t);
    const job = jobOf(h);
    const result = blockedResult();

    const written = await writeResultSecret(h.client, job, result, FULL_OUTPUTS);
    await annotateJob(h.client, job, result, written);

    const secret = h.fake.secret(NAMESPACE, 'captf-apply-prod-7f3c2-result');
    assert.ok(secret, 'the result Secret exists');
    assert.equal(written.name, 'captf-apply-prod-7f3c2-result');
    assert.equal(secret.immutable, true);
    assert.deepEqual(secret.metadata.ownerReferences, [
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: job.jobName,
        uid: job.jobUid,
        controller: false,
        blockOwnerDeletion: false,
      },
    ]);
    assert.deepEqual(secret.metadata.labels, {
      'app.kubernetes.io/managed-by': 'captf-runner',
      'captf.io/artifact-kind': 'result',
      'captf.io/job-name': job.jobName,
      'captf.io/job-uid': job.jobUid,
      'captf.io/op': 'apply',
      'captf.io/outcome': 'blocked',
      'captf.io/object-kind': 'cluster',
      'captf.io/object-name': 'prod',
      // 64 hex digits are one more than a label value holds: a head and a digest; the annotation has it in full.
      'captf.io/approval-hash': labelValueFor(result.approvalHash!),
    });
    assert.equal(secret.metadata.labels['captf.io/approval-hash'].length, 63);
    assert.equal(secret.metadata.annotations['captf.io/approval-hash'], result.approvalHash);
    const bytes = decode(secret.data[RESULT_KEY]);
    const stored = Result.parse(JSON.parse(bytes.toString('utf8')));
    // The only place a sensitive value may appear.
    assert.equal(stored.outputs?.kubeconfig.value, 'CANARY-kubeconfig-secret');
    assert.deepEqual({ ...stored, outputs: result.outputs }, result);
    assert.equal(secret.data[CUT_KEY], undefined);
    assert.equal(written.sha256, sha256(bytes));
    assert.equal(secret.metadata.annotations['captf.io/result-sha256'], sha256(bytes));

    const annotations = h.fake.job(NAMESPACE, job.jobName)?.metadata.annotations;
    assert.deepEqual(annotations, {
      'captf.io/after-interrupted-apply': 'true', // the controller's own annotation stays
      'captf.io/outcome': 'blocked',
      'captf.io/reason': 'DestructivePlanBlocked',
      'captf.io/inputs-hash': result.inputsHash,
      'captf.io/destructive-plan-blocked': result.inputsHash,
      'captf.io/result-secret': 'captf-apply-prod-7f3c2-result',
      'captf.io/result-sha256': sha256(bytes),
    });
    assert.ok(!JSON.stringify(annotations).includes('CANARY'));
  });

  test('annotating never touches another Job of the same name', async (t) => {
    const h = await startFakeCluster(t);
    const job = jobOf(h);
    await assert.rejects(
      annotateJob(h.client, { ...job, jobUid: 'uid-of-a-deleted-job' }, blockedResult(), undefined),
      (error: unknown) => {
        assert.ok(error instanceof RunnerError);
        assert.equal(error.reason, KubeReason.Conflict);
        return true;
      },
    );
    assert.equal(h.fake.job(NAMESPACE, job.jobName)?.metadata.annotations['captf.io/outcome'], undefined);
  });

  test('without a result Secret, stale result-secret annotations are removed; values are capped; bad keys skipped', async (t) => {
    const h = await startFakeCluster(t);
    const job = jobOf(h);
    const first = await writeResultSecret(h.client, job, blockedResult(), undefined);
    await annotateJob(h.client, job, blockedResult(), first);

    const long = 'x'.repeat(5000);
    const result = blockedResult({
      outcome: 'failed',
      reason: 'ApplyFailed',
      annotations: { 'captf.io/note': long, 'not a valid key!': 'v' },
    });
    const annotated = await annotateJob(h.client, job, result, undefined);
    assert.deepEqual(annotated.skipped, ['not a valid key!']);
    const annotations = h.fake.job(NAMESPACE, job.jobName)?.metadata.annotations;
    assert.equal(annotations['captf.io/outcome'], 'failed');
    assert.equal(annotations['captf.io/result-secret'], undefined);
    assert.equal(annotations['captf.io/result-sha256'], undefined);
    assert.equal(annotations['captf.io/note'].length, MAX_ANNOTATION_VALUE_LENGTH);
  });

  test('a retried write of the same result is idempotent; a different result of the same Job replaces it', async (t) => {
    const h = await startFakeCluster(t);
    const job = jobOf(h);
    const first = await writeResultSecret(h.client, job, blockedResult(), FULL_OUTPUTS);
    const again = await writeResultSecret(h.client, job, blockedResult(), FULL_OUTPUTS);
    assert.equal(again.replaced, false);
    assert.equal(again.sha256, first.sha256);

    const interrupted = blockedResult({ outcome: 'interrupted', reason: 'Interrupted', exitCode: 143 });
    const replaced = await writeResultSecret(h.client, job, interrupted, FULL_OUTPUTS);
    assert.equal(replaced.replaced, true);
    assert.notEqual(replaced.sha256, first.sha256);
    const secret = h.fake.secret(NAMESPACE, first.name);
    assert.equal(JSON.parse(decode(secret!.data[RESULT_KEY]).toString()).outcome, 'interrupted');
  });

  test('a Secret of that name that is not a result Secret is left alone', async (t) => {
    const h = await startFakeCluster(t);
    const job = jobOf(h);
    await h.client.createSecret(NAMESPACE, {
      metadata: { name: resultSecretName(job.jobName) },
      data: { mine: 'eA==' },
    });
    await assert.rejects(
      writeResultSecret(h.client, job, blockedResult(), undefined),
      /exists and is not a CAPTF result Secret/,
    );
    assert.deepEqual(h.fake.secret(NAMESPACE, resultSecretName(job.jobName))?.data, { mine: 'eA==' });
  });

  test('a result over the Secret limit is cut, and the Secret says what was cut', async (t) => {
    const h = await startFakeCluster(t);
    const job = jobOf(h);
    const big = (n: number) => 'v'.repeat(n);
    const fullOutputs: Record<string, OutputValue> = {
      ...FULL_OUTPUTS,
      huge: { sensitive: true, known: true, value: big(700_000) },
      large: { sensitive: false, known: true, value: big(400_000) },
      small: { sensitive: false, known: true, value: big(1000) },
    };
    const destructive = Array.from({ length: 30_000 }, (_, i) => ({
      address: `terraform_data.item["${i}"]`,
      action: 'delete' as const,
      actions: ['delete'],
    }));
    const result = blockedResult();
    result.plan = { ...result.plan!, destructive, destructiveTotal: destructive.length };

    const written = await writeResultSecret(h.client, job, result, fullOutputs);

    const secret = h.fake.secret(NAMESPACE, written.name)!;
    const bytes = decode(secret.data[RESULT_KEY]);
    assert.ok(bytes.length <= RESULT_BYTES_LIMIT);
    const stored = Result.parse(JSON.parse(bytes.toString()));
    assert.equal(stored.outputs?.huge.value, undefined);
    assert.equal(stored.outputs?.large.value, undefined);
    assert.equal(stored.outputs?.small.value, big(1000), 'small values are kept');
    assert.equal(stored.outputs?.kubeconfig.value, 'CANARY-kubeconfig-secret');
    assert.ok(stored.plan!.destructive.length < destructive.length);
    assert.ok(stored.plan!.destructive.length > 0);
    assert.equal(stored.plan!.destructiveTotal, 30_000, 'the total still counts every entry');
    // The biggest thing goes first: half of the list saves more than the largest value.
    assert.match(
      stored.warnings.at(-1)!,
      /the result was cut .*: plan\.destructive, outputs\.huge\.value, outputs\.large\.value$/,
    );

    const cut = JSON.parse(decode(secret.data[CUT_KEY]).toString());
    assert.deepEqual(
      cut.cuts.map((c: { path: string }) => c.path),
      ['plan.destructive', 'outputs.huge.value', 'outputs.large.value'],
    );
    assert.ok(cut.originalBytes > RESULT_BYTES_LIMIT);
    assert.deepEqual(written.cuts, cut.cuts);
  });

  test('the result Secret name is derived from the Job name and stays a valid name', () => {
    assert.equal(resultSecretName('job-1'), 'job-1-result');
    const long = `captf-${'a'.repeat(250)}`;
    const name = resultSecretName(long);
    assert.ok(isDnsSubdomain(name), name);
    assert.ok(name.endsWith('-result'));
    assert.equal(resultSecretName(long), name, 'deterministic');
    assert.notEqual(resultSecretName(`${long.slice(0, -1)}b`), name, 'different Jobs, different names');
  });
});

describe('the result Secrets of blocked applies, read back for an approval', () => {
  const HASH = 'a'.repeat(64);
  const OTHER = 'b'.repeat(64);

  test('finds the blocked results of this object for this hash, newest first, and checks each', async (t) => {
    const h = await startFakeCluster(t);
    let clock = Date.parse('2025-03-01T00:00:00Z');
    h.fake.now = () => new Date(clock);
    const write = async (name: string, result: Result) => {
      clock += 60_000;
      await writeResultSecret(h.client, jobOf(h, name), result, undefined);
    };
    await write('blocked-old', blockedResult({ finishedAt: '2025-03-01T00:01:00Z' }));
    await write('blocked-new', blockedResult({ finishedAt: '2025-03-01T00:02:00Z' }));
    await write('other-hash', blockedResult({ approvalHash: OTHER, inputsHash: OTHER }));
    await write('other-object', blockedResult({ object: { kind: 'cluster', name: 'staging', namespace: NAMESPACE } }));
    await write('other-kind', blockedResult({ object: { kind: 'pool', name: 'prod', namespace: NAMESPACE } }));
    await write(
      'succeeded',
      blockedResult({ outcome: 'succeeded', reason: 'ApplySucceeded', exitCode: 0, error: undefined }),
    );

    const { found, problems } = await readBlockedResults(h.client, NAMESPACE, {
      approvalHash: HASH,
      objectKind: 'cluster',
      objectName: 'prod',
    });
    assert.deepEqual(problems, []);
    assert.deepEqual(
      found.map((f) => f.location),
      [`secret:${NAMESPACE}/blocked-new-result`, `secret:${NAMESPACE}/blocked-old-result`],
    );
    assert.equal((found[0]!.document as Result).finishedAt, '2025-03-01T00:02:00Z');
    // Listed by label, metadata only: no Secret of another object or hash is downloaded.
    const gets = h.fake.requests.filter((r) => r.verb === 'get').map((r) => r.name);
    assert.deepEqual(gets.sort(), ['blocked-new-result', 'blocked-old-result']);
  });

  test('a result Secret whose bytes do not match its digest is skipped and named', async (t) => {
    const h = await startFakeCluster(t);
    await writeResultSecret(h.client, jobOf(h, 'blocked-1'), blockedResult(), undefined);
    // Replaced by one with other bytes under the same labels and digest (what module code with the Role could do).
    const secret = h.fake.secret(NAMESPACE, 'blocked-1-result')!;
    await h.client.deleteSecret(NAMESPACE, 'blocked-1-result');
    const { uid: _uid, resourceVersion: _rv, creationTimestamp: _ct, ...metadata } = secret.metadata;
    await h.client.createSecret(NAMESPACE, {
      ...secret,
      apiVersion: 'v1',
      kind: 'Secret',
      metadata,
      data: { [RESULT_KEY]: Buffer.from(JSON.stringify(blockedResult({ plan: undefined }))).toString('base64') },
    });
    const { found, problems } = await readBlockedResults(h.client, NAMESPACE, {
      approvalHash: HASH,
      objectKind: 'cluster',
      objectName: 'prod',
    });
    assert.deepEqual(found, []);
    assert.match(problems[0]!, /blocked-1-result: result\.json does not match its captf\.io\/result-sha256/);
  });

  test('a result Secret not owned by the Job it names is skipped and named, and does not crowd out the real ones', async (t) => {
    const h = await startFakeCluster(t);
    let clock = Date.parse('2025-03-01T00:00:00Z');
    h.fake.now = () => new Date(clock);
    clock += 60_000;
    await writeResultSecret(h.client, jobOf(h, 'blocked-real'), blockedResult(), undefined);
    const real = h.fake.secret(NAMESPACE, 'blocked-real-result')!;
    const { uid: _uid, resourceVersion: _rv, creationTimestamp: _ct, ...metadata } = real.metadata;
    // Newer copies under the same labels and digest: without an owner, owned by another kind, owned by another Job.
    const forge = async (name: string, ownerReferences: unknown[] | undefined) => {
      clock += 60_000;
      await h.client.createSecret(NAMESPACE, {
        ...real,
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { ...metadata, name, ownerReferences: ownerReferences as never },
      });
    };
    const owner = real.metadata.ownerReferences![0]!;
    await forge('forged-1', undefined);
    await forge('forged-2', [{ ...owner, apiVersion: 'v1', kind: 'ConfigMap' }]);
    await forge('forged-3', [{ ...owner, name: 'some-other-job' }]);
    await forge('forged-4', []);
    const { found, problems } = await readBlockedResults(h.client, NAMESPACE, {
      approvalHash: HASH,
      objectKind: 'cluster',
      objectName: 'prod',
    });
    assert.deepEqual(
      found.map((f) => f.location),
      [`secret:${NAMESPACE}/blocked-real-result`],
      'the real one is read although three newer ones were listed',
    );
    assert.equal(problems.length, 1);
    assert.match(
      problems[0]!,
      new RegExp(
        `^secret:${NAMESPACE}/forged-4, secret:${NAMESPACE}/forged-3, secret:${NAMESPACE}/forged-2 and 1 more not owned by the Job they name`,
      ),
    );
    // Skipped on the metadata alone: none of them is downloaded.
    assert.deepEqual(
      h.fake.requests.filter((r) => r.verb === 'get').map((r) => r.name),
      ['blocked-real-result'],
    );
  });

  test('none found: an empty answer, not an error', async (t) => {
    const h = await startFakeCluster(t);
    assert.deepEqual(
      await readBlockedResults(h.client, NAMESPACE, { approvalHash: HASH, objectKind: 'cluster', objectName: 'prod' }),
      { found: [], problems: [] },
    );
  });
});

describe('fitting a result into a Secret: the newer bounded lists', () => {
  test('plan.actions and plan.partial.deferred are cut like plan.destructive, their totals kept', async () => {
    const { fitResult } = await import('../../src/kube/result-fit.ts');
    const result = blockedResult();
    const actions = Array.from({ length: 5000 }, (_, i) => ({
      address: `action.aws_lambda_invoke.a${i}_${'x'.repeat(200)}`,
      type: 'aws_lambda_invoke',
      provider: null,
      trigger: 'invoke',
      triggeringResource: null,
      onFailure: null,
      deferred: false,
      deferredReason: null,
    }));
    const deferred = Array.from({ length: 3000 }, (_, i) => ({
      address: `terraform_data.d${i}_${'y'.repeat(200)}`,
      action: 'create',
      reason: 'resource_config_unknown',
    }));
    result.plan = {
      ...result.plan!,
      actions,
      actionsTotal: 5000,
      partial: { complete: false, deferred, deferredTotal: 3000 },
    };
    const fitted = fitResult(result, 600_000);
    assert.ok(fitted.json.length <= 600_000);
    const stored = Result.parse(JSON.parse(fitted.json.toString()));
    assert.ok(stored.plan!.actions.length < 5000 && stored.plan!.actions.length > 0);
    assert.equal(stored.plan!.actionsTotal, 5000);
    assert.equal(stored.plan!.partial!.deferredTotal, 3000);
    assert.ok(
      fitted.cuts.some((c) => c.path === 'plan.actions'),
      JSON.stringify(fitted.cuts),
    );
    assert.ok(
      fitted.cuts.some((c) => c.path === 'plan.partial.deferred'),
      JSON.stringify(fitted.cuts),
    );
  });
});

describe('fitting a result into a Secret: the lists of what changes', () => {
  test('plan.changes and drift.inputsDiffer are cut like plan.destructive, their totals kept', async () => {
    const { fitResult } = await import('../../src/kube/result-fit.ts');
    const result = blockedResult();
    const changes = Array.from({ length: 4000 }, (_, i) => ({
      address: `terraform_data.c${i}_${'x'.repeat(200)}`,
      actions: ['update'],
    }));
    result.plan = { ...result.plan!, changes, changesTotal: 4000 };
    result.drift = {
      found: true,
      outputsOnly: false,
      resourceDrift: [],
      resourceDriftTotal: 0,
      inputsDiffer: changes,
      inputsDifferTotal: 4000,
      remediationDestructive: false,
    };
    const fitted = fitResult(result, 600_000);
    assert.ok(fitted.json.length <= 600_000);
    const stored = Result.parse(JSON.parse(fitted.json.toString()));
    assert.ok(stored.plan!.changes.length < 4000 && stored.drift!.inputsDiffer.length < 4000);
    assert.equal(stored.plan!.changesTotal, 4000);
    assert.equal(stored.drift!.inputsDifferTotal, 4000);
    assert.ok(
      fitted.cuts.some((c) => c.path === 'plan.changes') && fitted.cuts.some((c) => c.path === 'drift.inputsDiffer'),
      JSON.stringify(fitted.cuts),
    );
  });
});
