// The PostgreSQL store (a real PostgreSQL 15) and the S3 store (the SDK against the loopback S3
// fake, credentials from IRSA's web identity as in an EKS pod), end to end: one CAPTF object's life in each, the built runner and the real terraform
// (local state, --store for the artifacts): an apply blocked, its approved apply, the Manual flow,
// a restore and a destroy, each checked in the store and in the state; a store that is down; a
// reference to anything but the run's own store. And a run without --store loads neither client.
import { freeLoopbackPort } from '../support/server-nets.ts';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { runProcess } from '../support/exec.ts';
import { FakeS3 } from '../support/fake-s3.ts';
import { usePostgres } from '../support/pg.ts';
import { sharedSetup } from '../support/suite-setup.ts';
import { modules, resourceIds, testTerraformEnv } from '../support/tf-modules.ts';
import { explain, RUNNER, scenario, type RunnerRun, type Scenario } from '../support/runner.ts';

const OBJECT = ['--object', 'demo', '--namespace', 'team-a'];
const postgres = usePostgres();
// The S3 store runs as in an EKS pod with IRSA: a role for the object, its token in a file, no key;
// the role's temporary credentials reach the object's own key prefixes only.
const ROLE = 'arn:aws:iam::123456789012:role/captf-tc-demo';
const OWN_PREFIXES = ['captf-e2e/fleet/captf-backup-tc.team-a.demo/', 'captf-e2e/fleet/captf-plan-tc.team-a.demo/'];
let s3: FakeS3;
let tokenDir: string;
before(async () => {
  tokenDir = await mkdtemp(join(tmpdir(), 'captf-irsa-'));
  await writeFile(join(tokenDir, 'token'), 'irsa-token-demo');
  s3 = await FakeS3.start({
    buckets: ['captf-e2e'],
    webIdentities: {
      'irsa-token-demo': { roleArn: ROLE, grant: { secretAccessKey: 'demo-temporary', prefixes: OWN_PREFIXES } },
    },
  });
});
after(async () => {
  await s3?.stop();
  if (tokenDir) await rm(tokenDir, { recursive: true, force: true });
});

interface StoreUnderTest {
  /** The environment that names the store (CAPTF_STORE and what its client reads). */
  env(): Promise<Record<string, string>>;
  /** The same store with credentials for all of it: one store serving several namespaces. */
  sharedEnv(): Promise<Record<string, string>>;
  /** The same store, down. */
  downEnv(): Promise<Record<string, string>>;
  /** The names of the objects the store holds for `prefix` (`captf-plan-tc.team-a.demo`), complete ones. */
  objects(prefix: string): Promise<string[]>;
  locationPattern: RegExp;
  /** Checks, after the object's life, that every request used the object's own credentials and was allowed. */
  usedOwnCredentials(): Promise<void>;
}

const stores: Record<string, () => Promise<StoreUnderTest>> = {
  PostgreSQL: async () => {
    const db = await postgres.newDatabase();
    const url = (connString: string) => {
      const withSchema = new URL(connString);
      withSchema.searchParams.set('schema', 'captf_demo');
      return withSchema.toString();
    };
    return {
      env: async () => ({ CAPTF_STORE: url(db.connString) }),
      sharedEnv: async () => ({ CAPTF_STORE: url(db.connString) }),
      downEnv: async () => ({ CAPTF_STORE: url(db.connString.replace(/:\d+\//, `:${await freeLoopbackPort()}/`)) }),
      async objects(prefix) {
        const client = new pg.Client({ connectionString: db.connString });
        await client.connect();
        try {
          return (
            await client.query('SELECT object FROM captf_demo.captf_objects WHERE store = $1 ORDER BY created_at', [
              prefix,
            ])
          ).rows.map((row) => row.object as string);
        } finally {
          await client.end();
        }
      },
      // The test database's owner: the grants per object are pg-store.e2e.test.ts's.
      usedOwnCredentials: async () => {},
      locationPattern: /^postgres:\/\/127\.0\.0\.1:\d+\/test_\d+\/captf_demo\/captf-(backup|plan)-tc\.team-a\.demo$/,
    };
  },
  S3: async () => ({
    env: async () => ({ CAPTF_STORE: 's3://captf-e2e/fleet', ...s3.webIdentityEnv(ROLE, join(tokenDir, 'token')) }),
    sharedEnv: async () => ({ CAPTF_STORE: 's3://captf-e2e/fleet', ...s3.env() }),
    downEnv: async () => ({
      CAPTF_STORE: 's3://captf-e2e/fleet',
      ...s3.env(),
      AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${await freeLoopbackPort()}`,
    }),
    objects: async (prefix) => [
      ...new Set(
        s3
          .keys('captf-e2e', `fleet/${prefix}/`)
          .filter((k) => k.endsWith('/manifest.json'))
          .map((k) => k.split('/')[2]!),
      ),
    ],
    async usedOwnCredentials() {
      const signed = s3.requests.filter((request) => request.accessKeyId);
      assert.ok(signed.length > 0);
      for (const request of signed) {
        assert.match(
          request.accessKeyId!,
          /^ASIA/,
          "the temporary credentials STS gave for the role, found by the SDK in the pod's environment",
        );
        assert.notEqual(request.status, 403, `${request.method} ${request.key} was refused`);
      }
    },
    locationPattern: /^s3:\/\/captf-e2e\/fleet\/captf-(backup|plan)-tc\.team-a\.demo$/,
  }),
};

for (const [name, make] of Object.entries(stores)) {
  describe(`the ${name} store: an object's life`, () => {
    // One object, one state, its runs in order: each test goes on from where the last one left it.
    const life = sharedSetup(async (suite) => ({ store: await make(), s: await scenario(suite, modules.base) }));
    const run = async (
      s: Scenario,
      store: StoreUnderTest,
      op: string,
      args: string[] = [],
      env?: Record<string, string>,
    ): Promise<RunnerRun> => s.run(op, [...OBJECT, ...args], env ?? (await store.env()));
    let backupRef: string;

    it('an apply blocked keeps its record in the store; the approved apply reads it there and backs up there', async () => {
      const { store, s } = await life();
      const first = await run(s, store, 'apply');
      assert.equal(first.exitCode, 0, explain(first));
      await s.useModule(modules.replace);
      const blocked = await run(s, store, 'apply');
      assert.equal(blocked.exitCode, 3, explain(blocked));
      const approved = await run(s, store, 'apply', ['--approved-hash', blocked.result!.approvalHash!]);
      assert.equal(approved.exitCode, 0, explain(approved));
      const { backup, approval } = approved.result!;
      assert.match(backup!.location, store.locationPattern);
      assert.match(
        approval!.blockedRun!.location,
        new RegExp(
          `^${backup!.location.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/blocked-${blocked.result!.approvalHash}\\.json$`,
        ),
      );
      assert.equal(approval!.unreviewedTotal, 0, 'the record in the store showed every destructive change');
      assert.deepEqual(await store.objects('captf-backup-tc.team-a.demo'), [backup!.object]);
      await assert.rejects(
        readdir(join(s.out, 'backups')),
        { code: 'ENOENT' },
        'nothing went to the default directory',
      );
      backupRef = `${backup!.location}/${backup!.object}`;
    });

    it('the Manual flow: plan packs the plan into the store; apply --plan-artifact applies it from there and deletes it', async () => {
      const { store, s } = await life();
      await s.useModule(modules.update);
      const planned = await run(s, store, 'plan');
      assert.equal(planned.exitCode, 0, explain(planned));
      const artifact = planned.result!.planArtifact!;
      assert.match(artifact.location, store.locationPattern);
      assert.deepEqual(await store.objects('captf-plan-tc.team-a.demo'), [artifact.object]);
      const serial = (await s.readState()).serial;
      const applied = await run(s, store, 'apply', [
        '--plan-artifact',
        `${artifact.location}/${artifact.object}`,
        '--approved-plan-hash',
        planned.result!.planHash!,
      ]);
      assert.equal(applied.exitCode, 0, explain(applied));
      assert.equal(applied.result!.planHash, planned.result!.planHash);
      assert.ok((await s.readState()).serial > serial, 'the plan was applied');
      assert.deepEqual(
        await store.objects('captf-plan-tc.team-a.demo'),
        [],
        'a plan that was applied can never apply again: it is gone',
      );
    });

    it('restore reads a backup from the store; destroy backs up there first', async () => {
      const { store, s } = await life();
      const ids = resourceIds(await s.readState());
      const restored = await run(s, store, 'restore', ['--backup', backupRef]);
      assert.equal(restored.exitCode, 0, explain(restored));
      assert.equal(restored.result!.restoredFrom!.location + '/' + restored.result!.restoredFrom!.object, backupRef);
      assert.notDeepEqual(resourceIds(await s.readState()), ids, "the state is the backup's again");
      const destroyed = await run(s, store, 'destroy');
      assert.equal(destroyed.exitCode, 0, explain(destroyed));
      assert.match(destroyed.result!.backup!.location, store.locationPattern);
      assert.deepEqual(
        (await s.readState()).resources.filter((r) => r.mode === 'managed'),
        [],
      );
      assert.equal(
        (await store.objects('captf-backup-tc.team-a.demo')).length,
        3,
        'three backups kept (--keep-backups)',
      );
      await store.usedOwnCredentials();
    });

    it('the store down: no backup, so no apply: exit 1, the state unchanged', async () => {
      const { store, s } = await life();
      const before = await readFile(s.state, 'utf8');
      const down = await run(s, store, 'apply', [], await store.downEnv());
      assert.equal(down.exitCode, 1, explain(down));
      assert.equal(down.result!.error!.reason, 'StoreUnreachable');
      // The store is first read before the plan: every op that plans looks there for a kept errored state (faults §4),
      // a guarded apply in its step backup store.
      assert.equal(down.result!.error!.step, 'backup store');
      assert.ok(!down.result!.steps.some((step) => step.name === 'plan'), 'nothing planned');
      assert.equal(await readFile(s.state, 'utf8'), before, 'nothing was applied');
    });

    it("a reference to anything but this run's own store is refused before anything runs", async () => {
      const { store, s } = await life();
      const own = dirname(backupRef).replace('captf-backup-', 'captf-plan-');
      const elsewhere =
        name === 'S3'
          ? 'postgres://127.0.0.1:5432/db/captf/captf-plan-tc.team-a.demo'
          : 's3://captf-e2e/fleet/captf-plan-tc.team-a.demo';
      for (const reference of [
        `${own.replace('team-a.demo', 'team-a.other')}/plan-1`,
        `${own.replace('team-a.demo', 'team-b.demo')}/plan-1`,
        `${own}/plan-1/chunk-00000`,
        `${elsewhere}/plan-1`,
      ]) {
        const refused = await run(s, store, 'apply', [
          '--plan-artifact',
          reference,
          '--approved-plan-hash',
          'a'.repeat(64),
        ]);
        assert.equal(refused.exitCode, 2, explain(refused));
        assert.equal(refused.result!.error!.reason, 'ArtifactReferenceInvalid', reference);
      }
    });
  });
}

describe('a run without --store loads neither client', () => {
  it('an apply runs with the PostgreSQL and S3 client chunks gone from the bundle', async (t) => {
    const s = await scenario(t, modules.base);
    const bundle = join(s.dir, 'dist');
    await cp(dirname(RUNNER), bundle, { recursive: true });
    const chunks = join(bundle, 'chunks');
    const removed: string[] = [];
    for (const chunk of await readdir(chunks)) {
      const text = await readFile(join(chunks, chunk), 'utf8');
      if (/node_modules\/(pg|pg-protocol|@aws-sdk\/[a-z-]+|@smithy\/[a-z-]+)\//.test(text)) removed.push(chunk);
    }
    assert.ok(removed.length >= 2, `the clients' chunks: ${removed.join(', ')}`);
    for (const chunk of removed) await rm(join(chunks, chunk));
    const plain = await runProcess(process.execPath, [join(bundle, 'captf-runner.mjs'), ...s.runArgs('apply')], {
      env: testTerraformEnv(),
    });
    assert.equal(plain.exitCode, 0, plain.stderr.slice(-2000));
  });
});

for (const [name, make] of Object.entries(stores)) {
  describe(`the ${name} store: one store, objects of one name in two namespaces`, () => {
    it("team-b's prod never touches team-a's prod: its plan keeps team-a's pending artifact, its restore does not find team-a's backups", async (t) => {
      const store = await make();
      const env = await store.sharedEnv();
      const teamA = await scenario(t, modules.base);
      const teamB = await scenario(t, modules.base);
      const prod = (namespace: string) => ['--object', 'prod', '--namespace', namespace];
      const A = prod('team-a');
      const B = prod('team-b');
      const first = await teamA.run('apply', A, env);
      assert.equal(first.exitCode, 0, explain(first));
      await teamA.useModule(modules.update);
      const planA = await teamA.run('plan', A, env);
      assert.equal(planA.exitCode, 0, explain(planA));
      const artifactA = planA.result!.planArtifact!;
      assert.ok(artifactA.location.endsWith('/captf-plan-tc.team-a.prod'), artifactA.location);

      // team-b's plan of its own prod: its retention keeps one plan of its own, and none of team-a's.
      const firstB = await teamB.run('apply', B, env);
      assert.equal(firstB.exitCode, 0, explain(firstB));
      await teamB.useModule(modules.update);
      const planB = await teamB.run('plan', B, env);
      assert.equal(planB.exitCode, 0, explain(planB));
      assert.ok(planB.result!.planArtifact!.location.endsWith('/captf-plan-tc.team-b.prod'));
      assert.deepEqual(await store.objects('captf-plan-tc.team-a.prod'), [artifactA.object]);
      assert.deepEqual(await store.objects('captf-plan-tc.team-b.prod'), [planB.result!.planArtifact!.object]);

      // team-a's approved apply of its plan still finds it, and backs up team-a's state in team-a's key.
      const appliedA = await teamA.run(
        'apply',
        [...A, '--plan-artifact', artifactA.ref, '--approved-plan-hash', planA.result!.planHash!],
        env,
      );
      assert.equal(appliedA.exitCode, 0, explain(appliedA));
      const backupA = appliedA.result!.backup!;
      assert.ok(backupA.location.endsWith('/captf-backup-tc.team-a.prod'), backupA.location);
      assert.deepEqual(await store.objects('captf-backup-tc.team-b.prod'), []);

      // team-b's restore: team-a's backup is not in team-b's store, and team-a's reference is not team-b's to read.
      const stateB = await readFile(teamB.state);
      const notFound = await teamB.run(
        'restore',
        [...B, '--backup', `${backupA.location.replace('team-a.prod', 'team-b.prod')}/${backupA.object}`],
        env,
      );
      assert.notEqual(notFound.exitCode, 0, explain(notFound));
      assert.equal(notFound.result!.error!.reason, 'ArtifactIncomplete', explain(notFound));
      const refused = await teamB.run('restore', [...B, '--backup', backupA.ref], env);
      assert.equal(refused.exitCode, 2, explain(refused));
      assert.equal(refused.result!.error!.reason, 'ArtifactReferenceInvalid');
      assert.deepEqual(await readFile(teamB.state), stateB, "team-b's state is untouched");
    });
  });
}
