// The newer-terraform wrapper: the real terraform, with only what its environment asks for changed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runProcess } from './exec.ts';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  modules,
  NEWER_TERRAFORM,
  newerTerraformEnv,
  readNewerTerraformLog,
  tempDir,
  testTerraformEnv,
  writeTree,
  type NewerTerraformOptions,
} from './tf-modules.ts';

describe('newer-terraform.sh', () => {
  it('adds top-level keys to show -json of a plan, sets the plan exit code and the version, and logs every command', async (t) => {
    const dir = await tempDir(t);
    await writeTree(dir, modules.base);
    const log = join(dir, 'log.jsonl');
    const showAdd = join(dir, 'add.json');
    await writeFile(
      showAdd,
      JSON.stringify({ action_invocations: [{ address: 'action.x.y', invoke_action_trigger: {} }] }),
    );
    const run = (args: string[], options: NewerTerraformOptions = {}) =>
      runProcess(NEWER_TERRAFORM, args, { cwd: dir, env: testTerraformEnv(newerTerraformEnv({ log, ...options })) });

    assert.equal((await run(['init', '-input=false', '-no-color'])).exitCode, 0);
    const planned = await run(['plan', '-input=false', '-no-color', '-detailed-exitcode', '-out=p.tfplan']);
    assert.equal(planned.exitCode, 2, planned.stderr);
    assert.equal(
      (await run(['plan', '-input=false', '-no-color', '-detailed-exitcode', '-out=p.tfplan'], { planExit: 0 }))
        .exitCode,
      0,
      'exit 2 made 0',
    );
    const shown = JSON.parse((await run(['show', '-json', 'p.tfplan'], { showAdd })).stdout);
    assert.deepEqual(shown.action_invocations, [{ address: 'action.x.y', invoke_action_trigger: {} }]);
    assert.ok(shown.resource_changes.length > 0, 'the real document is kept');
    assert.equal(
      JSON.parse((await run(['version', '-json'], { version: '1.14.0' })).stdout).terraform_version,
      '1.14.0',
    );
    assert.match((await run(['version'], { version: '1.14.0' })).stdout, /^Terraform v1\.14\.0$/m);
    assert.deepEqual(await readNewerTerraformLog(log), ['init', 'plan', 'plan', 'show', 'version', 'version']);
    const failed = await run(['plan', '-input=false', '-detailed-exitcode', '-var', 'nope=1'], { planExit: 2 });
    assert.equal(failed.exitCode, 1, 'a failed plan keeps its code');
  });
});
