// `hash`: the hashes an approval names, and a warning when they cannot be a Job's (no image).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '../support/tf-modules.ts';
import { runRunner } from '../support/runner.ts';

const IMAGE = 'registry.example/captf-module:1.0.0';

async function inputsDir(t: Parameters<typeof tempDir>[0], files: Record<string, string>): Promise<string> {
  const dir = join(await tempDir(t), 'inputs');
  await mkdir(dir);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

describe('hash', () => {
  it('without --image: warns that it hashes an empty image reference, on stderr and in --json', async (t) => {
    const inputs = await inputsDir(t, { 'terraform.tfvars.json': '{"cluster_name": "a"}' });
    const plain = await runRunner(['hash', '--inputs', inputs]);
    assert.equal(plain.exitCode, 0, plain.stderr);
    assert.match(
      plain.stderr,
      /^warning: no --image \(or CAPTF_IMAGE\) was given: these hashes are of an empty image reference/m,
    );
    assert.match(plain.stdout, /^inputs hash: {3}[0-9a-f]{64}\napproval hash: [0-9a-f]{64}$/);
    const json = JSON.parse((await runRunner(['hash', '--inputs', inputs, '--json'])).stdout);
    assert.deepEqual(
      json.notices.map((n: { code: string }) => n.code),
      ['ImageEmpty'],
    );

    const withImage = await runRunner(['hash', '--inputs', inputs, '--image', IMAGE, '--json']);
    assert.equal(withImage.stderr, '');
    const hashes = JSON.parse(withImage.stdout);
    assert.deepEqual(Object.keys(hashes), ['inputsHash', 'approvalHash'], 'no notices: the output as before');
    assert.notEqual(hashes.inputsHash, json.inputsHash, 'the image is part of the hash');
    const fromEnv = await runRunner(['hash', '--inputs', inputs, '--json'], { CAPTF_IMAGE: IMAGE });
    assert.deepEqual(JSON.parse(fromEnv.stdout), hashes, 'CAPTF_IMAGE counts as given');
  });

  it('a terraform.tfvars among the inputs is named, with the file the runner reads instead', async (t) => {
    const inputs = await inputsDir(t, { 'terraform.tfvars': 'cluster_name = "a"\n' });
    const run = await runRunner(['hash', '--inputs', inputs, '--image', IMAGE, '--json']);
    assert.equal(run.exitCode, 0);
    assert.deepEqual(
      JSON.parse(run.stdout).notices.map((n: { code: string }) => n.code),
      ['VariablesFileNotRead'],
    );
    assert.match(
      run.stderr,
      /warning: inputs file "terraform\.tfvars" is not read as variables.*put its variables in terraform\.tfvars\.json/,
    );
  });
});
