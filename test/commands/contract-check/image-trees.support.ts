// Directory trees for contract checks: an image-like root with the module at /captf/module, a
// CLI configuration whose only provider source is an empty filesystem mirror (as in the image),
// and the stand-ins for other terraform versions.
import { createHash } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  fakeTerraformEnv,
  installFakeTerraform,
  tempDir,
  testTerraformEnv,
  writeTree,
  type FileTree,
} from '../../support/tf-modules.ts';

/** Answers `version` as OpenTofu and forwards everything else to terraform (OpenTofu cannot be installed here). */
export const FAKE_TOFU = join(dirname(fileURLToPath(import.meta.url)), 'fake-tofu');

export const POOL_MODULE: FileTree = {
  'backend.tf': 'terraform {\n  backend "kubernetes" {}\n}\n',
  'variables.tf':
    'variable "bootstrap_data" {\n  type      = string\n  sensitive = true\n}\n\nvariable "captf_cluster_outputs" {\n  type = any\n}\n',
  'main.tf': 'resource "terraform_data" "machine" {\n  input = sha256(var.bootstrap_data)\n}\n',
};

export const NEEDS_NULL_PROVIDER: FileTree = {
  'main.tf':
    'terraform {\n  required_providers {\n    null = { source = "hashicorp/null", version = "3.2.0" }\n  }\n}\n\nresource "null_resource" "x" {}\n',
};

/** A lock file for NEEDS_NULL_PROVIDER as test/image/missing-provider ships it. */
export const NULL_LOCK_FILE = `provider "registry.terraform.io/hashicorp/null" {
  version     = "3.2.0"
  constraints = "3.2.0"
  hashes = [
    "h1:RArYhuAfyp9nidTobXvKfwx5ul0B35slKPS0TtsRdO0=",
  ]
}
`;

export interface Tree {
  root: string;
  /** The module dir on disk (root + /captf/module). */
  module: string;
  /** Environment for the check: the image's kind of CLI config, with an empty mirror. */
  env: Record<string, string>;
}

/** An image-like tree; the module is written only when given. */
export async function imageTree(t: TestContext, module?: FileTree): Promise<Tree> {
  const root = await tempDir(t, 'captf-contract-tree-');
  const moduleDir = join(root, 'captf/module');
  if (module) {
    await mkdir(moduleDir, { recursive: true });
    await writeTree(moduleDir, module);
  }
  const mirror = join(root, 'usr/share/terraform/plugins');
  await mkdir(mirror, { recursive: true });
  const rc = join(root, 'etc/captf-runner/terraformrc');
  await mkdir(dirname(rc), { recursive: true });
  await writeFile(
    rc,
    `provider_installation {\n  filesystem_mirror {\n    path    = "${mirror}"\n    include = ["*/*/*"]\n  }\n}\n`,
  );
  return { root, module: moduleDir, env: testTerraformEnv({ TF_CLI_CONFIG_FILE: rc }) };
}

/** The fake terraform reporting VERSION (for versions outside the supported range). */
export async function terraformReporting(
  t: TestContext,
  version: string,
): Promise<{ terraformPath: string; env: Record<string, string> }> {
  const { terraformPath } = await installFakeTerraform(t);
  return { terraformPath, env: fakeTerraformEnv({ version }) };
}

/** A dir holding executables `tini` and `captf-runner` that succeed, as the image's PATH does. */
export async function entrypointBin(t: TestContext, runnerExit = 0): Promise<string> {
  const bin = await tempDir(t, 'captf-entrypoint-');
  for (const [name, exit] of [
    ['tini', 0],
    ['captf-runner', runnerExit],
  ] as const) {
    await writeFile(join(bin, name), `#!/bin/sh\nexit ${exit}\n`);
    await chmod(join(bin, name), 0o755);
  }
  return bin;
}

/**
 * A provider package terraform init accepts from a filesystem mirror (unpacked layout), and the lock
 * file naming its h1 hash (the dirhash of the package's files). It cannot run: init never starts a provider.
 */
export async function fakeNullProvider(mirror: string): Promise<string> {
  const dir = join(mirror, 'registry.terraform.io/hashicorp/null/3.2.0/linux_amd64');
  await mkdir(dir, { recursive: true });
  const name = 'terraform-provider-null_v3.2.0_x5';
  const content = '#!/bin/sh\nexit 1\n';
  await writeFile(join(dir, name), content);
  await chmod(join(dir, name), 0o755);
  const summary = `${createHash('sha256').update(content).digest('hex')}  ${name}\n`;
  const h1 = 'h1:' + createHash('sha256').update(summary).digest('base64');
  return `provider "registry.terraform.io/hashicorp/null" {\n  version     = "3.2.0"\n  constraints = "3.2.0"\n  hashes = [\n    "${h1}",\n  ]\n}\n`;
}
