// scanModule reads regular files only: what is no regular file (a FIFO, a directory, a broken link,
// a link to a device) is left to the module-tree walk, which names it; a configuration file above
// the bound is refused with its name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runChecked } from '../support/exec.ts';
import { MAX_CONFIG_FILE_BYTES, scanModule } from '../../src/workspace/config-files.ts';
import { RunnerError } from '../../src/errors.ts';

async function moduleDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'captf-scan-'));
  await writeFile(join(dir, 'main.tf'), 'resource "terraform_data" "a" {\n  input = "x"\n}\n');
  return dir;
}

describe('scanModule and what is no regular file', () => {
  it('skips a FIFO (without waiting for a writer), a directory, a broken link and a link to /dev/zero named *.tf', {
    timeout: 10_000,
  }, async () => {
    const dir = await moduleDir();
    await runChecked('mkfifo', [join(dir, 'fifo.tf')]);
    await mkdir(join(dir, 'dir.tf'));
    await symlink('/nonexistent/captf', join(dir, 'broken.tf'));
    await symlink('/dev/zero', join(dir, 'zero.tf.json'));
    assert.deepEqual((await scanModule(dir)).resources, ['terraform_data.a']);
  });

  it('reads a link to a regular file inside the module as that file', async () => {
    const dir = await moduleDir();
    await mkdir(join(dir, 'shared'));
    await writeFile(join(dir, 'shared', 'b.tf'), 'resource "terraform_data" "b" {}\n');
    await symlink('shared/b.tf', join(dir, 'b.tf'));
    assert.deepEqual((await scanModule(dir)).resources.sort(), ['terraform_data.a', 'terraform_data.b']);
  });

  it(`refuses a configuration file above ${MAX_CONFIG_FILE_BYTES} bytes, named (ImageInvalid)`, async () => {
    const dir = await moduleDir();
    await writeFile(join(dir, 'huge.tf'), '');
    await truncate(join(dir, 'huge.tf'), MAX_CONFIG_FILE_BYTES + 1); // sparse
    await assert.rejects(
      scanModule(dir),
      (error: unknown) =>
        error instanceof RunnerError &&
        error.reason === 'ImageInvalid' &&
        error.message.includes(join(dir, 'huge.tf')) &&
        /larger than 16777216 bytes/.test(error.message),
    );
  });
});
