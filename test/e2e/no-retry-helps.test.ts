// Failures that no retry fixes never exit 1 (a controller retries exit 1 forever): a plan that fails
// on the inputs exits 2 and on the module 4, with the file and line terraform points at; a --state
// or --backend-config that init would refuse on every retry is refused in preflight, before anything
// runs. A diagnostic the runner cannot tell apart stays exit 1. The real terraform, each.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { explain, scenario, type RunnerRun } from '../support/runner.ts';
import { greetingPrecondition, type FileTree } from '../support/tf-modules.ts';

const hcl = (...lines: string[]) => `${lines.join('\n')}\n`;

/** A resource whose precondition reads `condition`, over var.greeting (and local.shout, its upper case). */
const precondition = (condition: string) => greetingPrecondition(condition, { shout: true });

/** A resource reading a script with file(), the path chosen by `key`; the module ships only scripts/control-plane.sh. */
const fileOf = (key: 'var.role' | 'each.key'): FileTree => ({
  'main.tf': hcl(
    'variable "role" {',
    '  type    = string',
    '  default = "control-plane"',
    '}',
    '',
    'resource "terraform_data" "this" {',
    ...(key === 'each.key' ? ['  for_each = toset(["control-plane", "worker"])'] : []),
    `  input = file("\${path.module}/scripts/\${${key}}.sh")`,
    '}',
  ),
  'scripts/control-plane.sh': 'echo control plane\n',
});

function assertFailedAt(run: RunnerRun, expected: { exit: number; reason: string; step: string; names?: string }) {
  assert.equal(run.exitCode, expected.exit, explain(run));
  assert.equal(run.result!.reason, expected.reason, explain(run));
  assert.equal(run.result!.error!.step, expected.step);
  assert.equal(run.result!.applied, false);
  if (expected.names) assert.ok(run.result!.message.includes(expected.names), run.result!.message);
}

describe('a plan that fails on the inputs or the module is told so: exit 2 or 4, never 1', () => {
  it('a precondition that reads only variables: the inputs (exit 2), naming its file and line; the same condition over a local stays retryable (exit 1)', async (t) => {
    const s = await scenario(t, precondition('length(var.greeting) > 10'), {
      'terraform.tfvars.json': { greeting: 'hello' },
    });
    const inputs = await s.run('apply');
    assertFailedAt(inputs, {
      exit: 2,
      reason: 'InputsInvalid',
      step: 'plan',
      names: 'main.tf:14: Resource precondition failed: The greeting must be longer than 10 characters.',
    });
    assert.equal(inputs.result!.outcome, 'invalid');
    assert.deepEqual(
      (inputs.result!.error!.detail!.diagnostics as { file?: string; line?: number }[]).map((d) => [d.file, d.line]),
      [['main.tf', 14]],
    );
    assert.ok(!existsSync(s.state), 'nothing was applied');

    await s.useModule(precondition('length(local.shout) > 10'));
    const unknown = await s.run('apply');
    assertFailedAt(unknown, { exit: 1, reason: 'PlanFailed', step: 'plan' });
  });

  it("file() of a file the module does not ship: the inputs' when a variable chooses the path (exit 2), the module's when it alone does (exit 4)", async (t) => {
    const s = await scenario(t, fileOf('var.role'), { 'terraform.tfvars.json': { role: 'worker' } });
    assertFailedAt(await s.run('apply'), {
      exit: 2,
      reason: 'InputsInvalid',
      step: 'plan',
      names: 'main.tf:7: Invalid function argument',
    });
    await s.useModule(fileOf('each.key'));
    const module = await s.run('apply');
    assertFailedAt(module, {
      exit: 4,
      reason: 'ImageInvalid',
      step: 'plan',
      names: 'main.tf:8: Invalid function argument',
    });
    assert.match(module.result!.message, /Ship the file in the module/);
    // The file the inputs name, shipped: the same inputs apply.
    await s.useModule(fileOf('var.role'));
    await s.setInputs({ 'terraform.tfvars.json': { role: 'control-plane' } });
    const shipped = await s.run('apply');
    assert.equal(shipped.exitCode, 0, explain(shipped));
  });
});

describe('what init would refuse on every retry is refused in preflight, nothing run (exit 2)', () => {
  it('a --state that is a directory', async (t) => {
    const s = await scenario(t, fileOf('var.role'));
    for (const args of [
      ['--state', s.dir],
      ['--state', s.dir, '--new-state'],
    ]) {
      const run = await s.run('apply', args);
      assertFailedAt(run, { exit: 2, reason: 'SettingsInvalid', step: 'preflight' });
      assert.match(run.result!.message, /--state .* is a directory, not a state file/);
      assert.deepEqual(
        run.result!.steps.map((step) => step.name),
        ['preflight'],
      );
    }
  });

  it('a --backend-config file that does not exist, or is a directory; a relative one is read from the working directory', async (t) => {
    // The module's own local backend, its path given by the backend config file (as a Job passes CAPTF_BACKEND_CONFIG).
    const s = await scenario(t, {
      ...fileOf('var.role'),
      'backend.tf': hcl('terraform {', '  backend "local" {}', '}'),
    });
    for (const [value, said] of [
      ['missing.hcl', /--backend-config missing\.hcl \(.*missing\.hcl\) does not exist/],
      [join(s.dir, 'state'), /is a directory/],
    ] as const) {
      const run = await s.runOwnBackend('apply', ['--backend-config', value]);
      assertFailedAt(run, { exit: 2, reason: 'SettingsInvalid', step: 'preflight' });
      assert.match(run.result!.message, said);
    }
    await mkdir(join(s.dir, 'config'));
    await writeFile(join(s.dir, 'config', 'backend.hcl'), `path = ${JSON.stringify(s.state)}\n`);
    // The runner's working directory is the scenario's dir: terraform, in the workdir, would not find it there.
    const run = await s.runOwnBackend('apply', ['--backend-config', join('config', 'backend.hcl')]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.ok(existsSync(s.state), 'the state is where the relative backend config says');
    // KEY=VALUE is terraform's, never a file.
    const pair = await s.runOwnBackend('apply', ['--backend-config', `path=${s.state}`]);
    assert.equal(pair.exitCode, 0, explain(pair));
    assert.equal(pair.result!.outcome, 'noChanges');
  });
});
