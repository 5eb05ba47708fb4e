// A rename cannot walk past a deny rule (contract/sections/policy.md §3, *Moves*): the contract's
// own example over real terraform `moved` blocks (a rename, a move into a module) that also change
// what forces the database's replacement. Each refusal is checked on the state afterwards; a moved
// destructive change is named with what it was wherever the runner names it.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileTree } from '../support/tf-modules.ts';
import { replaceConfiguration, resourceIds, runTestTerraform, writeModule } from '../support/tf-modules.ts';
import { sharedSetup } from '../support/suite-setup.ts';
import { ISSUE_EXAMPLE, POLICY_HEADER } from '../policy/policies.support.ts';
import { explain, runRunner, scenario, type RunnerRun, type Scenario } from '../support/runner.ts';
import { stateOnce } from './state-once.support.ts';

const IMAGE = 'registry.example/captf-module:1.0.0';

/** The database at terraform_data.db, replaced when its engine changes. */
const BASE: FileTree = { 'main.tf': 'resource "terraform_data" "db" {\n  triggers_replace = "pg15"\n}\n' };

/** Renamed to terraform_data.archive by a moved block, and its engine changed: the same object, replaced. */
const RENAMED: FileTree = {
  'main.tf':
    'moved {\n  from = terraform_data.db\n  to   = terraform_data.archive\n}\n\nresource "terraform_data" "archive" {\n  triggers_replace = "pg16"\n}\n',
};

/** Moved into module.wrap as terraform_data.store, its engine changed. */
const INTO_MODULE: FileTree = {
  'main.tf':
    'moved {\n  from = terraform_data.db\n  to   = module.wrap.terraform_data.store\n}\n\nmodule "wrap" {\n  source = "./wrap"\n}\n',
  'wrap/main.tf': 'resource "terraform_data" "store" {\n  triggers_replace = "pg16"\n}\n',
};

const applied = stateOnce(async (suite) => {
  const s = await scenario(suite, BASE);
  const run = await s.run('apply', ['--image', IMAGE]);
  assert.equal(run.exitCode, 0, explain(run));
  return s;
});

async function movedScenario(t: TestContext, tree: FileTree): Promise<{ s: Scenario; policy: string; before: Buffer }> {
  const s = await scenario(t, BASE);
  await applied(s);
  await s.useModule(tree);
  const policy = join(s.dir, 'policy');
  await mkdir(policy);
  await writeFile(join(policy, 'policy.yaml'), ISSUE_EXAMPLE);
  return { s, policy, before: await readFile(s.state) };
}

/** Denied by protect-databases at `address`, the moved entry named with what it was everywhere; nothing applied. */
async function assertDeniedMove(s: Scenario, run: RunnerRun, before: Buffer, address: string): Promise<void> {
  assert.equal(run.exitCode, 8, explain(run));
  const r = run.result!;
  assert.equal(r.reason, 'PolicyDenied');
  assert.deepEqual(r.plan!.policy!.denied, [
    { rule: 'protect-databases', address, message: `databases are never deleted by the runner: ${address}` },
  ]);
  assert.deepEqual(
    r.plan!.destructive.map((d) => [d.address, d.previousAddress, d.action]),
    [[address, 'terraform_data.db', 'replace']],
  );
  assert.ok(run.stdout.includes(`${address} (replace; was terraform_data.db)`), run.stdout);
  const termination = JSON.parse(await readFile(s.termination, 'utf8'));
  assert.deepEqual(termination.destructive, [{ address, action: 'replace', previousAddress: 'terraform_data.db' }]);
  assert.deepEqual(await readFile(s.state), before, 'nothing applied');
}

describe('policy: a rename cannot walk past a deny rule', () => {
  it('renamed by a moved block and replaced: denied, even with the approval hash of that very plan', async (t) => {
    const { s, policy, before } = await movedScenario(t, RENAMED);
    const run = await s.run('apply', ['--image', IMAGE, '--policy', policy]);
    await assertDeniedMove(s, run, before, 'terraform_data.archive');
    const approved = await s.run('apply', [
      '--image',
      IMAGE,
      '--policy',
      policy,
      '--approved-hash',
      run.result!.approvalHash!,
    ]);
    await assertDeniedMove(s, approved, before, 'terraform_data.archive');
    assert.ok(resourceIds(await s.readState())['terraform_data.db'], 'the database is still there, at its old address');
  });

  it('forgotten by a removed block and imported at another address by its id, then replaced: a move, denied, even with the approval hash', async (t) => {
    const { s, policy, before } = await movedScenario(t, BASE);
    const id = resourceIds(await s.readState())['terraform_data.db'];
    assert.ok(id);
    await s.useModule({
      'main.tf': `removed {\n  from = terraform_data.db\n  lifecycle {\n    destroy = false\n  }\n}\n\nimport {\n  to = terraform_data.archive\n  id = "${id}"\n}\n\nresource "terraform_data" "archive" {\n  triggers_replace = "pg16"\n}\n`,
    });
    const run = await s.run('apply', ['--image', IMAGE, '--policy', policy]);
    await assertDeniedMove(s, run, before, 'terraform_data.archive');
    assert.deepEqual(run.result!.plan!.changes.map((c) => [c.address, c.previousAddress]).sort(), [
      ['terraform_data.archive', 'terraform_data.db'],
      ['terraform_data.db', undefined],
    ]);
    const approved = await s.run('apply', [
      '--image',
      IMAGE,
      '--policy',
      policy,
      '--approved-hash',
      run.result!.approvalHash!,
    ]);
    await assertDeniedMove(s, approved, before, 'terraform_data.archive');
    assert.equal(
      resourceIds(await s.readState())['terraform_data.db'],
      id,
      'the database is still there, not replaced',
    );
  });

  it('moved into a module and replaced: denied', async (t) => {
    const { s, policy, before } = await movedScenario(t, INTO_MODULE);
    const run = await s.run('apply', ['--image', IMAGE, '--policy', policy]);
    await assertDeniedMove(s, run, before, 'module.wrap.terraform_data.store');
  });

  it('without a policy the block names what the moved change was: the message, the summaries, the termination message', async (t) => {
    const { s, before } = await movedScenario(t, RENAMED);
    const summary = join(s.dir, 'summary.md');
    const run = await s.run('apply', ['--image', IMAGE, '--summary-md', summary]);
    assert.equal(run.exitCode, 3, explain(run));
    assert.match(
      run.result!.message,
      /it deletes or replaces: terraform_data\.archive \(replace; was terraform_data\.db\)/,
    );
    assert.ok(run.stdout.includes('terraform_data.archive (replace; was terraform_data.db)'), run.stdout);
    assert.ok((await readFile(summary, 'utf8')).includes('`terraform_data.archive (was terraform_data.db)`'));
    assert.deepEqual(JSON.parse(await readFile(s.termination, 'utf8')).destructive, [
      { address: 'terraform_data.archive', action: 'replace', previousAddress: 'terraform_data.db' },
    ]);
    assert.deepEqual(await readFile(s.state), before);
  });

  it('contract check --policy warns about a rule that tests a name and never what the change was', async (t) => {
    const { s } = await movedScenario(t, BASE);
    await mkdir(join(s.dir, 'old'));
    await writeFile(
      join(s.dir, 'old', 'policy.yaml'),
      `${POLICY_HEADER}rules:\n- name: old-style\n  match: change.name.startsWith("db") && change.kind == "replace"\n  effect: deny\n`,
    );
    const check = async (dir: string) => {
      const run = await runRunner([
        'contract',
        'check',
        '--root',
        s.dir,
        '--module',
        '/module',
        '--policy',
        `/${dir}`,
        '--json',
      ]);
      return JSON.parse(run.stdout).checks.find((c: { name: string }) => c.name === 'policy') as {
        status: string;
        message: string;
        warnings?: string[];
      };
    };
    const old = await check('old');
    assert.equal(old.status, 'pass', 'a warning, not a violation');
    assert.match(old.message, /1 rule; 1 warning$/);
    assert.deepEqual(old.warnings, [
      `${join(s.dir, 'old', 'policy.yaml')} rule "old-style": match tests change.name and never where the change was before a move: a module author's moved block renames the object past this rule. Test every name it goes by instead (change.names, e.g. change.names.exists(n, n.startsWith("db")))`,
    ]);
    const table = await runRunner(['contract', 'check', '--root', s.dir, '--module', '/module', '--policy', '/old']);
    assert.match(table.stdout, /warn: .*rule "old-style": match tests change\.name/);
    assert.equal((await check('policy')).warnings, undefined, 'the contract example warns of nothing');
  });
});

describe("policy: the contract's other examples over real terraform moves", () => {
  /** terraform's own plans of the rename and of the move into a module (show -json), once for the describe: terraform_data applied, then each moved block planned. */
  const movedPlans = sharedSetup(async (suite) => {
    const dir = await writeModule(BASE, suite);
    for (const args of [['init'], ['apply', '-auto-approve']])
      assert.equal((await runTestTerraform(dir, args)).exitCode, 0);
    const plans: Record<string, string> = {};
    for (const [name, tree] of [
      ['renamed', RENAMED],
      ['into-module', INTO_MODULE],
    ] as const) {
      await replaceConfiguration(dir, tree);
      await mkdir(join(dir, 'wrap'), { recursive: true });
      if (tree['wrap/main.tf']) await writeFile(join(dir, 'wrap', 'main.tf'), tree['wrap/main.tf']);
      for (const args of [['init'], ['plan', '-out', `${name}.tfplan`]])
        assert.equal((await runTestTerraform(dir, args)).exitCode, 0, args.join(' '));
      plans[name] = (await runTestTerraform(dir, ['show', '-json', `${name}.tfplan`])).stdout;
    }
    return plans;
  });

  /** The examples of §6 that name objects by type: protect-databases and iam-needs-review. */
  const section = readFileSync(new URL('../../contract/sections/policy.md', import.meta.url), 'utf8');
  const [databases, , iam] = [
    ...section.slice(section.indexOf('## 6. Examples')).matchAll(/```yaml\n([\s\S]*?)```/g),
  ].map((m) => m[1]!);

  it("protect-databases and iam-needs-review hold through a rename and a move into a module of terraform's own plans (the provider types written in)", async (t) => {
    const plans = await movedPlans();
    const dir = await writeModule({ 'policy/databases.yaml': databases!, 'policy/iam.yaml': iam! }, t);
    for (const [type, expect] of [
      ['aws_db_instance', 'denied'],
      ['aws_iam_role', 'approvalRequired'],
    ] as const) {
      for (const [name, plan] of Object.entries(plans)) {
        // terraform_data stands in for the provider's type: no provider can be downloaded here.
        const file = join(dir, `${type}-${name}.json`);
        await writeFile(file, plan.replaceAll('terraform_data', type));
        const run = await runRunner(['classify', file, '--json', '--policy', join(dir, 'policy')]);
        assert.equal(run.exitCode, 0, run.stderr);
        const judged = JSON.parse(run.stdout);
        const moved = name === 'renamed' ? `${type}.archive` : `module.wrap.${type}.store`;
        assert.deepEqual(
          judged.destructive.map((d: { address: string; previousAddress?: string }) => [d.address, d.previousAddress]),
          [[moved, `${type}.db`]],
        );
        assert.deepEqual(
          judged.policy[expect].map((f: { address: string }) => f.address),
          [moved],
          `${type} ${name}`,
        );
      }
    }
  });
});
