// CAPTF_TEST_TERRAFORM picks the terraform every test runs (tf-modules.ts): run in a child process,
// since the choice is made once, when tf-modules.ts loads.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from './tf-modules.ts';

const PROBE = `
import { execa } from 'execa';
import { tmpdir } from 'node:os';
import { runTestTerraform, testTerraformEnv, TERRAFORM } from ${JSON.stringify(new URL('./tf-modules.ts', import.meta.url).href)};
const direct = await runTestTerraform(tmpdir(), ['version']);
const byName = await execa('terraform', ['version'], { env: testTerraformEnv(), extendEnv: false });
console.log(JSON.stringify({ TERRAFORM, direct: direct.stdout, byName: byName.stdout }));
`;

/** The repository's root: where tsx and execa resolve. */
const ROOT = new URL('../..', import.meta.url).pathname;
const probe = (env: Record<string, string>) =>
  execa(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROBE], {
    env: { ...process.env, ...env },
    cwd: ROOT,
    reject: false,
  });

describe('CAPTF_TEST_TERRAFORM', () => {
  it("a binary of another name (tofu) is what runTestTerraform and every `terraform` on the tests' PATH run", async (t) => {
    const dir = await tempDir(t);
    const tofu = join(dir, 'tofu');
    await writeFile(tofu, '#!/bin/sh\necho "stand-in $*"\n');
    await chmod(tofu, 0o755);
    const run = await probe({ CAPTF_TEST_TERRAFORM: tofu });
    assert.equal(run.exitCode, 0, run.stderr);
    const seen = JSON.parse(run.stdout);
    assert.deepEqual([seen.direct, seen.byName], ['stand-in version', 'stand-in version']);
    assert.match(seen.TERRAFORM, /\/terraform$/);
  });

  it('a path that is not an executable is refused with the fix', async (t) => {
    const dir = await tempDir(t);
    const run = await probe({ CAPTF_TEST_TERRAFORM: join(dir, 'missing') });
    assert.notEqual(run.exitCode, 0);
    assert.match(
      run.stderr,
      /CAPTF_TEST_TERRAFORM=.*missing: .*Set it to the absolute path of a terraform or OpenTofu binary/,
    );
  });
});
