// contract check's providers check (issue 32): every provider package in the image's mirror is one
// the module's lock file vouches for (its provider, version and hash), or the image is refused (exit 4)
// and nothing from the mirror is installed or started. Hashes as real terraform computes them.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runTestTerraform } from '../support/tf-modules.ts';
import {
  fakeNullProvider,
  imageTree,
  NEEDS_NULL_PROVIDER,
  type Tree,
} from '../commands/contract-check/image-trees.support.ts';
import { runRunner } from '../support/runner.ts';

interface Check {
  name: string;
  status: string;
  message: string;
  problems?: { file: string; message: string }[];
}

async function contractCheck(tree: Tree): Promise<{ exitCode: number; checks: Record<string, Check> }> {
  const run = await runRunner(['contract', 'check', '--json', '--root', tree.root]);
  const checks = (JSON.parse(run.stdout) as { checks: Check[] }).checks;
  return { exitCode: run.exitCode, checks: Object.fromEntries(checks.map((c) => [c.name, c])) };
}

const MIRROR = '/usr/share/terraform/plugins';
const PACKAGE = `${MIRROR}/registry.terraform.io/hashicorp/null/3.2.0/linux_amd64`;

/** A tree whose module needs hashicorp/null 3.2.0, its mirror holding it, locked by terraform itself from that mirror. */
async function lockedTree(t: Parameters<typeof imageTree>[0]): Promise<Tree> {
  const tree = await imageTree(t, NEEDS_NULL_PROVIDER);
  await fakeNullProvider(join(tree.root, MIRROR));
  const lock = await runTestTerraform(tree.module, [
    'providers',
    'lock',
    `-fs-mirror=${join(tree.root, MIRROR)}`,
    '-platform=linux_amd64',
  ]);
  assert.equal(lock.exitCode, 0, lock.stderr);
  return tree;
}

describe("contract check: the mirror's providers against the lock file", () => {
  test('a package whose hash terraform locked passes; the same package changed by one byte is refused, and nothing is installed', async (t) => {
    const tree = await lockedTree(t);
    const locked = await contractCheck(tree);
    assert.equal(locked.checks.providers!.status, 'pass', locked.checks.providers!.message);
    assert.match(
      locked.checks.providers!.message,
      /vouches for every package in \/usr\/share\/terraform\/plugins: registry\.terraform\.io\/hashicorp\/null 3\.2\.0 linux_amd64/,
    );
    assert.equal(locked.checks.init!.status, 'pass');

    await appendFile(join(tree.root, PACKAGE, 'terraform-provider-null_v3.2.0_x5'), '\n');
    const tampered = await contractCheck(tree);
    assert.equal(tampered.exitCode, 4);
    assert.equal(tampered.checks.providers!.status, 'fail');
    assert.equal(tampered.checks.providers!.problems!.length, 1);
    assert.equal(tampered.checks.providers!.problems![0]!.file, PACKAGE);
    assert.match(
      tampered.checks.providers!.problems![0]!.message,
      /^its hash h1:\S+ is not among the lock file's for registry\.terraform\.io\/hashicorp\/null 3\.2\.0$/,
    );
    for (const name of ['init', 'validate'])
      assert.match(
        tampered.checks[name]!.message,
        /not run: the provider mirror holds packages the lock file does not vouch for/,
      );
  });

  test('packages the module does not use are vouched for too: another version, another provider', async (t) => {
    const tree = await lockedTree(t);
    const other = join(tree.root, MIRROR, 'registry.terraform.io/hashicorp/null/3.2.1/linux_amd64');
    await mkdir(other, { recursive: true });
    await writeFile(join(other, 'terraform-provider-null_v3.2.1_x5'), '#!/bin/sh\n');
    const random = join(tree.root, MIRROR, 'registry.terraform.io/hashicorp/random/3.6.0/linux_amd64');
    await mkdir(random, { recursive: true });
    await writeFile(join(random, 'terraform-provider-random_v3.6.0_x5'), '#!/bin/sh\n');

    const { exitCode, checks } = await contractCheck(tree);
    assert.equal(exitCode, 4);
    assert.deepEqual(checks.providers!.problems, [
      {
        file: `${MIRROR}/registry.terraform.io/hashicorp/null/3.2.1/linux_amd64`,
        message: 'the lock file names registry.terraform.io/hashicorp/null 3.2.0, not 3.2.1',
      },
      {
        file: `${MIRROR}/registry.terraform.io/hashicorp/random/3.6.0/linux_amd64`,
        message: 'registry.terraform.io/hashicorp/random is not in the lock file',
      },
    ]);
  });

  test('no lock file: every mirrored package is unvouched, and the lock file check says it could not tell (init did not run)', async (t) => {
    const tree = await imageTree(t, NEEDS_NULL_PROVIDER);
    await fakeNullProvider(join(tree.root, MIRROR));
    const { exitCode, checks } = await contractCheck(tree);
    assert.equal(exitCode, 4);
    assert.deepEqual(checks.providers!.problems, [
      { file: PACKAGE, message: 'registry.terraform.io/hashicorp/null is not in the lock file' },
    ]);
    assert.equal(checks.lockfile!.status, 'skip', checks.lockfile!.message);
    assert.equal(checks.init!.status, 'skip');
  });

  test('a zip (the packed layout `terraform providers mirror` writes) is vouched for by its zh: hash, as the registry lists it', async (t) => {
    const tree = await imageTree(t, NEEDS_NULL_PROVIDER);
    const dir = join(tree.root, MIRROR, 'registry.terraform.io/hashicorp/null');
    await mkdir(dir, { recursive: true });
    const zip = Buffer.from('PK\u0005\u0006 a stand-in for the release zip');
    await writeFile(join(dir, 'terraform-provider-null_3.2.0_linux_amd64.zip'), zip);
    await writeFile(join(dir, 'index.json'), '{"versions":{"3.2.0":{}}}\n'); // the network mirror's index: not a package
    const lock = (hashes: string[]) =>
      `provider "registry.terraform.io/hashicorp/null" {\n  version = "3.2.0"\n  hashes = [${hashes.map((h) => `"${h}"`).join(', ')}]\n}\n`;

    await writeFile(
      join(tree.module, '.terraform.lock.hcl'),
      lock([`zh:${createHash('sha256').update(zip).digest('hex')}`]),
    );
    assert.equal((await contractCheck(tree)).checks.providers!.status, 'pass');

    await writeFile(
      join(tree.module, '.terraform.lock.hcl'),
      lock(['h1:G0xIjL1jTLd5EHfC9oSHhr5wzWs8HFkZl2ml67F4Ph4=']),
    );
    const { exitCode, checks } = await contractCheck(tree);
    assert.equal(exitCode, 4);
    assert.match(
      checks.providers!.problems![0]!.message,
      /^its hash zh:[0-9a-f]{64} is not among the lock file's .*\(a zip is vouched for by its zh: hash, which the lock records when it is made against the registry\)$/,
    );
  });

  test('a lock file that is not as terraform writes it is refused, naming the line', async (t) => {
    const tree = await imageTree(t, NEEDS_NULL_PROVIDER);
    await writeFile(
      join(tree.module, '.terraform.lock.hcl'),
      'provider "registry.terraform.io/hashicorp/null" {\n  version = var.v\n}\n',
    );
    const { exitCode, checks } = await contractCheck(tree);
    assert.equal(exitCode, 4);
    assert.deepEqual(checks.providers!.problems, [
      {
        file: '.terraform.lock.hcl',
        message: 'line 2: unexpected "." (terraform writes provider blocks of plain strings only)',
      },
    ]);
  });
});
