// runContractCheck on directory trees laid out like an image, with the real terraform (and
// stand-ins for other versions and OpenTofu).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { runProcess } from '../../support/exec.ts';
import { runContractCheck } from '../../../src/commands/contract-check/check.ts';
import type { ContractReport } from '../../../src/commands/contract-check/report.ts';
import { formatContractTable } from '../../../src/commands/contract-check/format.ts';
import { resolveExecutable } from '../../../src/terraform/version.ts';
import { RUNNER } from '../../support/runner.ts';
import { writeTree } from '../../support/tf-modules.ts';
import {
  entrypointBin,
  FAKE_TOFU,
  imageTree,
  NEEDS_NULL_PROVIDER,
  NULL_LOCK_FILE,
  POOL_MODULE,
  terraformReporting,
} from './image-trees.support.ts';

const byName = (report: ContractReport) => Object.fromEntries(report.checks.map((c) => [c.name, c]));
const statuses = (report: ContractReport) => Object.fromEntries(report.checks.map((c) => [c.name, c.status]));

describe('contract check of a directory tree', () => {
  test('a good pool module passes every check', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    const report = await runContractCheck({ root: tree.root, kind: 'pool', env: tree.env });
    assert.equal(report.status, 'pass', formatContractTable(report));
    assert.deepEqual(statuses(report), {
      entrypoint: 'skip',
      user: 'skip',
      workdir: 'pass',
      terraform: 'pass',
      module: 'pass',
      reserved: 'pass',
      files: 'pass',
      tfvars: 'pass',
      backend: 'pass',
      variables: 'pass',
      nonsensitive: 'pass',
      lockfile: 'pass',
      providers: 'pass',
      init: 'pass',
      validate: 'pass',
      policy: 'pass',
    });
    assert.equal(report.module, tree.module);
    assert.equal(report.terraform?.flavor, 'terraform');
    assert.match(byName(report).lockfile!.message, /only built-in providers/);
    assert.match(formatContractTable(report), /contract check: pass/);
  });

  test('no module dir: named, with the fix; the checks that need it are skipped', async (t) => {
    const tree = await imageTree(t);
    const report = await runContractCheck({ root: tree.root, env: tree.env });
    assert.equal(report.status, 'fail');
    const module = byName(report).module!;
    assert.equal(module.status, 'fail');
    assert.match(module.message, /captf\/module does not exist in the tree /);
    assert.match(module.fix!, /\/captf\/module/);
    assert.deepEqual(
      [byName(report).reserved!.status, byName(report).init!.status, byName(report).validate!.status],
      ['skip', 'skip', 'skip'],
    );
    assert.equal(
      report.checks.filter((c) => c.status === 'fail').length,
      1,
      'a skipped check is not a second violation',
    );
  });

  test('a module dir without .tf files', async (t) => {
    const tree = await imageTree(t, {
      'README.md': '# nothing here\n',
      'sub/main.tf': 'resource "terraform_data" "x" {}\n',
    });
    const report = await runContractCheck({ root: tree.root, env: tree.env });
    assert.equal(byName(report).module!.status, 'fail');
    assert.match(byName(report).module!.message, /has no \.tf files/);
  });

  test('a module of .tf.json files counts', async (t) => {
    const tree = await imageTree(t, {
      'backend.tf': POOL_MODULE['backend.tf']!,
      'main.tf.json': JSON.stringify({ resource: { terraform_data: { x: {} } } }),
    });
    const report = await runContractCheck({ root: tree.root, env: tree.env });
    assert.equal(report.status, 'pass', formatContractTable(report));
  });

  for (const version of ['1.4.7', '2.0.0']) {
    test(`terraform ${version} is refused, naming the version and what is supported`, async (t) => {
      const tree = await imageTree(t, POOL_MODULE);
      const fake = await terraformReporting(t, version);
      const report = await runContractCheck({
        root: tree.root,
        terraformPath: fake.terraformPath,
        env: { ...tree.env, ...fake.env },
      });
      const check = byName(report).terraform!;
      assert.equal(check.status, 'fail');
      assert.match(check.message, new RegExp(`Terraform ${version.replace(/\./g, '\\.')} is not supported`));
      assert.match(check.message, /Terraform >= 1\.5\.0 < 2\.0\.0 or OpenTofu >= 1\.6\.0 < 2\.0\.0/);
      assert.equal(report.terraform, undefined);
      assert.equal(byName(report).init!.status, 'skip');
    });
  }

  test('a missing terraform says how to fix it', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    const report = await runContractCheck({
      root: tree.root,
      terraformPath: join(tree.root, 'no/terraform'),
      env: tree.env,
    });
    const check = byName(report).terraform!;
    assert.equal(check.status, 'fail');
    assert.match(check.message, /not an executable file/);
    assert.match(check.message, /--terraform PATH/);
  });

  test('OpenTofu (a stand-in forwarding to terraform) is accepted and drives init and validate', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    const report = await runContractCheck({ root: tree.root, kind: 'pool', terraformPath: FAKE_TOFU, env: tree.env });
    assert.equal(report.status, 'pass', formatContractTable(report));
    assert.deepEqual(report.terraform, { version: '1.8.3', flavor: 'opentofu', path: FAKE_TOFU });
    assert.match(byName(report).terraform!.message, /^OpenTofu 1\.8\.3/);
  });

  test('OpenTofu older than 1.6 is refused', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    const report = await runContractCheck({
      root: tree.root,
      terraformPath: FAKE_TOFU,
      env: { ...tree.env, FAKE_TOFU_VERSION: '1.5.7' },
    });
    assert.match(byName(report).terraform!.message, /OpenTofu 1\.5\.7 is not supported/);
  });

  test('required variables per kind', async (t) => {
    const tree = await imageTree(t, {
      'main.tf':
        'variable "bootstrap_data" {}\n# variable "captf_cluster_outputs" {}\nresource "terraform_data" "x" {}\n',
    });
    const check = async (kind: 'cluster' | 'machine' | 'pool') =>
      byName(await runContractCheck({ root: tree.root, kind, env: tree.env, cheapOnly: false })).variables!;
    assert.equal((await check('cluster')).status, 'pass');
    assert.equal((await check('machine')).status, 'pass');
    const pool = await check('pool');
    assert.equal(pool.status, 'fail');
    assert.match(pool.message, /a pool module must declare variable "captf_cluster_outputs"/);
    assert.doesNotMatch(pool.message, /bootstrap_data/);
    assert.match(pool.fix!, /variable "captf_cluster_outputs" \{\}/);
  });

  const backendCases: Array<[string, Record<string, string>, RegExp]> = [
    ['no backend at all', { 'main.tf': 'resource "terraform_data" "x" {}\n' }, /declares no backend/],
    [
      'a backend outside backend.tf',
      { 'main.tf': 'terraform {\n  backend "kubernetes" {}\n}\nresource "terraform_data" "x" {}\n' },
      /declares backend "kubernetes", but not in backend\.tf/,
    ],
    [
      'backend.tf with more than the backend',
      { 'backend.tf': 'terraform {\n  backend "kubernetes" {}\n}\nresource "terraform_data" "x" {}\n' },
      /backend\.tf holds more than the backend block/,
    ],
  ];
  for (const [what, module, message] of backendCases) {
    test(`backend: ${what}`, async (t) => {
      const tree = await imageTree(t, module);
      const check = byName(await runContractCheck({ root: tree.root, env: tree.env })).backend!;
      assert.equal(check.status, 'fail');
      assert.match(check.message, message);
      assert.match(check.fix!, /alone in backend\.tf/);
    });
  }

  test("backend: a local backend without an absolute path fails (the state would be in the runner's workdir), one with an absolute path passes", async (t) => {
    for (const [settings, status, message] of [
      [
        '',
        'fail',
        /backend\.tf: backend "local" sets no path: terraform keeps the state in terraform\.tfstate in the module dir, which in a run is the runner's copy of the module in its workdir/,
      ],
      [
        '    path = "sub/state.tfstate"\n',
        'fail',
        /keeps the state at path = "sub\/state\.tfstate", relative to the module dir/,
      ],
      [
        '    path = "/var/lib/captf/terraform.tfstate"\n',
        'pass',
        /backend "local" in backend\.tf \(the state at \/var\/lib\/captf\/terraform\.tfstate, which must be on a volume that outlives the pod\)/,
      ],
    ] as const) {
      const tree = await imageTree(t, {
        ...POOL_MODULE,
        'backend.tf': `terraform {\n  backend "local" {\n${settings}  }\n}\n`,
      });
      const check = byName(await runContractCheck({ root: tree.root, env: tree.env })).backend!;
      assert.equal(check.status, status, check.message);
      assert.match(check.message, message);
      if (status === 'fail') {
        assert.match(check.fix!, /absolute path on a volume that outlives the pod/);
        assert.deepEqual(
          check.problems!.map((p) => [p.file, p.line]),
          [['backend.tf', 2]],
        );
      }
    }
  });

  test("a module that names the runner's reserved record: each file and line, and the fix", async (t) => {
    const tree = await imageTree(t, {
      ...POOL_MODULE,
      'moves.tf': 'moved {\n  from = terraform_data.machine\n  to   = terraform_data.captf_inputs_hash\n}\n',
      'more.tf.json':
        '{\n  "removed": [{"from": "terraform_data . captf_inputs_hash"}],\n  "import": {"to": "terraform_data.captf_inputs_hash[\\"a\\"]", "id": "x"}\n}\n',
    });
    const report = await runContractCheck({ root: tree.root, kind: 'pool', env: tree.env });
    assert.equal(report.status, 'fail');
    const check = byName(report).reserved!;
    assert.equal(check.status, 'fail');
    assert.equal(
      check.message,
      'the module names what the runner reserves for its inputs-hash record (terraform_data.captf_inputs_hash, var.captf_inputs_hash): ' +
        `${join(tree.module, 'more.tf.json')}:2: removed { from = terraform_data.captf_inputs_hash }; ` +
        `${join(tree.module, 'more.tf.json')}:3: import { to = terraform_data.captf_inputs_hash["a"] }; ` +
        `${join(tree.module, 'moves.tf')}:3: moved { to = terraform_data.captf_inputs_hash }`,
    );
    assert.match(
      check.fix!,
      /^rename or remove those blocks: .*no moved, removed or import block may name terraform_data\.captf_inputs_hash, with or without an index$/,
    );
  });

  test('the reserved resource and variable, declared by the module', async (t) => {
    const tree = await imageTree(t, {
      ...POOL_MODULE,
      'own.tf': 'variable "captf_inputs_hash" {}\nresource "terraform_data" "captf_inputs_hash" {}\n',
    });
    const check = byName(await runContractCheck({ root: tree.root, env: tree.env, cheapOnly: true })).reserved!;
    assert.equal(check.status, 'fail');
    assert.match(
      check.message,
      /own\.tf:1: variable "captf_inputs_hash"; .*own\.tf:2: resource "terraform_data" "captf_inputs_hash"$/,
    );
  });

  test('a backend in an override file fails the backend check, file and line named', async (t) => {
    const tree = await imageTree(t, {
      ...POOL_MODULE,
      'zz_override.tf': 'terraform {\n  backend "local" {\n    path = "/elsewhere.tfstate"\n  }\n}\n',
    });
    const check = byName(await runContractCheck({ root: tree.root, env: tree.env })).backend!;
    assert.equal(check.status, 'fail');
    assert.equal(
      check.message,
      `the module sets its backend in an override file: ${join(tree.module, 'zz_override.tf')}:2: backend "local"`,
    );
    assert.doesNotMatch(check.message, /elsewhere/, 'never a config value');
    assert.match(check.fix!, /belongs in backend\.tf alone/);
  });

  test("the files check: a file named like the runner's own and a link leading outside the module, each named with the fix", async (t) => {
    const tree = await imageTree(t, { ...POOL_MODULE, 'captf_runner_backend_override.tf': "# the module's own\n" });
    await writeFile(join(tree.root, 'outside.tf'), 'resource "terraform_data" "outside" {}\n');
    await symlink('../../outside.tf', join(tree.module, 'extra.tf'));
    const report = await runContractCheck({ root: tree.root, env: tree.env, cheapOnly: true });
    const check = byName(report).files!;
    assert.equal(check.status, 'fail');
    assert.equal(report.status, 'fail');
    assert.match(
      check.message,
      new RegExp(
        `${join(tree.module, 'captf_runner_backend_override.tf')} is named like a file the runner adds to its copy`,
      ),
    );
    assert.match(
      check.message,
      new RegExp(
        `${join(tree.module, 'extra.tf')} is a symbolic link that leads outside the module dir \\(to /outside\\.tf\\)`,
      ),
    );
    assert.match(
      check.fix!,
      /rename or remove the files named like the runner's own .*; put what the links outside the module lead to into the module dir/,
    );
  });

  test('a provider missing from the mirror fails init, with the mirror as the fix', async (t) => {
    const tree = await imageTree(t, { ...NEEDS_NULL_PROVIDER, '.terraform.lock.hcl': NULL_LOCK_FILE });
    const report = await runContractCheck({ root: tree.root, env: tree.env });
    assert.equal(report.status, 'fail');
    assert.equal(byName(report).lockfile!.status, 'pass');
    const init = byName(report).init!;
    assert.equal(init.status, 'fail');
    assert.match(init.message, /hashicorp\/null/);
    assert.match(init.fix!, /\/usr\/share\/terraform\/plugins/);
    assert.equal(byName(report).validate!.status, 'skip');
  });

  test('a module needing a provider has to ship a lock file', async (t) => {
    const tree = await imageTree(t, NEEDS_NULL_PROVIDER);
    const report = await runContractCheck({ root: tree.root, env: tree.env });
    const lockfile = byName(report).lockfile!;
    assert.equal(lockfile.status, 'fail');
    assert.match(lockfile.message, /\.terraform\.lock\.hcl missing; the module requires hashicorp\/null$/);
    assert.match(lockfile.fix!, /providers lock/);
  });

  test('an invalid module fails validate', async (t) => {
    const tree = await imageTree(t, {
      ...POOL_MODULE,
      'main.tf': 'resource "terraform_data" "x" {\n  input = var.nope\n}\n',
    });
    const report = await runContractCheck({ root: tree.root, env: tree.env });
    assert.equal(byName(report).init!.status, 'pass');
    assert.equal(byName(report).validate!.status, 'fail');
    assert.match(byName(report).validate!.message, /undeclared input variable|Reference to undeclared/i);
  });

  test('a workdir that cannot be written', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    const file = join(tree.root, 'a-file');
    await writeFile(file, '');
    const report = await runContractCheck({ root: tree.root, workdir: join(file, 'work'), env: tree.env });
    assert.equal(byName(report).workdir!.status, 'fail');
    assert.match(byName(report).workdir!.message, /a-file\/work is not writable: ENOTDIR/);
  });

  test('a writable --workdir with a TMPDIR that cannot be written fails, naming TMPDIR (terraform is read through sockets there)', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    const file = join(tree.root, 'a-file');
    await writeFile(file, '');
    const before = process.env.TMPDIR;
    process.env.TMPDIR = join(file, 'tmp');
    let check;
    try {
      check = byName(await runContractCheck({ root: tree.root, workdir: join(tree.root, 'work'), env: tree.env }))
        .workdir!;
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
    assert.equal(check.status, 'fail');
    assert.match(
      check.message,
      /workdir .*\/work is writable .*; TMPDIR .*a-file\/tmp \(where terraform's output is read through sockets.* is not writable: ENOTDIR/,
    );
  });

  test('a workdir that does not exist yet passes when it can be created, and is not created', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    const workdir = join(tree.root, 'not/yet');
    const check = byName(await runContractCheck({ root: tree.root, workdir, env: tree.env })).workdir!;
    assert.equal(check.status, 'pass');
    assert.match(check.message, /will be created in /);
    assert.equal(existsSync(join(tree.root, 'not')), false);
  });

  test('the checks leave the module dir as they found it', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    await runContractCheck({ root: tree.root, env: tree.env });
    assert.deepEqual((await readdir(tree.module)).sort(), Object.keys(POOL_MODULE).sort());
  });
});

describe('the contract check command line', () => {
  // The module tree is this test's (no tini or captf-runner on its PATH): only the module checks matter.
  const contractCheck = async (
    tree: { root: string; env: Record<string, string> },
    args: string[],
    env: Record<string, string> = {},
  ) => {
    const run = await runProcess(
      process.execPath,
      [RUNNER, 'contract', 'check', '--json', '--root', tree.root, ...args],
      { env: { ...tree.env, ...env } },
    );
    return {
      exitCode: run.exitCode,
      report: run.stdout ? (JSON.parse(run.stdout) as ContractReport) : undefined,
      stderr: run.stderr,
    };
  };

  test('the kind and the module come from flags or from CAPTF_ variables, flags first', async (t) => {
    const tree = await imageTree(t, { 'main.tf': 'variable "bootstrap_data" {}\nresource "terraform_data" "x" {}\n' });
    const fromEnv = await contractCheck(tree, [], { CAPTF_KIND: 'pool' });
    assert.equal(byName(fromEnv.report!).variables!.status, 'fail', 'CAPTF_KIND=pool asks for the pool variables');
    const flagFirst = await contractCheck(tree, ['--kind', 'machine'], { CAPTF_KIND: 'pool' });
    assert.equal(byName(flagFirst.report!).variables!.status, 'pass', '--kind machine wins over CAPTF_KIND');
    // A module path is a path in the image, under --root.
    await writeTree(join(tree.root, 'other/module'), POOL_MODULE);
    const moved = await contractCheck(tree, [], { CAPTF_KIND: 'pool', CAPTF_MODULE: '/other/module' });
    assert.equal(moved.report!.module, join(tree.root, 'other/module'));
    assert.equal(byName(moved.report!).variables!.status, 'pass');
  });

  test("a source tree's relative --module and --policy (the README's CI step) resolve from the working directory", async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    await writeTree(join(tree.root, 'policy'), {
      'p.yaml': 'apiVersion: policy.captf.io/v1\nrules:\n- name: r\n  match: change.kind == "delete"\n  effect: nope\n',
    });
    const run = await runProcess(
      process.execPath,
      [RUNNER, 'contract', 'check', '--json', '--module', './captf/module', '--policy', './policy'],
      { cwd: tree.root, env: tree.env },
    );
    const report = JSON.parse(run.stdout) as ContractReport;
    assert.equal(report.module, tree.module);
    const policy = byName(report).policy!;
    assert.equal(policy.status, 'fail', policy.message);
    assert.ok(policy.message.includes(`${join(tree.root, 'policy', 'p.yaml')} rule "r"`), policy.message);
  });

  test('a module that names the reserved record exits 4, naming the file and line', async (t) => {
    const tree = await imageTree(t, {
      ...POOL_MODULE,
      'moves.tf': 'moved {\n  from = terraform_data.machine\n  to   = terraform_data.captf_inputs_hash\n}\n',
    });
    const run = await contractCheck(tree, ['--kind', 'pool']);
    assert.equal(run.exitCode, 4);
    assert.match(
      run.stderr,
      /^captf-runner contract check: the image breaks the runner contract: the report names each failed check and its fix$/,
    );
    const check = byName(run.report!).reserved!;
    assert.equal(check.status, 'fail');
    assert.ok(
      check.message.endsWith(`${join(tree.module, 'moves.tf')}:3: moved { to = terraform_data.captf_inputs_hash }`),
      check.message,
    );
    assert.match(check.fix!, /rename or remove that block/);
  });

  test('an unknown kind is a usage error naming the kinds', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    const run = await contractCheck(tree, [], { CAPTF_KIND: 'banana' });
    assert.equal(run.exitCode, 2);
    assert.match(run.stderr, /^captf-runner contract check: --kind must be cluster, machine or pool, not "banana"$/);
    assert.equal(run.report, undefined, 'nothing checked');
  });
});

describe('the cheap part every op runs first', () => {
  test('checks only terraform and the module files, without init', async (t) => {
    const tree = await imageTree(t, NEEDS_NULL_PROVIDER); // init would fail: the cheap part never gets there
    const report = await runContractCheck({ root: tree.root, env: tree.env, cheapOnly: true });
    assert.deepEqual(statuses(report), { terraform: 'pass', module: 'pass', reserved: 'pass', files: 'pass' });
    assert.equal(report.status, 'pass');
  });

  test('relative module paths resolve against the working directory', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    const cwd = process.cwd();
    process.chdir(tree.root);
    t.after(() => process.chdir(cwd));
    const report = await runContractCheck({ moduleDir: 'captf/module', env: tree.env, cheapOnly: true });
    assert.equal(report.module, tree.module);
    assert.equal(report.status, 'pass');
  });
});

describe('contract check of this machine as the image', () => {
  test('adds the entrypoint and non-root checks', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    const bin = await entrypointBin(t);
    const report = await runContractCheck({
      moduleDir: tree.module,
      env: { ...tree.env, PATH: `${bin}:${tree.env.PATH}` },
    });
    assert.equal(byName(report).entrypoint!.status, 'pass');
    const asRoot = process.getuid?.() === 0;
    assert.equal(byName(report).user!.status, asRoot ? 'fail' : 'pass');
    if (asRoot) assert.match(byName(report).user!.fix!, /runAsNonRoot/);
  });

  test('an entrypoint that does not run is a violation', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    const bin = await entrypointBin(t, 1);
    const report = await runContractCheck({
      moduleDir: tree.module,
      env: { ...tree.env, PATH: `${bin}:${tree.env.PATH}` },
    });
    assert.equal(byName(report).entrypoint!.status, 'fail');
    assert.match(byName(report).entrypoint!.message, /captf-runner --help` failed/);
  });

  test('no entrypoint on PATH', async (t) => {
    const tree = await imageTree(t, POOL_MODULE);
    const terraformDir = dirname(resolveExecutable('terraform', process.env.PATH)!);
    const report = await runContractCheck({ moduleDir: tree.module, env: { ...tree.env, PATH: terraformDir } });
    assert.match(byName(report).entrypoint!.message, /tini and captf-runner not found/);
  });
});
