// In-cluster mode end to end: the runner (real terraform) against the loopback fake API server.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FakeApiServer } from '../support/fake-apiserver.ts';
import { modules } from '../support/tf-modules.ts';
import { explain, scenario } from '../support/runner.ts';

const NS = 'team-a';
const CANARY = 'CANARY-incluster-secret-77';

describe('in-cluster mode', () => {
  let api: FakeApiServer;
  before(async () => {
    api = await FakeApiServer.start({ serviceAccount: { namespace: NS, name: 'captf-runner' } });
  });
  after(() => api.stop());

  const decode = (secret: object | undefined, key: string) =>
    Buffer.from((secret as { data: Record<string, string> }).data[key]!, 'base64').toString('utf8');

  it('a blocked apply annotates its Job and writes the result Secret; backups go to Secrets', async (t) => {
    const s = await scenario(t, modules.base, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const first = await api.runAsJob(NS, 'apply-1', s.dir);
    const applied = await s.run('apply', first.args, first.env);
    assert.equal(applied.exitCode, 0, explain(applied));
    const resultSecret = api.secret(NS, api.job(NS, 'apply-1')!.metadata.annotations!['captf.io/result-secret']!);
    assert.ok(resultSecret, 'the result Secret exists');
    assert.equal(resultSecret!.metadata.ownerReferences?.[0]?.name, 'apply-1');
    const full = JSON.parse(decode(resultSecret, 'result.json'));
    assert.equal(full.outcome, 'succeeded');
    assert.equal(full.outputs.admin_token.value, CANARY, 'sensitive values go to the result Secret, and only there');
    assert.ok(!applied.allBytes.includes(CANARY));

    await s.useModule(modules.replace);
    const second = await api.runAsJob(NS, 'apply-2', s.dir);
    const blocked = await s.run('apply', second.args, second.env);
    assert.equal(blocked.exitCode, 3, explain(blocked));
    const annotations = api.job(NS, 'apply-2')!.metadata.annotations!;
    assert.equal(annotations['captf.io/outcome'], 'blocked');
    assert.equal(annotations['captf.io/destructive-plan-blocked'], blocked.result!.approvalHash);
    assert.ok(annotations['captf.io/result-sha256']);

    const third = await api.runAsJob(NS, 'apply-3', s.dir);
    const approved = await s.run('apply', [...third.args, '--approved-hash', blocked.result!.approvalHash!], third.env);
    assert.equal(approved.exitCode, 0, explain(approved));
    assert.match(approved.result!.backup!.location, /^secret:team-a\/captf-backup-tc\.team-a\.demo/);
    const backupSecrets = api
      .secrets(NS)
      .filter((secret) => secret.metadata.name.startsWith('captf-backup-tc.team-a.demo'));
    assert.ok(backupSecrets.length >= 2, 'chunks and a manifest');
    assert.ok(backupSecrets.every((secret) => secret.immutable === true));
  });

  it('the result Secret and the Job hold no secret but the sensitive outputs: a non-sensitive output and a message that show an up-front secret are masked', async (t) => {
    const UPFRONT = 'CANARY-upfront-in-cluster-\u2028-91';
    const s = await scenario(
      t,
      {
        'main.tf': `variable "db_password" { type = string }
resource "terraform_data" "db" { input = var.db_password }
output "echoed" { value = terraform_data.db.output }
output "kept" {
  value     = "\${var.db_password}-kept"
  sensitive = true
}
`,
      },
      { 'sensitive.tfvars.json': { db_password: UPFRONT } },
    );
    const job = await api.runAsJob(NS, 'apply-masked', s.dir);
    const applied = await s.run('apply', job.args, job.env);
    assert.equal(applied.exitCode, 0, explain(applied));
    const annotations = api.job(NS, 'apply-masked')!.metadata.annotations!;
    const full = JSON.parse(decode(api.secret(NS, annotations['captf.io/result-secret']!), 'result.json'));
    assert.equal(
      full.outputs.kept.value,
      `${UPFRONT}-kept`,
      "a sensitive output's value is the result Secret's to hold",
    );
    assert.equal(
      full.outputs.echoed.value,
      '(sensitive value)',
      'a non-sensitive output that shows a secret is masked there too',
    );
    const written =
      JSON.stringify({ ...full, outputs: { ...full.outputs, kept: undefined } }) +
      JSON.stringify(api.job(NS, 'apply-masked'));
    assert.ok(!written.includes('CANARY-upfront'), written);
  });

  it('a plan artifact in Secrets is applied by its reference, then deleted; one gone stale is refused and deleted too', async (t) => {
    const s = await scenario(t, modules.base, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const planJob = await api.runAsJob(NS, 'plan-1', s.dir);
    const planned = await s.run('plan', planJob.args, planJob.env);
    assert.equal(planned.exitCode, 0, explain(planned));
    // The reference the result gives, passed back as it is.
    const { ref } = planned.result!.planArtifact!;
    assert.equal(
      ref,
      `secret:${NS}/${planned.result!.planArtifact!.location.split('/').at(-1)}/${planned.result!.planArtifact!.object}`,
    );
    const applyJob = await api.runAsJob(NS, 'apply-p', s.dir);
    const applied = await s.run(
      'apply',
      [...applyJob.args, '--plan-artifact', ref, '--approved-plan-hash', planned.result!.planHash!],
      applyJob.env,
    );
    assert.equal(applied.exitCode, 0, explain(applied));
    assert.equal(applied.result!.planHash, planned.result!.planHash);
    assert.equal((await s.readState()).resources.length > 0, true);
    const spent = api
      .secrets(NS)
      .filter((secret) => secret.metadata.annotations?.['captf.io/object'] === planned.result!.planArtifact!.object);
    assert.deepEqual(spent, [], 'the applied plan artifact no longer takes etcd space');

    const planAgain = await api.runAsJob(NS, 'plan-2', s.dir);
    const second = await s.run(
      'plan',
      [...planAgain.args, '--image', 'registry.example/captf-module:1.0.1'],
      planAgain.env,
    );
    assert.equal(second.exitCode, 0, explain(second));
    const waiting = () =>
      api
        .secrets(NS)
        .filter((secret) => secret.metadata.annotations?.['captf.io/object'] === second.result!.planArtifact!.object);
    assert.ok(waiting().length >= 2, 'chunks and a manifest');
    // Something else applies in between: a new image with no resource change records a new inputs hash.
    const betweenJob = await api.runAsJob(NS, 'apply-between', s.dir);
    const between = await s.run(
      'apply',
      [...betweenJob.args, '--image', 'registry.example/captf-module:1.0.2'],
      betweenJob.env,
    );
    assert.equal(between.exitCode, 0, explain(between));
    const staleJob = await api.runAsJob(NS, 'apply-stale', s.dir);
    const stale = await s.run(
      'apply',
      [
        ...staleJob.args,
        '--image',
        'registry.example/captf-module:1.0.1',
        '--plan-artifact',
        `secret:${second.result!.planArtifact!.location.split('/').at(-1)}/${second.result!.planArtifact!.object}`,
        '--approved-plan-hash',
        second.result!.planHash!,
      ],
      staleJob.env,
    );
    assert.equal(stale.exitCode, 5, explain(stale));
    assert.equal(stale.result!.error!.reason, 'PlanStale');
    assert.deepEqual(waiting(), [], 'a stale plan can never apply again: its artifact no longer takes etcd space');
  });

  it('a valid 240-character object name: backups and plan artifacts go to Secrets whose names are shortened with a digest, and read back', async (t) => {
    const object = `cluster-${'x'.repeat(232)}`;
    assert.equal(object.length, 240);
    const s = await scenario(t, modules.base, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const identity = async (job: string) => {
      const { args, env } = await api.runAsJob(NS, job, s.dir);
      return { args: [...args.slice(0, -1), object], env }; // --object is the last pair
    };
    const first = await identity('long-1');
    assert.equal((await s.run('apply', first.args, first.env)).exitCode, 0);
    await s.setInputs({ 'terraform.tfvars.json': { admin_token: `${CANARY}-2` } });
    const second = await identity('long-2');
    const applied = await s.run('apply', second.args, second.env);
    assert.equal(applied.exitCode, 0, explain(applied));
    const backup = applied.result!.backup!;
    const prefix = backup.location.split('/').at(-1)!;
    assert.ok(prefix.length <= 253 && /^captf-backup-tc\.team-a\.cluster-x+-[0-9a-f]{10}$/.test(prefix), prefix);
    assert.ok(
      api.secrets(NS).some((secret) => secret.metadata.name.startsWith(prefix.slice(0, 200))),
      'the backup is in Secrets',
    );

    const planJob = await identity('long-3');
    const planned = await s.run('plan', planJob.args, planJob.env);
    assert.equal(planned.exitCode, 0, explain(planned));
    const restoreJob = await identity('long-4');
    // The backup's ref as the result gives it (what captf.io/restore-state names), passed back as it is.
    const restored = await s.run('restore', [...restoreJob.args, '--backup', backup.ref], restoreJob.env);
    assert.equal(restored.exitCode, 0, explain(restored));
    assert.equal(restored.result!.reason, 'RestoreSucceeded');
  });

  it('a Job identity without a usable token is an error, never a silent local run', async (t) => {
    const s = await scenario(t, modules.base);
    const run = await s.run(
      'apply',
      ['--job-name', 'j', '--job-uid', 'u', '--service-account-dir', join(s.dir, 'missing-sa'), '--namespace', NS],
      api.env,
    );
    assert.equal(run.exitCode, 2, explain(run));
    assert.equal(run.result!.outcome, 'invalid');
    assert.equal(run.result!.reason, 'KubeConfigInvalid');
  });

  it('an API that refuses (403) is reported by name and does not change the outcome', async (t) => {
    const s = await scenario(t, modules.base, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const job = await api.runAsJob(NS, 'apply-403', s.dir);
    api.rbac = [{ verbs: ['get', 'list', 'create', 'delete'], resources: ['secrets'] }];
    t.after(() => {
      api.rbac = undefined;
    });
    const run = await s.run('apply', job.args, job.env);
    assert.equal(run.exitCode, 0, explain(run));
    assert.match(run.stderr, /patch.*jobs/i);
    assert.equal(api.job(NS, 'apply-403')!.metadata.annotations?.['captf.io/outcome'], undefined);
    // Recorded in the result too, where the controller reads it: the termination message.
    assert.equal(run.result!.outcome, 'succeeded');
    assert.ok(
      run.result!.warnings.some((w) => /could not annotate the Job/.test(w)),
      JSON.stringify(run.result!.warnings),
    );
    const termination = JSON.parse(await readFile(s.termination, 'utf8')) as {
      outcome: string;
      exitCode: number;
      warnings?: string[];
    };
    assert.equal(termination.exitCode, 0);
    assert.ok(
      termination.warnings?.some((w) => /could not annotate the Job/.test(w)),
      JSON.stringify(termination),
    );
  });
});
