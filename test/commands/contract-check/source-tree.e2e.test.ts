// contract check in CI (issue 17 §3): a module source tree without the image layout, a tree's own
// provider mirror and nothing else, variables files terraform would load by itself, each problem's
// file and line in --json, and one vocabulary for pass and fail. The real terraform throughout.
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runContractCheck } from '../../../src/commands/contract-check/check.ts';
import type { ContractReport } from '../../../src/commands/contract-check/report.ts';
import { formatContractTable } from '../../../src/commands/contract-check/format.ts';
import { runRunner } from '../../support/runner.ts';
import { tempDir, testTerraformEnv, writeTree } from '../../support/tf-modules.ts';
import { fakeNullProvider, imageTree, NEEDS_NULL_PROVIDER, POOL_MODULE } from './image-trees.support.ts';

const byName = (report: ContractReport) => Object.fromEntries(report.checks.map((c) => [c.name, c]));

async function sourceTree(t: Parameters<typeof tempDir>[0], files: Record<string, string>): Promise<string> {
  const dir = await tempDir(t, 'captf-source-tree-');
  await writeTree(dir, files);
  return dir;
}

describe('contract check of a module source tree (--module without --root)', () => {
  test('passes without the image layout; the image-only checks are skipped and say so', async (t) => {
    const dir = await sourceTree(t, POOL_MODULE);
    const report = await runContractCheck({ moduleDir: dir, sourceTree: true, kind: 'pool', env: testTerraformEnv() });
    assert.equal(report.status, 'pass', formatContractTable(report));
    for (const name of ['entrypoint', 'user']) {
      assert.equal(byName(report)[name]!.status, 'skip');
      assert.match(
        byName(report)[name]!.message,
        /^not checked: a module source tree \(--module without --root\) is not the image; run contract check inside the image for it$/,
      );
    }
    assert.equal(report.module, dir);
  });

  test("the CLI form CI runs: exit 0; CAPTF_MODULE alone never makes the image's own check a source tree's", async (t) => {
    const dir = await sourceTree(t, POOL_MODULE);
    const run = await runRunner(['contract', 'check', '--module', dir, '--kind', 'pool', '--json']);
    assert.equal(run.exitCode, 0, run.stdout + run.stderr);
    assert.equal(JSON.parse(run.stdout).status, 'pass');
    const fromEnv = await runRunner(['contract', 'check', '--kind', 'pool', '--json'], {
      CAPTF_MODULE: dir,
      PATH: '/usr/bin:/bin:' + (process.env.PATH ?? ''),
    });
    const entrypoint = JSON.parse(fromEnv.stdout).checks.find((c: { name: string }) => c.name === 'entrypoint');
    assert.notEqual(entrypoint.status, 'skip', 'checked as the image');
  });
});

describe('contract check: variables files terraform loads by itself', () => {
  test('terraform.tfvars, terraform.tfvars.json and *.auto.tfvars(.json) fail the tfvars check, each file named', async (t) => {
    const dir = await sourceTree(t, {
      ...POOL_MODULE,
      'terraform.tfvars': 'region = "eu"\n',
      'terraform.tfvars.json': '{"region": "eu"}\n',
      'prod.auto.tfvars': 'size = 3\n',
      'prod.auto.tfvars.json': '{"size": 3}\n',
      'examples/terraform.tfvars': 'not the root module: terraform does not load it\n',
      'notes.tfvars': 'loaded only with -var-file\n',
    });
    const report = await runContractCheck({ moduleDir: dir, sourceTree: true, env: testTerraformEnv() });
    const check = byName(report).tfvars!;
    assert.equal(check.status, 'fail');
    assert.equal(report.status, 'fail');
    assert.deepEqual(
      check.problems!.map((p) => p.file),
      ['prod.auto.tfvars', 'prod.auto.tfvars.json', 'terraform.tfvars', 'terraform.tfvars.json'],
    );
    assert.match(check.message, /outside the inputs hash/);
    assert.match(check.fix!, /inputs dir/);
    const clean = await runContractCheck({
      moduleDir: await sourceTree(t, POOL_MODULE),
      sourceTree: true,
      env: testTerraformEnv(),
    });
    assert.equal(byName(clean).tfvars!.status, 'pass');
  });
});

describe('contract check --json: each problem with its file and line', () => {
  test("validate: terraform's file and line; reserved names: the scan's", async (t) => {
    const dir = await sourceTree(t, {
      ...POOL_MODULE,
      'main.tf':
        'resource "terraform_data" "machine" {\n  input = sha256(var.bootstrap_data)\n}\n\nresource "terraform_data" "x" {\n  input = var.nope\n}\n',
    });
    const run = await runRunner(['contract', 'check', '--module', dir, '--json']);
    assert.equal(run.exitCode, 4, run.stderr);
    const validate = JSON.parse(run.stdout).checks.find((c: { name: string }) => c.name === 'validate');
    assert.equal(validate.status, 'fail');
    assert.deepEqual(
      validate.problems.map((p: { file: string; line: number }) => [p.file, p.line]),
      [['main.tf', 6]],
    );
    assert.match(validate.problems[0].message, /^Reference to undeclared input variable/);

    const reserved = await sourceTree(t, {
      ...POOL_MODULE,
      'own.tf': 'variable "x" {}\nresource "terraform_data" "captf_inputs_hash" {}\n',
    });
    const check = byName(await runContractCheck({ moduleDir: reserved, sourceTree: true, env: testTerraformEnv() }))
      .reserved!;
    assert.deepEqual(
      check.problems!.map((p) => [p.file.endsWith('own.tf'), p.line]),
      [[true, 2]],
    );
  });

  test('an unclosed block fails init with the file and line terraform names', async (t) => {
    const dir = await sourceTree(t, { ...POOL_MODULE, 'broken.tf': 'resource "terraform_data" "y" {\n' });
    const init = byName(await runContractCheck({ moduleDir: dir, sourceTree: true, env: testTerraformEnv() })).init!;
    assert.equal(init.status, 'fail');
    assert.deepEqual(
      init.problems!.map((p) => [p.file, p.line]),
      [['broken.tf', 1]],
    );
  });
});

describe("contract check --root: the tree's provider mirror and nothing else", () => {
  test("init installs the provider from the tree's mirror, whatever the CLI configuration of this machine says", async (t) => {
    const tree = await imageTree(t);
    const lock = await fakeNullProvider(join(tree.root, 'usr/share/terraform/plugins'));
    await mkdir(tree.module, { recursive: true });
    await writeTree(tree.module, { ...NEEDS_NULL_PROVIDER, '.terraform.lock.hcl': lock });
    // This machine's configuration knows no mirror: only the tree's can have given the provider.
    const report = await runContractCheck({
      root: tree.root,
      env: testTerraformEnv({ TF_CLI_CONFIG_FILE: '/dev/null' }),
    });
    assert.equal(byName(report).init!.status, 'pass', formatContractTable(report));
    assert.equal(
      byName(report).validate!.status,
      'fail',
      'the fake provider cannot run: validate starts it, init did not',
    );
  });

  test("a provider only this machine's mirror has is not used: init fails naming the tree's mirror, never a registry", async (t) => {
    const tree = await imageTree(t, NEEDS_NULL_PROVIDER);
    const machineMirror = await tempDir(t, 'captf-machine-mirror-');
    await writeFile(join(tree.module, '.terraform.lock.hcl'), await fakeNullProvider(machineMirror));
    const rc = join(machineMirror, 'terraformrc');
    await writeFile(rc, `provider_installation {\n  filesystem_mirror {\n    path = "${machineMirror}"\n  }\n}\n`);
    const report = await runContractCheck({ root: tree.root, env: testTerraformEnv({ TF_CLI_CONFIG_FILE: rc }) });
    const init = byName(report).init!;
    assert.equal(init.status, 'fail');
    assert.ok(
      init.problems!.some((p) => p.message.includes(join(tree.root, 'usr/share/terraform/plugins'))),
      JSON.stringify(init),
    );
    assert.ok(!JSON.stringify(init).includes(machineMirror), "this machine's mirror was never searched");
    // terraform lists where it looked: the tree's mirror alone (a registry would be listed too).
    assert.ok(
      init.problems!.some((p) =>
        p.message.endsWith(
          `was not found in any of the search locations - ${join(tree.root, 'usr/share/terraform/plugins')}`,
        ),
      ),
      JSON.stringify(init.problems),
    );
  });
});

describe('contract check: one vocabulary', () => {
  test('the table and --json say pass, fail and skip, and so does the verdict', async (t) => {
    const dir = await sourceTree(t, { ...POOL_MODULE, 'terraform.tfvars': 'x = 1\n' });
    const report = await runContractCheck({ moduleDir: dir, sourceTree: true, env: testTerraformEnv() });
    const table = formatContractTable(report);
    assert.match(table, /^tfvars +fail +the module ships terraform\.tfvars/m);
    assert.match(table, /^module +pass /m);
    assert.match(table, /^entrypoint +skip /m);
    assert.match(table, /^contract check: fail \(1 violation of the runner contract, runner\.captf\.io\/v1\)$/m);
    assert.doesNotMatch(table, /\bok\b|FAIL|passed|failed/);
    assert.ok(report.checks.every((c) => !('ok' in c)) && !('ok' in report), 'status alone says it');
  });
});
