// Proves, with the real terraform, that each catalogue module does what its name promises.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import {
  BASE_ADMIN_TOKEN,
  modules,
  readLocalState,
  replaceConfiguration,
  resourceIds,
  runTestTerraform,
  slowApply,
  taintedAddresses,
  tempDir,
  writeModule,
  type FileTree,
  type TerraformState,
} from './tf-modules.ts';

const BASE_ADDRESSES = [
  'module.addon.terraform_data.this',
  'terraform_data.cluster',
  'terraform_data.credentials',
  'terraform_data.network',
  'terraform_data.node["a"]',
  'terraform_data.node["b"]',
  'terraform_data.replica[0]',
  'terraform_data.replica[1]',
  'terraform_data.replica[2]',
];

async function terraformOk(dir: string, args: string[]) {
  const run = await runTestTerraform(dir, args);
  assert.equal(run.exitCode, 0, `terraform ${args.join(' ')} failed:\n${run.stderr}${run.stdout}`);
  return run;
}

interface PlannedChanges {
  exitCode: number;
  /** Address → "actions (reason) [from PREVIOUS] [importing ID]" for every entry that is not a plain no-op. */
  changes: Record<string, string>;
  outputChanges: Record<string, string>;
}

async function plan(dir: string, args: string[] = []): Promise<PlannedChanges> {
  await terraformOk(dir, ['init', '-no-color']);
  const planned = await runTestTerraform(dir, ['plan', '-no-color', '-detailed-exitcode', '-out=plan.tfplan', ...args]);
  assert.ok(existsSync(join(dir, 'plan.tfplan')), `no plan file written:\n${planned.stderr}`);
  const document = JSON.parse((await terraformOk(dir, ['show', '-json', 'plan.tfplan'])).stdout) as {
    resource_changes?: Array<{
      address: string;
      action_reason?: string;
      previous_address?: string;
      change: { actions: string[]; importing?: { id: string } };
    }>;
    output_changes?: Record<string, { actions: string[] }>;
  };
  const changes: Record<string, string> = {};
  for (const entry of document.resource_changes ?? []) {
    const { actions, importing } = entry.change;
    const plainNoOp = actions.join() === 'no-op' && !entry.previous_address && !importing;
    if (plainNoOp) continue;
    changes[entry.address] = [
      actions.join(','),
      entry.action_reason ? `(${entry.action_reason})` : '',
      entry.previous_address ? `from ${entry.previous_address}` : '',
      importing ? `importing ${importing.id}` : '',
    ]
      .filter(Boolean)
      .join(' ');
  }
  const outputChanges = Object.fromEntries(
    Object.entries(document.output_changes ?? {})
      .filter(([, change]) => change.actions.join() !== 'no-op')
      .map(([name, change]) => [name, change.actions.join(',')]),
  );
  return { exitCode: planned.exitCode, changes, outputChanges };
}

describe('the module catalogue, against an applied base', () => {
  let appliedBase: string;
  let baseState: TerraformState;

  before(async () => {
    appliedBase = await writeModule(modules.base);
    await terraformOk(appliedBase, ['init', '-no-color']);
    await terraformOk(appliedBase, ['apply', '-no-color', '-auto-approve']);
    baseState = await readLocalState(join(appliedBase, 'terraform.tfstate'));
  });
  after(() => rm(appliedBase, { recursive: true, force: true }));

  /** A copy of the applied base (state and .terraform) configured as the variant. */
  async function baseSwitchedTo(t: TestContext, variant: FileTree): Promise<string> {
    const dir = await tempDir(t);
    await cp(appliedBase, dir, { recursive: true });
    await replaceConfiguration(dir, variant);
    return dir;
  }

  test('base: every address has an id, the sensitive output and variable are in the state', async () => {
    assert.deepEqual(Object.keys(resourceIds(baseState)).sort(), BASE_ADDRESSES);
    assert.equal(baseState.outputs.admin_token?.sensitive, true);
    assert.equal(baseState.outputs.admin_token?.value, BASE_ADMIN_TOKEN);
    assert.deepEqual(taintedAddresses(baseState), []);
  });

  test('base: planned again, nothing changes (exit 0)', async (t) => {
    const { exitCode, changes } = await plan(await baseSwitchedTo(t, modules.base));
    assert.equal(exitCode, 0);
    assert.deepEqual(changes, {});
  });

  const expectations: Array<[keyof typeof modules, Record<string, string>]> = [
    ['update', { 'terraform_data.cluster': 'update' }],
    ['replace', { 'terraform_data.cluster': 'delete,create (replace_because_cannot_update)' }],
    ['replaceCreateBeforeDestroy', { 'terraform_data.cluster': 'create,delete (replace_because_cannot_update)' }],
    ['deleteByRemoval', { 'terraform_data.network': 'delete (delete_because_no_resource_config)' }],
    [
      'shrinkCount',
      {
        'terraform_data.replica[1]': 'delete (delete_because_count_index)',
        'terraform_data.replica[2]': 'delete (delete_because_count_index)',
      },
    ],
    ['removeForEachKey', { 'terraform_data.node["b"]': 'delete (delete_because_each_key)' }],
    ['removeModuleCall', { 'module.addon.terraform_data.this': 'delete (delete_because_no_resource_config)' }],
    ['forget', { 'terraform_data.network': 'forget (delete_because_no_resource_config)' }],
    ['moved', { 'terraform_data.vpc': 'no-op from terraform_data.network' }],
    ['importBlock', { 'terraform_data.imported': 'no-op importing imported-id-123' }],
  ];
  for (const [variant, expected] of expectations) {
    test(`${variant}: plans exactly ${JSON.stringify(expected)}`, async (t) => {
      const { exitCode, changes } = await plan(await baseSwitchedTo(t, modules[variant]));
      assert.equal(exitCode, 2);
      assert.deepEqual(changes, expected);
    });
  }

  test('outputOnly: resources unchanged, one output created (exit 2)', async (t) => {
    const { exitCode, changes, outputChanges } = await plan(await baseSwitchedTo(t, modules.outputOnly));
    assert.equal(exitCode, 2);
    assert.deepEqual(changes, {});
    assert.deepEqual(outputChanges, { region: 'create' });
  });

  test('failingPrecondition: the plan fails (exit 1) and says why', async (t) => {
    const dir = await baseSwitchedTo(t, modules.failingPrecondition);
    await terraformOk(dir, ['init', '-no-color']);
    const planned = await runTestTerraform(dir, ['plan', '-no-color', '-detailed-exitcode']);
    assert.equal(planned.exitCode, 1);
    assert.match(planned.stderr, /fails the precondition on purpose/);
  });

  test('failingApply: exit 1 with one step tainted, the others created, the base untouched', async (t) => {
    const dir = await baseSwitchedTo(t, modules.failingApply);
    await terraformOk(dir, ['init', '-no-color']);
    const applied = await runTestTerraform(dir, ['apply', '-no-color', '-auto-approve']);
    assert.equal(applied.exitCode, 1);
    const state = await readLocalState(join(dir, 'terraform.tfstate'));
    assert.deepEqual(taintedAddresses(state), ['terraform_data.step["failing"]']);
    const ids = resourceIds(state);
    assert.ok(ids['terraform_data.step["first"]'] && ids['terraform_data.step["last"]']);
    for (const address of BASE_ADDRESSES) assert.equal(ids[address], resourceIds(baseState)[address]);
  });

  test('resourceIds: an update keeps the id, a replace changes it', async (t) => {
    const dir = await baseSwitchedTo(t, modules.update);
    await terraformOk(dir, ['init', '-no-color']);
    await terraformOk(dir, ['apply', '-no-color', '-auto-approve']);
    const afterUpdate = resourceIds(await readLocalState(join(dir, 'terraform.tfstate')));
    assert.deepEqual(afterUpdate, resourceIds(baseState));

    await replaceConfiguration(dir, modules.replace);
    await terraformOk(dir, ['apply', '-no-color', '-auto-approve']);
    const afterReplace = resourceIds(await readLocalState(join(dir, 'terraform.tfstate')));
    assert.notEqual(afterReplace['terraform_data.cluster'], afterUpdate['terraform_data.cluster']);
    assert.deepEqual(
      { ...afterReplace, 'terraform_data.cluster': 'x' },
      { ...afterUpdate, 'terraform_data.cluster': 'x' },
    );
  });
});

test('slowApply: the apply takes about the given seconds', async (t) => {
  const dir = await writeModule(slowApply({ resources: 3, seconds: 2 }), t);
  await terraformOk(dir, ['init', '-no-color']);
  const started = Date.now();
  await terraformOk(dir, ['apply', '-no-color', '-auto-approve']);
  assert.ok(Date.now() - started >= 2000, 'the apply finished before the sleeps could have');
  const ids = resourceIds(await readLocalState(join(dir, 'terraform.tfstate')));
  assert.ok(ids['terraform_data.slow[2]']);
});

test('pool: a bootstrap_data rotation updates, a captf_cluster_outputs change replaces the machines', async (t) => {
  const dir = await writeModule(modules.pool, t);
  await terraformOk(dir, ['init', '-no-color']);
  await terraformOk(dir, ['apply', '-no-color', '-auto-approve']);

  const rotation = await plan(dir, ['-var=bootstrap_data=bootstrap-v2']);
  assert.deepEqual(rotation.changes, { 'terraform_data.bootstrap': 'update' });

  const newExports = await plan(dir, ['-var=captf_cluster_outputs={endpoint="https://moved.example:6443"}']);
  assert.deepEqual(newExports.changes, {
    'terraform_data.machine[0]': 'delete,create (replace_because_cannot_update)',
    'terraform_data.machine[1]': 'delete,create (replace_because_cannot_update)',
  });
});
