// `contract check --root DIR` checks the tree it was given (issue 26 §3): every symbolic link in it
// resolves inside the tree, as it would in the image, never on this machine; a name that is not
// valid UTF-8 is named as such; problems name the module's files relative to the module dir.
import assert from 'node:assert/strict';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runChecked } from '../support/exec.ts';
import { tempDir, writeTree } from '../support/tf-modules.ts';
import {
  fakeNullProvider,
  imageTree,
  NEEDS_NULL_PROVIDER,
  POOL_MODULE,
} from '../commands/contract-check/image-trees.support.ts';
import { runRunner } from '../support/runner.ts';

interface Report {
  status: string;
  checks: {
    name: string;
    status: string;
    message: string;
    problems?: { file: string; line?: number; message: string }[];
  }[];
}

async function contractCheck(args: string[]): Promise<{ exitCode: number; report: Report; stderr: string }> {
  const run = await runRunner(['contract', 'check', '--json', ...args]);
  return { exitCode: run.exitCode, report: JSON.parse(run.stdout) as Report, stderr: run.stderr };
}

const check = (report: Report, name: string) => report.checks.find((c) => c.name === name)!;

describe('contract check --root: links resolve inside the tree', () => {
  test("an absolute link at captf/module leads to the tree's module, not to the good one at the same path on this machine", async (t) => {
    const good = await tempDir(t, 'captf-host-module-');
    await writeTree(good, POOL_MODULE);
    const tree = await imageTree(t);
    // The tree's own module at the same path: a FIFO where main.tf should be.
    const own = join(tree.root, good);
    await mkdir(own, { recursive: true });
    await writeTree(own, { 'backend.tf': POOL_MODULE['backend.tf']!, 'variables.tf': POOL_MODULE['variables.tf']! });
    await runChecked('mkfifo', [join(own, 'main.tf')]);
    await mkdir(join(tree.root, 'captf'));
    await symlink(good, tree.module);

    const { exitCode, report, stderr } = await contractCheck(['--root', tree.root, '--kind', 'pool']);
    assert.equal(exitCode, 4, stderr);
    assert.match(check(report, 'module').message, new RegExp(`a link to ${good} in the tree`));
    const files = check(report, 'files');
    assert.equal(files.status, 'fail');
    assert.deepEqual(files.problems, [
      { file: 'main.tf', message: 'is neither a file nor a directory (a special file)' },
    ]);
    assert.equal(check(report, 'init').status, 'skip');
  });

  test('absolute links inside the module and `..` above the root resolve in the tree: the module passes as the image would run it', async (t) => {
    const tree = await imageTree(t, {
      'backend.tf': POOL_MODULE['backend.tf']!,
      'real/main.tf': POOL_MODULE['main.tf']!,
      'real/other.tf': 'resource "terraform_data" "other" {}\n',
    });
    await writeFile(join(tree.root, 'variables.tf'), POOL_MODULE['variables.tf']!);
    await symlink('/captf/module/real/main.tf', join(tree.module, 'main.tf'));
    await symlink('../../../../../../../../../captf/module/real/other.tf', join(tree.module, 'other.tf'));
    // A link to the tree's root file: outside the module, named as the image names it.
    await symlink('/variables.tf', join(tree.module, 'variables.tf'));

    const { exitCode, report, stderr } = await contractCheck(['--root', tree.root]);
    assert.equal(exitCode, 4, stderr);
    const files = check(report, 'files');
    assert.deepEqual(files.problems, [
      { file: 'variables.tf', message: 'is a symbolic link that leads outside the module dir (to /variables.tf)' },
    ]);

    await rm(join(tree.module, 'variables.tf'));
    await writeFile(join(tree.module, 'variables.tf'), POOL_MODULE['variables.tf']!);
    const passing = await contractCheck(['--root', tree.root, '--kind', 'pool']);
    assert.equal(passing.exitCode, 0, JSON.stringify(passing.report.checks.filter((c) => c.status === 'fail')));
  });

  test("a provider mirror that is an absolute link leads to the tree's mirror, never to this machine's", async (t) => {
    const hostMirror = await tempDir(t, 'captf-host-mirror-');
    const lock = await fakeNullProvider(hostMirror);
    const tree = await imageTree(t, { ...NEEDS_NULL_PROVIDER, '.terraform.lock.hcl': lock });
    const mirror = join(tree.root, 'usr/share/terraform/plugins');
    await rm(mirror, { recursive: true });
    await symlink(hostMirror, mirror);

    const { exitCode, report, stderr } = await contractCheck(['--root', tree.root]);
    assert.equal(exitCode, 4, stderr);
    assert.equal(check(report, 'init').status, 'fail', "the provider is only in this machine's dir the link names");
    assert.ok(
      !JSON.stringify(report).includes(`search locations - ${hostMirror}`),
      JSON.stringify(check(report, 'init')),
    );
  });
});

describe('contract check: names and paths in the report', () => {
  test('a name that is not valid UTF-8 is named as such (not ENOENT), and problems name files relative to the module dir', async (t) => {
    const tree = await imageTree(t, { ...POOL_MODULE, 'own.tf': 'resource "terraform_data" "captf_inputs_hash" {}\n' });
    await writeFile(
      Buffer.concat([Buffer.from(join(tree.module, 'bad-')), Buffer.from([0xff]), Buffer.from('.tf')]),
      '',
    );

    const { exitCode, report, stderr } = await contractCheck(['--root', tree.root]);
    assert.equal(exitCode, 4, stderr);
    assert.deepEqual(check(report, 'files').problems, [
      { file: 'bad-\\xff.tf', message: 'has a name that is not valid UTF-8' },
    ]);
    assert.deepEqual(check(report, 'reserved').problems, [
      { file: 'own.tf', line: 1, message: 'resource "terraform_data" "captf_inputs_hash"' },
    ]);
  });
});
