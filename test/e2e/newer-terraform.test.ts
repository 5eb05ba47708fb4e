// The guard for the terraform people run today, end to end: the real terraform 1.11 through a
// wrapper (test/support/newer-terraform.sh) whose `show -json` adds what terraform 1.14+ prints
// (provider actions, keys the runner does not know) and whose `plan -detailed-exitcode` exits as a
// newer or buggy terraform would. Every block is checked on the state and on the wrapper's log
// (terraform apply never started), every apply on the state.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  modules,
  NEWER_TERRAFORM,
  newerTerraformEnv,
  readNewerTerraformLog,
  resourceIds,
  type NewerTerraformOptions,
} from '../support/tf-modules.ts';
import { explain, recordedInputsHash, type RunnerRun, type Scenario } from '../support/runner.ts';
// Every test starts from the base module applied by the real terraform: once per file, each test on a copy of that state.
import { applied, IMAGE } from './apply.support.ts';

const NEXT_IMAGE = 'registry.example/captf-module:1.1.0';

/** What terraform 1.14 prints for `-invoke=action.aws_ec2_stop_instance.maintenance` (jsonplan/action_invocations.go). */
const INVOKED = {
  address: 'action.aws_ec2_stop_instance.maintenance',
  type: 'aws_ec2_stop_instance',
  name: 'maintenance',
  config_values: { instance_id: 'i-0123456789abcdef0', force: false },
  config_sensitive: {},
  config_unknown: {},
  provider_name: 'registry.terraform.io/hashicorp/aws',
  invoke_action_trigger: {},
};
const lifecycleAction = (name: string, event: string, onFailure?: string) => ({
  address: `action.aws_lambda_invoke.${name}`,
  type: 'aws_lambda_invoke',
  name,
  config_values: { function_name: name },
  config_sensitive: {},
  config_unknown: {},
  provider_name: 'registry.terraform.io/hashicorp/aws',
  lifecycle_action_trigger: {
    triggering_resource_address: 'terraform_data.cluster',
    action_trigger_event: event,
    action_trigger_block_index: 0,
    actions_list_index: 0,
    ...(onFailure ? { on_failure: onFailure } : {}),
  },
});
const UNKNOWN_KEY = { future_changes: [{ address: 'terraform_data.cluster', what: 'something new' }] };

interface Newer {
  run(
    op: string,
    args: string[],
    add: Record<string, unknown> | undefined,
    options?: Omit<NewerTerraformOptions, 'log' | 'showAdd'>,
  ): Promise<RunnerRun & { commands: string[] }>;
}

/** Runs the built runner with the wrapper as its terraform; each run gets its own log. */
function newer(s: Scenario): Newer {
  let runs = 0;
  return {
    async run(op, args, add, options = {}) {
      const n = ++runs;
      const log = join(s.dir, `terraform-${n}.log`);
      const showAdd = add === undefined ? undefined : join(s.dir, `show-add-${n}.json`);
      if (showAdd) await writeFile(showAdd, JSON.stringify(add));
      const run = await s.run(
        op,
        [...args, '--terraform', NEWER_TERRAFORM],
        newerTerraformEnv({ log, showAdd, ...options }),
      );
      return { ...run, commands: await readNewerTerraformLog(log) };
    },
  };
}

function assertBlocked(run: RunnerRun & { commands: string[] }) {
  assert.equal(run.exitCode, 3, explain(run));
  assert.equal(run.result!.outcome, 'blocked');
  assert.equal(run.result!.reason, 'DestructivePlanBlocked');
  assert.equal(run.result!.plan!.gated, true);
  assert.equal(run.result!.applied, false);
  assert.ok(run.commands.includes('show'), run.commands.join(' '));
  assert.ok(!run.commands.includes('apply'), `terraform apply started: ${run.commands.join(' ')}`);
}

describe('provider actions (terraform 1.14+) need an approval', () => {
  it('an invoked action on a plan that changes nothing else: blocked, shown; applied with the approval hash; a new action later is unreviewed', async (t) => {
    const s = await applied(t);
    const w = newer(s);
    const before = await readFile(s.state);
    const oldHash = recordedInputsHash(await s.readState());

    // New inputs that change no resource (the record only), plus the invoked action.
    const blocked = await w.run('apply', ['--image', NEXT_IMAGE], { action_invocations: [INVOKED] });
    assertBlocked(blocked);
    const r = blocked.result!;
    assert.deepEqual(r.plan!.actions, [
      {
        address: INVOKED.address,
        type: 'aws_ec2_stop_instance',
        provider: 'registry.terraform.io/hashicorp/aws',
        trigger: 'invoke',
        triggeringResource: null,
        onFailure: null,
        deferred: false,
        deferredReason: null,
      },
    ]);
    assert.equal(r.plan!.actionsTotal, 1);
    assert.equal(r.plan!.destructiveTotal, 0);
    assert.match(
      r.message,
      /it runs provider actions, which the runner cannot judge: action\.aws_ec2_stop_instance\.maintenance \(action invoke\)\. Nothing was applied/,
    );
    assert.equal(r.annotations['captf.io/destructive-plan-blocked'], r.approvalHash);
    assert.match(
      blocked.stdout,
      /provider actions \(1: the runner cannot know what they do\):\n  action\.aws_ec2_stop_instance\.maintenance \(action invoke\)/,
    );
    const termination = JSON.parse(await readFile(s.termination, 'utf8'));
    assert.equal(termination.actionsTotal, 1);
    assert.deepEqual(termination.actions, [{ address: INVOKED.address, trigger: 'invoke' }]);
    assert.ok(!blocked.allBytes.includes('i-0123456789abcdef0'), 'config_values are never written');
    assert.deepEqual(await readFile(s.state), before, 'the state is untouched');

    const approved = await w.run('apply', ['--image', NEXT_IMAGE, '--approved-hash', r.approvalHash!], {
      action_invocations: [INVOKED],
    });
    assert.equal(approved.exitCode, 0, explain(approved));
    assert.equal(approved.result!.outcome, 'succeeded');
    assert.equal(approved.result!.reason, 'ApplySucceeded');
    assert.deepEqual(approved.result!.approval, {
      given: true,
      matched: true,
      required: true,
      unreviewed: [],
      unreviewedTotal: 0,
      blockedRun: approved.result!.approval!.blockedRun,
    });
    assert.ok(approved.commands.includes('apply'));
    const after = await s.readState();
    assert.notEqual(recordedInputsHash(after), oldHash);
    assert.equal(recordedInputsHash(after), r.inputsHash, 'the apply ran: the state records the new inputs');

    // terraform 1.14's action-only plan: every resource no-op, exit 2. The approval still matches
    // (same inputs), but the blocked run never showed the second action: unreviewed.
    const drain = lifecycleAction('drain', 'AfterUpdate');
    const again = await w.run(
      'apply',
      ['--image', NEXT_IMAGE, '--approved-hash', r.approvalHash!],
      { action_invocations: [INVOKED, drain] },
      { planExit: 2 },
    );
    assert.equal(again.exitCode, 0, explain(again));
    assert.deepEqual(again.result!.approval!.unreviewed, [
      { address: drain.address, action: 'action', trigger: 'AfterUpdate' },
    ]);
    assert.equal(again.result!.approval!.unreviewedTotal, 1);
    assert.ok(
      again.result!.warnings.some(
        (w) =>
          w.includes('1 destructive change or provider action that its blocked run') &&
          w.includes('action.aws_lambda_invoke.drain (action AfterUpdate)'),
      ),
      JSON.stringify(again.result!.warnings),
    );
  });

  it('with --guard off (a machine) the actions are applied and warned about, never blocking; an unverified version is named', async (t) => {
    const s = await applied(t);
    const run = await newer(s).run(
      'apply',
      ['--image', NEXT_IMAGE, '--kind', 'machine', '--guard', 'off'],
      { action_invocations: [INVOKED] },
      { version: '1.14.0' },
    );
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.applied, true);
    assert.ok(run.commands.includes('apply'));
    const warnings = run.result!.warnings;
    assert.ok(
      warnings.some(
        (w) =>
          w.startsWith('applied without an approval (--guard off): the plan runs provider actions') &&
          w.includes('action.aws_ec2_stop_instance.maintenance (action invoke)'),
      ),
      JSON.stringify(warnings),
    );
    assert.ok(
      warnings.some((w) =>
        w.startsWith('Terraform 1.14.0 is not verified with this runner (verified: Terraform 1.11.4)'),
      ),
      JSON.stringify(warnings),
    );
    assert.equal(run.result!.terraform!.version, '1.14.0');
  });

  it('plan (Manual) lists the actions with the plan hash; drift says a remediation needs an approval; refresh refuses', async (t) => {
    const s = await applied(t);
    const w = newer(s);
    await s.useModule(modules.update);
    const afterUpdate = lifecycleAction('notify', 'AfterUpdate', 'ActionOnFailureTaint');
    const plan = await w.run('plan', ['--image', IMAGE, '--artifacts', join(s.dir, 'artifacts')], {
      action_invocations: [afterUpdate],
    });
    assert.equal(plan.exitCode, 0, explain(plan));
    assert.equal(plan.result!.reason, 'PlanCreated');
    assert.match(
      plan.result!.message,
      new RegExp(
        `It needs an approval: it runs provider actions, which the runner cannot judge: action\\.aws_lambda_invoke\\.notify \\(action AfterUpdate\\)\\. Review it and approve plan hash ${plan.result!.planHash}`,
      ),
    );
    assert.equal(plan.result!.plan!.actions[0]!.onFailure, 'taint');

    const drift = await w.run('drift', ['--image', IMAGE], { action_invocations: [afterUpdate] });
    assert.equal(drift.exitCode, 0, explain(drift));
    assert.equal(drift.result!.drift!.found, true);
    assert.equal(drift.result!.plan!.destructiveTotal, 0, 'an update destroys nothing');
    assert.equal(drift.result!.drift!.remediationDestructive, true, 'the action needs an approval');

    await s.useModule(modules.base);
    const before = await readFile(s.state);
    const refresh = await w.run('refresh', ['--image', IMAGE], { action_invocations: [INVOKED] });
    assert.equal(refresh.exitCode, 4, explain(refresh));
    assert.equal(refresh.result!.reason, 'RefreshRefused');
    assert.match(
      refresh.result!.message,
      /runs provider actions \(action\.aws_ec2_stop_instance\.maintenance \(action invoke\)\), which only an approved apply may run/,
    );
    assert.ok(!refresh.commands.includes('apply'));
    assert.deepEqual(await readFile(s.state), before);
  });
});

describe('plan content the runner does not know', () => {
  it('an unknown top-level key holding content: blocked, the key named, nothing applied', async (t) => {
    const s = await applied(t);
    const before = await readFile(s.state);
    const run = await newer(s).run('apply', ['--image', NEXT_IMAGE], UNKNOWN_KEY);
    assertBlocked(run);
    assert.deepEqual(run.result!.plan!.failClosed, [
      'the plan has a top-level key this runner does not know, "future_changes", and it holds content: what applying it does cannot be checked',
    ]);
    assert.match(
      run.result!.message,
      /the runner cannot fully read it: the plan has a top-level key this runner does not know, "future_changes"/,
    );
    assert.deepEqual(await readFile(s.state), before);
    // The same key empty is nothing: the record-only plan applies.
    const empty = await newer(s).run('apply', ['--image', NEXT_IMAGE], { future_changes: [] });
    assert.equal(empty.exitCode, 0, explain(empty));
    assert.equal(empty.result!.outcome, 'noChanges');
  });

  // One destroy for both: a plan that exits 0 (no changes) while it changes something, with an action and an unknown key.
  it('a destroy is never gated: a BeforeDestroy action and an unknown key are warnings, and everything is destroyed; its plan exiting 0 while changing something is warned, and no warning says it needs an approval', async (t) => {
    const s = await applied(t);
    const drain = lifecycleAction('drain', 'BeforeDestroy', 'ActionOnFailureContinue');
    const run = await newer(s).run(
      'destroy',
      ['--image', IMAGE],
      { action_invocations: [drain], ...UNKNOWN_KEY },
      { planExit: 0 },
    );
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.outcome, 'succeeded');
    assert.equal(run.result!.reason, 'DestroySucceeded');
    assert.equal(run.result!.plan!.gated, true);
    assert.deepEqual(
      run.result!.plan!.actions.map((a) => [a.address, a.trigger, a.onFailure]),
      [[drain.address, 'BeforeDestroy', 'continue']],
    );
    const warnings = run.result!.warnings;
    assert.ok(
      warnings.some((w) =>
        w.startsWith(
          'terraform plan -detailed-exitcode exited 0 (no changes), but the plan document it saved changes something',
        ),
      ),
      JSON.stringify(warnings),
    );
    assert.ok(
      warnings.some(
        (w) =>
          w.includes('a destroy is never gated') && w.includes('action.aws_lambda_invoke.drain (action BeforeDestroy)'),
      ),
      JSON.stringify(warnings),
    );
    assert.ok(
      warnings.some((w) => w.includes('a destroy is never gated') && w.includes('"future_changes"')),
      JSON.stringify(warnings),
    );
    assert.ok(!warnings.some((w) => w.includes('needs an approval')), JSON.stringify(warnings));
    assert.doesNotMatch(run.stdout, /needs an approval \(plan\.gated\)/);
    assert.ok(run.commands.includes('apply'));
    assert.deepEqual(resourceIds(await s.readState()), {}, 'the state holds nothing');
  });
});

describe('the plan exit code never outvotes the classification', () => {
  it('exit 0 while the plan sets only the runner\'s record (a new image): the apply records the inputs, never "the state already records these inputs"', async (t) => {
    const s = await applied(t);
    const before = await s.readState();
    const w = newer(s);
    const run = await w.run('apply', ['--image', NEXT_IMAGE], undefined, { planExit: 0 });
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.outcome, 'noChanges');
    assert.doesNotMatch(run.result!.message, /already records these inputs/);
    assert.match(run.result!.message, /only recorded the inputs hash/);
    assert.ok(
      run.result!.warnings.some((w) =>
        w.includes("the plan sets the runner's inputs-hash record to a hash the state does not record yet"),
      ),
      JSON.stringify(run.result!.warnings),
    );
    assert.ok(run.commands.includes('apply'));
    assert.notEqual(recordedInputsHash(before), run.result!.inputsHash);
    assert.equal(
      recordedInputsHash(await s.readState()),
      run.result!.inputsHash,
      "the state records this run's inputs",
    );
    assert.equal(run.result!.stateInputsHash, run.result!.inputsHash);

    // The same inputs again, exit 0: now the state does record them.
    const again = await w.run('apply', ['--image', NEXT_IMAGE], undefined, { planExit: 0 });
    assert.equal(again.exitCode, 0, explain(again));
    assert.match(again.result!.message, /the state already records these inputs/);
    assert.ok(!again.commands.includes('apply'));
  });

  it('plan -detailed-exitcode exits 0 while planning a replace: the guarded apply blocks, plan is PlanCreated, and the approved artifact replaces', async (t) => {
    const s = await applied(t);
    const w = newer(s);
    await s.useModule(modules.replace);
    const before = await readFile(s.state);
    const cluster = resourceIds(await s.readState())['terraform_data.cluster'];

    const apply = await w.run('apply', ['--image', IMAGE], undefined, { planExit: 0 });
    assertBlocked(apply);
    assert.deepEqual(
      apply.result!.plan!.destructive.map((d) => [d.address, d.action]),
      [['terraform_data.cluster', 'replace']],
    );
    assert.ok(
      apply.result!.warnings.some((w) =>
        w.startsWith(
          'terraform plan -detailed-exitcode exited 0 (no changes), but the plan document it saved changes something',
        ),
      ),
      JSON.stringify(apply.result!.warnings),
    );
    assert.deepEqual(await readFile(s.state), before);

    const plan = await w.run('plan', ['--image', IMAGE, '--artifacts', join(s.dir, 'artifacts')], undefined, {
      planExit: 0,
    });
    assert.equal(plan.exitCode, 0, explain(plan));
    assert.equal(
      plan.result!.outcome,
      'succeeded',
      'never noChanges: the controller would apply that without approval',
    );
    assert.equal(plan.result!.reason, 'PlanCreated');
    assert.ok(plan.result!.warnings.some((w) => w.includes('exited 0 (no changes)')));

    const ref = plan.result!.planArtifact!;
    const approved = await s.run('apply', [
      '--image',
      IMAGE,
      '--plan-artifact',
      join(ref.location, ref.object),
      '--approved-plan-hash',
      plan.result!.planHash!,
    ]);
    assert.equal(approved.exitCode, 0, explain(approved));
    assert.equal(approved.result!.outcome, 'succeeded');
    assert.notEqual(
      resourceIds(await s.readState())['terraform_data.cluster'],
      cluster,
      'the approved plan replaced the cluster',
    );
  });
});
