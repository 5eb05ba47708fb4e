// What prepareWorkspace writes for the variables: the override that makes every variable of
// sensitive.tfvars.json sensitive to terraform, and the ephemeral variables' file for the apply.
// (That terraform reads them so is test/e2e/sensitive-inputs.test.ts's.)
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadInputs } from '../../src/inputs/load.ts';
import { prepareWorkspace, RUNNER_FILES } from '../../src/workspace/workspace.ts';
import { scanModule } from '../../src/workspace/config-files.ts';

/** A workspace prepared from `module` (file name → text) and `inputs` (file name → JSON). */
async function workspaceOf(t: TestContext, module: Record<string, string>, inputs: Record<string, unknown>) {
  const dir = await mkdtemp(join(tmpdir(), 'captf-workspace-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const [moduleDir, inputsDir] = [join(dir, 'module'), join(dir, 'inputs')];
  await mkdir(moduleDir);
  await mkdir(inputsDir);
  for (const [name, text] of Object.entries(module)) await writeFile(join(moduleDir, name), text);
  for (const [name, value] of Object.entries(inputs)) await writeFile(join(inputsDir, name), JSON.stringify(value));
  const loaded = await loadInputs(inputsDir, { image: 'img', kind: 'cluster' });
  const workspace = await prepareWorkspace({
    moduleDir,
    scan: await scanModule(moduleDir),
    workdir: join(dir, 'work'),
    statePath: join(dir, 'state.tfstate'),
    inputs: loaded.workspaceInputs,
  });
  t.after(() => workspace.dispose());
  return workspace;
}

describe('workspace: the variables of the inputs', () => {
  it('an override makes each variable of sensitive.tfvars.json that the module declares (in either syntax) sensitive; the ephemeral ones get a file of their own', async (t) => {
    const workspace = await workspaceOf(
      t,
      {
        'main.tf':
          'variable "pw" {}\nvariable "token" {\n  ephemeral = true\n}\nvariable "name" {}\nresource "terraform_data" "a" {}\n',
        'vars.tf.json': JSON.stringify({ variable: { 'json-pw': {}, session: { ephemeral: true } } }),
      },
      {
        'sensitive.tfvars.json': { pw: 'p4ss-word', 'json-pw': 'j50n-pw', session: 'ses-5678', undeclared: 'x' },
        'terraform.tfvars.json': { name: 'n', token: 'tok-1234' },
      },
    );
    assert.deepEqual(workspace.madeSensitive, ['json-pw', 'pw', 'session']);
    assert.deepEqual(
      JSON.parse(await readFile(join(workspace.root, 'captf_runner_sensitive_override.tf.json'), 'utf8')).variable,
      {
        'json-pw': { sensitive: true },
        pw: { sensitive: true },
        session: { sensitive: true },
      },
    );
    assert.deepEqual(workspace.applyVarFiles, [join(workspace.privateDir, 'ephemeral.tfvars.json')]);
    assert.deepEqual(JSON.parse(await readFile(workspace.applyVarFiles[0]!, 'utf8')), {
      session: 'ses-5678',
      token: 'tok-1234',
    });
    assert.equal((await stat(workspace.applyVarFiles[0]!)).mode & 0o777, 0o600);
  });

  it('nothing is written when no variable of sensitive.tfvars.json is declared and none is ephemeral', async (t) => {
    const workspace = await workspaceOf(
      t,
      { 'main.tf': 'variable "name" {}\n' },
      { 'sensitive.tfvars.json': { other: 'secret-x' } },
    );
    assert.deepEqual([workspace.madeSensitive, workspace.applyVarFiles], [[], []]);
    assert.ok(!(await readdir(workspace.root)).some((name) => name.includes('sensitive_override')));
  });

  it('a module may ship no file named like the override, in any spelling terraform or OpenTofu reads', () => {
    for (const name of [
      'captf_runner_sensitive_override.tf',
      'captf_runner_sensitive_override.tf.json',
      'captf_runner_sensitive_override.tofu',
      'captf_runner_sensitive_override.tofu.json',
    ])
      assert.ok(RUNNER_FILES.has(name), name);
  });
});
