// plan → artifact → approved apply (applyPolicy Manual), end to end: the real terraform, real
// modules, local state. Every refusal is checked on the state afterwards: byte for byte unchanged.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { cp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { modules, resourceIds, tempDir, type FileTree } from '../support/tf-modules.ts';
import { explain, recordedInputsHash, runRunner, scenario, type RunnerRun, type Scenario } from '../support/runner.ts';
import { unpackArtifactDir } from '../support/artifacts.ts';
import { sharedSetup } from '../support/suite-setup.ts';
// The base module applied once per file with the canary as admin_token; each test plans on a copy of that state.
import { applied, CANARY, IMAGE } from './apply.support.ts';

const ROTATED = 'CANARY-plan-rotated-Wq2';
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

interface Planned {
  s: Scenario;
  plan: RunnerRun;
  /** The artifact object dir (what --plan-artifact takes). */
  artifact: string;
  hash: string;
  /** The state file's bytes after the plan. */
  stateBytes: Buffer;
}

/** base applied, then `variant` planned into an artifact of small chunks. */
async function planned(t: TestContext, variant: FileTree = modules.replace, planArgs: string[] = []): Promise<Planned> {
  const s = await applied(t);
  await s.useModule(variant);
  const before = await readFile(s.state);
  const plan = await s.run('plan', [
    '--image',
    IMAGE,
    '--artifacts',
    join(s.dir, 'artifacts'),
    '--chunk-bytes',
    '1024',
    ...planArgs,
  ]);
  assert.equal(plan.exitCode, 0, explain(plan));
  const stateBytes = await readFile(s.state);
  assert.deepEqual(stateBytes, before, 'plan must not touch the state');
  const ref = plan.result!.planArtifact!;
  assert.equal(ref.ref, join(ref.location, ref.object), 'the reference to pass back is ready: <dir>/<object>');
  // What a controller passes back: the ref as the result gives it.
  return { s, plan, artifact: ref.ref, hash: plan.result!.planHash!, stateBytes };
}

/**
 * modules.replace planned once per file; the tests that start from that plan take turns with it.
 * The artifact is bound to the state's location (another location is another backend), so a test
 * gets the plan's own dir, not a copy elsewhere: restored to what the plan left (state, module,
 * inputs, artifact) when the test starts, and held by it until it ends, so that what a test changes
 * no other test sees.
 */
const replacePlan = sharedSetup(async (suite) => {
  const p = await planned(suite);
  const pristine = await tempDir(suite, 'captf-planned-');
  await cp(p.s.dir, pristine, { recursive: true });
  return { p, pristine };
});
let replacePlanHeld = Promise.resolve();
async function plannedReplace(t: TestContext): Promise<Planned> {
  const { p, pristine } = await replacePlan();
  const previous = replacePlanHeld;
  let release!: () => void;
  replacePlanHeld = new Promise((resolve) => (release = resolve));
  t.after(release);
  await previous;
  await rm(p.s.dir, { recursive: true, force: true });
  await cp(pristine, p.s.dir, { recursive: true });
  return p;
}

const approvedApply = (p: Planned, artifact: string, hash: string, extra: string[] = []) =>
  p.s.run('apply', ['--image', IMAGE, '--plan-artifact', artifact, '--approved-plan-hash', hash, ...extra]);

async function assertNothingApplied(p: Planned, run: RunnerRun) {
  assert.deepEqual(await readFile(p.s.state), p.stateBytes, `the state must be untouched\n${explain(run)}`);
  assert.equal(run.result!.applied, false);
  assert.ok(!run.result!.steps.some((step) => step.name === 'apply' && step.status === 'ok'), 'no apply step ran');
}

const assertNoCanary = (run: RunnerRun, ...values: string[]) => {
  for (const value of [CANARY, ...values])
    assert.ok(
      !run.allBytes.includes(value),
      `a sensitive value appears in something the runner wrote (${run.result?.op})`,
    );
};

describe('plan: the artifact a person approves', () => {
  it('writes a verified artifact of the saved plan and applies nothing', async (t) => {
    const { s, plan, artifact, hash } = await plannedReplace(t);
    const r = plan.result!;
    assert.equal(r.outcome, 'succeeded');
    assert.equal(r.reason, 'PlanCreated');
    assert.equal(r.applied, false);
    assert.equal(r.mayHaveChanged, false);
    assert.match(hash, /^[0-9a-f]{64}$/);
    assert.ok(r.message.includes(hash), 'the message names the plan hash to approve');
    assert.deepEqual(
      r.plan!.destructive.map((d) => [d.address, d.action]),
      [['terraform_data.cluster', 'replace']],
    );
    assert.equal(r.state!.serialBefore, r.state!.serialAfter);
    assert.equal(r.state!.serialBefore, (await s.readState()).serial);

    // The plan text is there for review, masked.
    assert.match(r.planText!, /# terraform_data\.cluster must be replaced/);
    assert.match(r.planText!, /Plan: 1 to add, 0 to change, 1 to destroy/);

    // Small chunks: several of them, each file 0600 in 0700 dirs.
    const { manifest, files, chunks } = await unpackArtifactDir(artifact);
    assert.ok(chunks.length > 1, `chunk-bytes 1024 gives several chunks, got ${chunks.length}`);
    assert.equal(manifest.chunkCount, chunks.length);
    assert.equal(r.planArtifact!.chunks, chunks.length);
    for (const dir of [join(s.dir, 'artifacts'), artifact]) assert.equal((await stat(dir)).mode & 0o777, 0o700, dir);
    for (const name of await readdir(artifact))
      assert.equal((await stat(join(artifact, name))).mode & 0o777, 0o600, name);

    // planHash is the sha256 of the saved plan's bytes, and the manifest binds the inputs.
    assert.equal(sha256(files['plan.tfplan']!), hash);
    assert.equal(manifest.planHash, hash);
    assert.equal(manifest.inputsHash, r.inputsHash);
    assert.equal(manifest.kind, 'PlanArtifact');
    assert.equal(manifest.terraformVersion, r.terraform!.version);
    // ... and the state it was planned against.
    assert.equal(manifest.stateLineage, (await s.readState()).lineage);
    assert.match(String(manifest.backend), /^[0-9a-f]{64}$/);
    // The saved plan is a zip holding the state it was planned against: the secret is in there (why it is 0600).
    assert.ok(files['plan.tfplan']!.subarray(0, 2).equals(Buffer.from('PK')));
    assertNoCanary(plan);
  });

  it('a plan without changes says so, still writes its artifact, and its apply (self-approved) applies nothing', async (t) => {
    const p = await planned(t, modules.base);
    const { plan, hash } = p;
    assert.equal(plan.result!.outcome, 'noChanges');
    assert.equal(plan.result!.reason, 'NoChanges');
    assert.match(hash, /^[0-9a-f]{64}$/);
    assert.ok(
      plan.result!.planArtifact,
      'the artifact is written: the controller applies the recorded plan as for any other',
    );
    // The controller approves the recorded plan hash itself (recordedPlan.hasChanges is false): nothing to apply, no backup.
    const run = await approvedApply(p, p.artifact, hash);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'noChanges');
    assert.match(r.message, /has no changes: nothing was applied, and the state already records these inputs/);
    assert.doesNotMatch(r.message, /only recorded/);
    assert.equal(r.applied, false);
    assert.equal(r.mayHaveChanged, false);
    assert.equal(r.backup, undefined);
    assert.deepEqual(
      r.steps
        .filter((step) => ['backup', 'plan check', 'apply'].includes(step.name))
        .map((step) => [step.name, step.status]),
      [['apply', 'skipped']],
    );
    assert.deepEqual(await readFile(p.s.state), p.stateBytes, 'the state is untouched');
  });

  it('new inputs that change nothing but the recorded hash: noChanges (no approval needed), and applying the plan records the hash', async (t) => {
    const p = await planned(t, modules.base, ['--image', 'registry.example/captf-module:1.0.1']);
    const r = p.plan.result!;
    assert.equal(r.outcome, 'noChanges', explain(p.plan));
    assert.equal(r.reason, 'NoChanges');
    assert.match(r.message, /nothing but the recorded inputs hash/);
    assert.ok(r.planArtifact, 'the plan is still packed: applying it records the new inputs hash');
    const run = await approvedApply(p, p.artifact, p.hash, ['--image', 'registry.example/captf-module:1.0.1']);
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.outcome, 'noChanges');
    assert.match(run.result!.message, /it only recorded the inputs hash/, 'said when it is true');
    assert.equal(run.result!.applied, true);
    assert.equal(recordedInputsHash(await p.s.readState()), r.inputsHash);
  });

  it('locally a dry run is one command: the artifact under --out, a --state not there yet planned as empty (nothing written), and the next line applies it', async (t) => {
    const s = await scenario(t, modules.base, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const plan = await runRunner(s.ownBackendArgs('plan', ['--image', IMAGE, '--state', s.state]), {}, s);
    assert.equal(plan.exitCode, 0, explain(plan));
    assert.equal(plan.result!.reason, 'PlanCreated');
    assert.equal(plan.result!.planArtifact!.location, join(s.out, 'artifacts'), 'beside the backups, under --out');
    assert.ok(
      plan.result!.warnings.some((w) =>
        w.startsWith(`--state ${s.state} does not exist: this plan is against an empty state`),
      ),
      explain(plan),
    );
    assert.ok(!existsSync(s.state), 'a plan writes no state');
    const next = /^next: review the plan above, then apply exactly this plan: captf-runner (.*)$/m.exec(plan.stdout);
    assert.ok(next, plan.stdout);
    assert.match(next[1]!, / --new-state$/, 'its apply starts the state');
    const apply = await runRunner(next[1]!.split(' '), {}, s);
    assert.equal(apply.exitCode, 0, explain(apply));
    assert.equal(apply.result!.reason, 'ApplySucceeded');
    assert.ok(resourceIds(await s.readState())['terraform_data.cluster'], 'the planned objects are in the new state');

    // Only the file may be missing, and only for a plan: a missing directory, or a drift, is still refused.
    const typo = join(s.dir, 'stat', 'terraform.tfstate');
    const dir = await runRunner(s.ownBackendArgs('plan', ['--image', IMAGE, '--state', typo]), {}, s);
    assert.equal(dir.exitCode, 2, explain(dir));
    assert.equal(dir.result!.reason, 'StateDirMissing');
    const drift = await runRunner(
      s.ownBackendArgs('drift', ['--image', IMAGE, '--state', join(s.dir, 'state', 'other.tfstate')]),
      {},
      s,
    );
    assert.equal(drift.exitCode, 2, explain(drift));
    assert.equal(drift.result!.reason, 'StateFileMissing');
  });
});

describe('apply --plan-artifact: exactly the approved plan', () => {
  it('applies that plan, a destructive replace included, without --approved-hash; the plan file is gone afterwards', async (t) => {
    const p = await plannedReplace(t);
    const before = resourceIds(await p.s.readState());
    // The module dir now holds another change (an in-place update): the approved apply must not plan it.
    await p.s.useModule(modules.update);
    const workdir = join(p.s.dir, 'work');
    // A cluster with the default --guard on: the plan approval binds the plan, so the guard is not consulted and the replace is not blocked.
    const run = await approvedApply(p, p.artifact, p.hash, [
      '--workdir',
      workdir,
      '--kind',
      'cluster',
      '--guard',
      'on',
    ]);
    assert.equal(run.exitCode, 0, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'succeeded');
    assert.equal(r.reason, 'ApplySucceeded');
    assert.deepEqual(r.approval, { given: true, matched: true, required: false });
    assert.equal(r.planHash, p.hash);
    assert.equal(r.applied, true);
    assert.ok(!r.steps.some((step) => step.name === 'plan'), 'no new plan');

    const state = await p.s.readState();
    const after = resourceIds(state);
    assert.notEqual(after['terraform_data.cluster'], before['terraform_data.cluster'], 'the replace was applied');
    assert.equal(after['terraform_data.network'], before['terraform_data.network']);
    const cluster = state.resources.find((res) => res.name === 'cluster')!.instances[0]!.attributes;
    assert.equal(
      cluster.triggers_replace && (cluster.triggers_replace as { value: string }).value,
      'v2',
      'the planned trigger',
    );
    assert.deepEqual(
      (cluster.input as { value: unknown }).value,
      { name: 'demo', generation: 1 },
      'not the unplanned update',
    );
    assert.equal(recordedInputsHash(state), p.plan.result!.inputsHash);
    assert.equal(r.state!.serialAfter, state.serial);
    assert.ok(r.state!.serialBefore! < state.serial);

    // The plan file holds secrets: nothing of it outlives the run, and the applied artifact (it can never apply again) is gone.
    const leftovers = (await readdir(workdir, { recursive: true })).filter((name) => String(name).endsWith('.tfplan'));
    assert.deepEqual(leftovers, []);
    assert.equal(existsSync(p.artifact), false, 'the spent plan artifact is deleted');
    assertNoCanary(run);
  });

  it('refuses a damaged artifact, a wrong approval or other inputs, and applies nothing', async (t) => {
    const p = await plannedReplace(t);
    const work = await tempDir(t, 'captf-artifacts-');
    let copies = 0;
    /** A copy of the artifact (the same object name, in its own store dir), changed by `damage`. */
    const damaged = async (damage: (dir: string) => Promise<void>) => {
      const dir = join(work, String(++copies), p.plan.result!.planArtifact!.object);
      await cp(p.artifact, dir, { recursive: true });
      await damage(dir);
      return dir;
    };
    const chunk = (dir: string, index: number) => join(dir, `chunk-${String(index).padStart(5, '0')}`);

    const cases: Array<{
      name: string;
      artifact: () => Promise<string>;
      hash?: string;
      exit: number;
      reason: string;
      message: RegExp;
    }> = [
      {
        name: 'a tampered chunk',
        artifact: () =>
          damaged(async (dir) => {
            const data = await readFile(chunk(dir, 1));
            data[100]! ^= 0xff;
            await writeFile(chunk(dir, 1), data);
          }),
        exit: 1,
        reason: 'ArtifactCorrupt',
        message: /chunk 1 whose sha256 differs/,
      },
      {
        name: 'a missing chunk',
        artifact: () => damaged((dir) => rm(chunk(dir, 2))),
        exit: 1,
        reason: 'ArtifactIncomplete',
        message: /lacks chunk\(s\) 2/,
      },
      {
        name: 'an extra chunk',
        artifact: () =>
          damaged(async (dir) => writeFile(chunk(dir, (await readdir(dir)).length - 1), await readFile(chunk(dir, 0)))),
        exit: 1,
        reason: 'ArtifactCorrupt',
        message: /beyond the \d+ listed/,
      },
      {
        name: 'reordered chunks',
        artifact: () =>
          damaged(async (dir) => {
            const [a, b] = [await readFile(chunk(dir, 0)), await readFile(chunk(dir, 1))];
            await writeFile(chunk(dir, 0), b);
            await writeFile(chunk(dir, 1), a);
          }),
        exit: 1,
        reason: 'ArtifactCorrupt',
        message: /chunk 0/,
      },
      {
        name: 'a truncated chunk',
        artifact: () =>
          damaged(async (dir) => writeFile(chunk(dir, 0), (await readFile(chunk(dir, 0))).subarray(0, 10))),
        exit: 1,
        reason: 'ArtifactCorrupt',
        message: /chunk 0 of 10 bytes/,
      },
      {
        name: 'no manifest',
        artifact: () => damaged((dir) => rm(join(dir, 'manifest.json'))),
        exit: 1,
        reason: 'ArtifactIncomplete',
        message: /no manifest/,
      },
      {
        name: 'a manifest naming another plan hash',
        artifact: () =>
          damaged(async (dir) => {
            const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
            manifest.planHash = 'a'.repeat(64);
            await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
          }),
        hash: 'a'.repeat(64),
        exit: 1,
        reason: 'ArtifactCorrupt',
        message: /planHash differs from the sha256 of planFile/,
      },
      {
        name: 'an artifact of an earlier runner, not bound to a state',
        artifact: () =>
          damaged(async (dir) => {
            const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
            delete manifest.stateLineage;
            delete manifest.backend;
            await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
          }),
        exit: 5,
        reason: 'ArtifactMismatch',
        message: /does not say which state it was planned against/,
      },
      {
        name: 'a wrong approved plan hash',
        artifact: async () => p.artifact,
        hash: 'b'.repeat(64),
        exit: 5,
        reason: 'ArtifactMismatch',
        message: /not the approved plan b{64}/,
      },
      {
        name: 'a malformed approved plan hash',
        artifact: async () => p.artifact,
        hash: p.hash.toUpperCase(),
        exit: 2,
        reason: 'PlanNotApproved',
        message: /64 lowercase hex/,
      },
      {
        name: 'no approved plan hash',
        artifact: async () => p.artifact,
        hash: '',
        exit: 2,
        reason: 'PlanNotApproved',
        message: /needs --approved-plan-hash/,
      },
    ];
    for (const c of cases) {
      const run = await approvedApply(p, await c.artifact(), c.hash ?? p.hash);
      assert.equal(run.exitCode, c.exit, `${c.name}: ${explain(run)}`);
      assert.equal(run.result!.reason, c.reason, `${c.name}: ${run.result!.message}`);
      assert.match(run.result!.message, c.message, c.name);
      await assertNothingApplied(p, run);
    }

    // Inputs that no longer hash to the manifest's inputsHash: another image, another variable.
    for (const [name, change] of [
      ['another image', async () => ['--image', 'registry.example/captf-module:1.0.1']],
      [
        'another variable',
        async () => {
          await p.s.setInputs({ 'terraform.tfvars.json': { admin_token: CANARY, cluster_name: 'renamed' } });
          return [];
        },
      ],
    ] as const) {
      const extra = await change();
      const run = await approvedApply(p, p.artifact, p.hash, extra);
      assert.equal(run.exitCode, 5, `${name}: ${explain(run)}`);
      assert.equal(run.result!.reason, 'ArtifactMismatch', name);
      assert.match(run.result!.message, /was made from inputs [0-9a-f]{64}, but the inputs given now hash to/);
      assert.match(run.result!.message, /new plan/);
      await assertNothingApplied(p, run);
    }

    // The genuine artifact with the genuine inputs still applies: the refusals were the damage.
    await p.s.setInputs({ 'terraform.tfvars.json': { admin_token: CANARY } });
    const good = await approvedApply(p, p.artifact, p.hash);
    assert.equal(good.exitCode, 0, explain(good));
    assert.notDeepEqual(await readFile(p.s.state), p.stateBytes);
  });

  it('a stale plan (the state changed since) is not applied: PlanStale, exit 5, a new plan and approval are needed', async (t) => {
    const p = await plannedReplace(t);
    // Something else applies in between: a new image with no resource change records a new inputs hash.
    await p.s.useModule(modules.base);
    const between = await p.s.run('apply', ['--image', 'registry.example/captf-module:1.0.1']);
    assert.equal(between.exitCode, 0, explain(between));
    const changed = await readFile(p.s.state);
    assert.notDeepEqual(changed, p.stateBytes, 'the state changed after the plan');
    const ids = resourceIds(await p.s.readState());

    const run = await approvedApply(p, p.artifact, p.hash);
    assert.equal(run.exitCode, 5, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'failed');
    assert.equal(r.reason, 'PlanStale');
    assert.match(r.message, /stale/);
    assert.match(r.message, /Nothing was applied/);
    assert.match(r.message, /new plan and a new approval/);
    // terraform apply ran (applied is whether it did) and refused the plan before changing anything.
    assert.equal(r.applied, true);
    assert.equal(r.steps.find((step) => step.name === 'apply')?.status, 'failed');
    assert.equal(r.mayHaveChanged, false);
    assert.notEqual(r.error!.kind, 'blocked', 'a stale plan is not a destructive block');
    assert.deepEqual(await readFile(p.s.state), changed, 'the state is as the in-between apply left it');
    assert.deepEqual(resourceIds(await p.s.readState()), ids);
    assert.equal(r.state!.serialBefore, (await p.s.readState()).serial);
    assert.equal(existsSync(p.artifact), false, 'a stale plan can never apply again: its artifact is deleted');
    assertNoCanary(run);
  });
});

describe('apply --plan-artifact: what a module prints is not terraform speaking', () => {
  it('a provisioner printing a stale-plan refusal and a lock report: the failed apply is ApplyFailed, may have changed the state, names no lock holder', async (t) => {
    const p = await planned(t, modules.forgesTerraformErrors);
    const run = await approvedApply(p, p.artifact, p.hash);
    assert.equal(run.exitCode, 1, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'failed');
    assert.equal(r.reason, 'ApplyFailed', 'not PlanStale: terraform did not refuse the plan, it applied part of it');
    assert.equal(r.error!.kind, 'terraform');
    assert.match(r.message, /terraform apply exited 1/);
    assert.equal(r.applied, true);
    assert.equal(r.mayHaveChanged, true);
    assert.equal(r.lock, undefined, 'the module named a lock holder; terraform did not');
    assert.ok(
      (await p.s.readState()).resources.some((res) => res.name === 'forger'),
      'terraform saved the failed create (tainted)',
    );
    assertNoCanary(run);
  });
});

describe('apply --plan-artifact: bound to the state it was planned against', () => {
  async function assertRefused(run: RunnerRun, lineOf: RegExp) {
    assert.equal(run.exitCode, 5, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'failed');
    assert.equal(r.reason, 'ArtifactMismatch');
    assert.equal(r.error!.step, 'artifact binding');
    assert.match(r.message, lineOf);
    assert.match(r.message, /Nothing was applied/);
    assert.equal(r.applied, false);
    assert.equal(r.backup, undefined, 'nothing was backed up for an apply that never runs');
  }

  it("another object's artifact (same inputs hash, another state) changes neither state", async (t) => {
    const x = await plannedReplace(t);
    // Another object with the same module and inputs, and so the same inputs hash, but a state of its
    // own: a copy of the same applied state (even its lineage is X's), at another location.
    const y = await applied(t);
    await y.useModule(modules.replace);
    assert.equal(
      (await y.readState()).lineage,
      (await x.s.readState()).lineage,
      'only the location tells the states apart',
    );
    const yBytes = await readFile(y.state);
    const run = await y.run('apply', ['--image', IMAGE, '--plan-artifact', x.artifact, '--approved-plan-hash', x.hash]);
    assert.equal(
      run.result?.inputsHash,
      x.plan.result!.inputsHash,
      'the same inputs hash: only the binding tells the states apart',
    );
    await assertRefused(run, /another backend/);
    assert.deepEqual(await readFile(x.s.state), x.stateBytes, "X's state is untouched");
    assert.deepEqual(await readFile(y.state), yBytes, "Y's state is untouched");
    assertNoCanary(run);
  });

  it('an artifact planned against no state is refused for another empty backend', async (t) => {
    const x = await scenario(t, modules.base, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const plan = await x.run('plan', ['--image', IMAGE, '--artifacts', join(x.dir, 'artifacts')]);
    assert.equal(plan.exitCode, 0, explain(plan));
    const ref = plan.result!.planArtifact!;
    const y = await scenario(t, modules.base, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const run = await y.run('apply', [
      '--image',
      IMAGE,
      '--plan-artifact',
      join(ref.location, ref.object),
      '--approved-plan-hash',
      plan.result!.planHash!,
    ]);
    await assertRefused(run, /another backend/);
    for (const state of [x.state, y.state])
      await assert.rejects(stat(state), { code: 'ENOENT' }, `${state} was never written`);
  });

  it('the same backend with a state of another lineage is refused', async (t) => {
    const p = await plannedReplace(t);
    // The state at the same location is replaced by one of another lineage (as a state started afresh there would be).
    const state = JSON.parse(await readFile(p.s.state, 'utf8'));
    state.lineage = randomUUID();
    await writeFile(p.s.state, JSON.stringify(state, null, 2));
    const bytes = await readFile(p.s.state);
    const run = await approvedApply(p, p.artifact, p.hash);
    await assertRefused(run, /a state of lineage/);
    assert.deepEqual(await readFile(p.s.state), bytes);
  });
});

describe('plan: secrets', () => {
  it('after a secret rotation, neither the old value (from the state) nor the new one is written anywhere', async (t) => {
    const s = await applied(t);
    await s.setInputs({ 'terraform.tfvars.json': { admin_token: ROTATED } });
    const run = await s.run('plan', ['--image', IMAGE, '--artifacts', join(s.dir, 'artifacts')]);
    assert.equal(run.exitCode, 0, explain(run));
    // terraform prints the old value of the derived, unmarked `output` attribute: the runner masks it.
    assert.match(run.result!.planText!, /# terraform_data\.credentials will be updated in-place/);
    assert.match(run.result!.planText!, /output = "\(sensitive value\)" -> \(known after apply\)/);
    assertNoCanary(run, ROTATED);
  });
});
