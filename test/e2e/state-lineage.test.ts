// The state an op plans against is the object's: with --expect-lineage (CAPTF_EXPECTED_LINEAGE),
// the lineage of its last result, every op that plans against the state refuses a state of another
// lineage, or none at all (StateLineageMismatch, exit 7: every retry finds the same until a person
// acts): a guarded apply and a plan once the saved plan names the state (src/steps/state-planned.ts),
// before anything of the plan is shown, packed, backed up or applied; the other ops before they plan.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modules, readLocalState } from '../support/tf-modules.ts';
import { applied, IMAGE } from './apply.support.ts';
import { explain, type RunnerRun } from '../support/runner.ts';

const OTHER_LINEAGE = '0badc0de-0000-4000-8000-000000000000';

function assertRefused(run: RunnerRun, found: string | null, expected: string, op: string): void {
  assert.equal(run.exitCode, 7, explain(run));
  assert.equal(run.result!.outcome, 'failed');
  assert.equal(run.result!.reason, 'StateLineageMismatch');
  assert.equal(run.result!.error!.kind, 'state');
  assert.equal(run.result!.error!.step, 'state before');
  assert.deepEqual(run.result!.error!.detail, {
    expectedLineage: expected,
    foundLineage: found,
    foundSerial: found === null ? null : run.result!.error!.detail!.foundSerial,
  });
  const steps: string[] = run.result!.steps.map((step) => step.name);
  const planned = op === 'apply' || op === 'plan';
  assert.ok(
    steps.includes('plan') === planned && !['show', 'backup', 'apply'].some((step) => steps.includes(step)),
    steps.join(', '),
  );
  assert.equal(run.result!.plan, undefined, 'the plan is not reported');
  // Nothing of terraform's plan is printed: only what the runner says.
  assert.doesNotMatch(run.stdout, /No changes\.|Plan: \d+ to add|terraform_data\.|will be/);
  assert.equal(run.result!.planText, undefined, "terraform's plan is not reported");
  assert.equal(run.result!.planArtifact, undefined, 'nothing packed');
  if (planned)
    assert.ok(
      run.result!.warnings.includes(
        "terraform's output during the plan was not printed: the plan was made against a state that is not the object's (--expect-lineage), and is discarded",
      ),
      JSON.stringify(run.result!.warnings),
    );
  assert.equal(run.result!.applied, false);
  assert.equal(
    run.result!.state,
    undefined,
    "result.state never names a state that is not the object's: a controller takes the next lineage from it",
  );
  assert.match(
    run.result!.message,
    planned
      ? /Nothing was shown, packed or applied \(the saved plan, which changed nothing, was made against it and is discarded\), and every retry finds the same until a person acts/
      : /Nothing was planned or applied, and every retry finds the same until a person acts/,
  );
}

describe("--expect-lineage: the state is the object's", () => {
  it('a state of another lineage: apply and plan (once planned), destroy and refresh (by CAPTF_EXPECTED_LINEAGE, before they plan) refused; the state untouched; its own lineage runs', async (t) => {
    const s = await applied(t);
    await s.useModule(modules.update); // a plan that changes something: it would print it and pack it
    const stateBefore = await readFile(s.state);
    const lineage = (await readLocalState(s.state)).lineage;
    const artifacts = join(s.dir, 'artifacts');
    for (const [op, args, env] of [
      ['apply', ['--expect-lineage', OTHER_LINEAGE], {}],
      ['plan', ['--expect-lineage', OTHER_LINEAGE, '--artifacts', artifacts], {}],
      ['destroy', ['--expect-lineage', OTHER_LINEAGE], {}],
      ['refresh', [], { CAPTF_EXPECTED_LINEAGE: OTHER_LINEAGE }],
    ] as const) {
      const run = await s.run(op, ['--image', IMAGE, ...args], env);
      assertRefused(run, lineage, OTHER_LINEAGE, op);
      assert.ok(
        run.result!.message.includes(
          `the backend holds a state of lineage ${lineage}, not the object's (${OTHER_LINEAGE}, --expect-lineage)`,
        ),
        run.result!.message,
      );
      assert.deepEqual(await readFile(s.state), stateBefore, `${op} changed the state`);
    }
    assert.ok(!existsSync(artifacts) || (await readdir(artifacts)).length === 0, 'the plan packed nothing');
    const own = await s.run('apply', ['--image', IMAGE, '--expect-lineage', lineage]);
    assert.equal(own.exitCode, 0, explain(own));
    assert.equal(own.result!.outcome, 'succeeded');
    assert.equal(own.result!.state!.lineage, lineage);
  });

  it('an empty lineage means none, as a flag and as its variable: the op runs without the check (before the first state)', async (t) => {
    const s = await applied(t);
    for (const [args, env] of [
      [['--expect-lineage', ''], {}],
      [[], { CAPTF_EXPECTED_LINEAGE: '' }],
    ] as const) {
      const run = await s.run('apply', ['--image', IMAGE, ...args], env);
      assert.equal(run.exitCode, 0, explain(run));
      assert.equal(run.result!.outcome, 'noChanges');
    }
    const first = await s.run('plan', [
      '--image',
      IMAGE,
      '--state',
      join(s.dir, 'new', 'terraform.tfstate'),
      '--new-state',
      '--artifacts',
      join(s.dir, 'artifacts'),
      '--expect-lineage',
      '',
    ]);
    assert.equal(first.exitCode, 0, explain(first));
  });

  it("no state where the object's should be (another --state, a lost state): apply and destroy refused; nothing is created, a destroy does not end as if it destroyed", async (t) => {
    const s = await applied(t);
    const lineage = (await readLocalState(s.state)).lineage;
    const elsewhere = join(s.dir, 'elsewhere', 'terraform.tfstate');
    for (const op of ['apply', 'destroy']) {
      const run = await s.run(op, ['--image', IMAGE, '--state', elsewhere, '--new-state', '--expect-lineage', lineage]);
      assertRefused(run, null, lineage, op);
      assert.match(run.result!.message, /the backend holds no state, but the object's state has lineage/);
      assert.ok(!existsSync(elsewhere), `${op} started a state`);
    }
  });
});
