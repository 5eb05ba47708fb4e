// terraform's diagnostics through the built runner and the real terraform: a failure that recurs on
// every retry exits 4 (the module) or 2 (the inputs) naming where terraform points, any other keeps
// exit 1; error.detail.diagnostics never names the workdir or a value; nothing is applied.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Result } from '../../src/schemas/result.ts';
import { explain, scenario, type RunnerRun } from '../support/runner.ts';

const hcl = (...lines: string[]) => `${lines.join('\n')}\n`;
const replicas = hcl(
  'variable "replicas" {',
  '  type = number',
  '}',
  '',
  'resource "terraform_data" "this" {',
  '  input = var.replicas',
  '}',
);
const SECRET = 'S3CRET-PIN-VALUE-e2e';

async function refused(
  run: RunnerRun,
  expected: { exitCode: number; reason: string; step: string; names: string },
  where: { state: string; termination: string },
) {
  assert.equal(run.exitCode, expected.exitCode, explain(run));
  const result = Result.parse(run.result);
  assert.equal(result.outcome, 'invalid');
  assert.equal(result.reason, expected.reason);
  assert.equal(result.error!.step, expected.step);
  assert.ok(result.message.includes(expected.names), result.message);
  // The summary on stdout names it too.
  assert.ok(run.stdout.includes(expected.names), run.stdout.slice(-1500));
  assert.equal(result.applied, false);
  assert.ok(!existsSync(where.state), 'nothing was applied');
  const termination = JSON.parse(await readFile(where.termination, 'utf8'));
  assert.equal(termination.exitCode, expected.exitCode);
  assert.equal(termination.reason, expected.reason);
  return result.error!.detail!.diagnostics!;
}

describe('terraform diagnostics: exit codes that say whether a retry can help', () => {
  it('an unclosed block: exit 4 ImageInvalid at init, naming main.tf and its line', async (t) => {
    const s = await scenario(t, {
      'main.tf': hcl(
        'resource "terraform_data" "a" {',
        '  input = "a"',
        '}',
        '',
        'resource "terraform_data" "b" {',
        '  input = "b"',
      ),
    });
    const diagnostics = await refused(
      await s.run('apply'),
      { exitCode: 4, reason: 'ImageInvalid', step: 'init', names: 'main.tf:5: Unclosed configuration block' },
      s,
    );
    assert.deepEqual(diagnostics.map((d) => [d.summary, d.file, d.line]).at(-1), [
      'Unclosed configuration block',
      'main.tf',
      5,
    ]);
  });

  it("every configuration error init reports is the module's: exit 4 naming file and line in the message, error.detail.diagnostics and both summaries", async (t) => {
    const resource = (...body: string[]) => hcl('resource "terraform_data" "this" {', ...body, '}');
    const cases: [name: string, tree: Record<string, string>, names: string, line: number][] = [
      ['an argument without a value', { 'main.tf': resource('  input =') }, 'main.tf:2: Invalid expression', 2],
      [
        'an unterminated string',
        { 'main.tf': resource('  input = "hello') },
        'main.tf:2: Invalid multi-line string',
        2,
      ],
      [
        'a stray closing brace',
        { 'main.tf': `${resource('  input = "hello"')}}\n` },
        'main.tf:4: Argument or block definition required',
        4,
      ],
      [
        'a block type terraform does not know',
        { 'main.tf': hcl('resrouce "terraform_data" "this" {', '}') },
        'main.tf:1: Unsupported block type',
        1,
      ],
      [
        "a syntax error in a called module's file",
        { 'main.tf': hcl('module "net" {', '  source = "./net"', '}'), 'net/main.tf': resource('  input =') },
        'net/main.tf:2: Invalid expression',
        2,
      ],
    ];
    const s = await scenario(t, cases[0]![1]);
    for (const [name, tree, names, line] of cases) {
      await s.useModule(tree);
      const summaryMd = join(s.dir, `summary-${line}-${name.length}.md`);
      const run = await s.run('plan', ['--artifacts', join(s.dir, 'artifacts'), '--summary-md', summaryMd]);
      const diagnostics = await refused(run, { exitCode: 4, reason: 'ImageInvalid', step: 'init', names }, s);
      const file = names.split(':')[0];
      assert.ok(
        diagnostics.some((d) => d.severity === 'error' && d.file === file && d.line === line),
        `${name}: ${JSON.stringify(diagnostics)}`,
      );
      assert.match(
        run.stdout,
        new RegExp(`^terraform error: ${names.replace(/[.]/g, '\\.')}`, 'm'),
        `${name}: the summary lists where terraform points\n${run.stdout}`,
      );
      const markdown = await readFile(summaryMd, 'utf8');
      assert.ok(markdown.includes(`\`${file}:${line}\``), `${name}: the Markdown names the place\n${markdown}`);
      assert.doesNotMatch(run.stdout, /retry can help/, name);
    }
  });

  it("an error validate reports at a line of the module is the module's too, whatever terraform calls it", async (t) => {
    const s = await scenario(t, {
      'main.tf': hcl('resource "terraform_data" "this" {', '  input = upper("a", "b")', '}'),
    });
    const diagnostics = await refused(
      await s.run('apply'),
      { exitCode: 4, reason: 'ImageInvalid', step: 'validate', names: 'main.tf:2: ' },
      s,
    );
    assert.equal(diagnostics[0]!.line, 2);
  });

  it('a reference to an undeclared resource: exit 4 ImageInvalid at validate', async (t) => {
    const s = await scenario(t, {
      'main.tf': hcl('resource "terraform_data" "this" {', '  input = terraform_data.missing.output', '}'),
    });
    const diagnostics = await refused(
      await s.run('apply'),
      { exitCode: 4, reason: 'ImageInvalid', step: 'validate', names: 'main.tf:2: Reference to undeclared resource' },
      s,
    );
    assert.deepEqual(diagnostics, [
      {
        severity: 'error',
        summary: 'Reference to undeclared resource',
        detail: 'A managed resource "terraform_data" "missing" has not been declared in the root module.',
        file: 'main.tf',
        line: 2,
      },
    ]);
  });

  it('a required variable without a value: exit 2 InputsInvalid at plan', async (t) => {
    const s = await scenario(t, { 'main.tf': replicas });
    const diagnostics = await refused(
      await s.run('apply'),
      { exitCode: 2, reason: 'InputsInvalid', step: 'plan', names: 'main.tf:1: No value for required variable' },
      s,
    );
    assert.equal(diagnostics.length, 1);
    assert.equal(diagnostics[0]!.file, 'main.tf');
  });

  it("a value of the wrong type: exit 2, naming the inputs file and the variable, never the runner's copy or the value", async (t) => {
    const s = await scenario(t, { 'main.tf': replicas }, { 'terraform.tfvars.json': { replicas: 'three-nodes' } });
    const run = await s.run('apply');
    const diagnostics = await refused(
      run,
      { exitCode: 2, reason: 'InputsInvalid', step: 'plan', names: 'terraform.tfvars.json (variable replicas)' },
      s,
    );
    assert.deepEqual(
      diagnostics.map(({ file, line, variable }) => ({ file, line, variable })),
      [{ file: 'terraform.tfvars.json', line: undefined, variable: 'replicas' }],
    );
    const error = JSON.stringify(run.result!.error);
    assert.ok(!error.includes('three-nodes'), error);
    assert.ok(!error.includes(s.dir) && !error.includes('/private/'), error);
  });

  it('a wrong type from sensitive.tfvars.json: exit 2, the value masked in every byte', async (t) => {
    const s = await scenario(t, { 'main.tf': replicas }, { 'sensitive.tfvars.json': { replicas: SECRET } });
    const run = await s.run('apply');
    // Every variable of sensitive.tfvars.json is sensitive to terraform, which then points at its declaration.
    const diagnostics = await refused(
      run,
      { exitCode: 2, reason: 'InputsInvalid', step: 'plan', names: 'main.tf:1 (variable replicas)' },
      s,
    );
    assert.equal(diagnostics[0]!.variable, 'replicas');
    assert.ok(!run.allBytes.includes(SECRET), 'the value is masked everywhere');
  });

  it("a provider the image's mirror lacks, no registry configured: exit 4 ImageInvalid at init", async (t) => {
    const s = await scenario(t, {
      'main.tf': hcl(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws" }',
        '  }',
        '}',
        '',
        'resource "terraform_data" "this" {',
        '  input = "x"',
        '}',
      ),
    });
    // The image's CLI configuration (runner/terraformrc: the filesystem mirror only), the mirror empty.
    const mirror = join(s.dir, 'plugins');
    await mkdir(mirror);
    const rc = join(s.dir, 'terraformrc');
    await writeFile(
      rc,
      (await readFile(new URL('../../runner/terraformrc', import.meta.url), 'utf8')).replace(
        '/usr/share/terraform/plugins',
        mirror,
      ),
    );
    const run = await s.run('apply', [], { TF_CLI_CONFIG_FILE: rc });
    const diagnostics = await refused(
      run,
      { exitCode: 4, reason: 'ImageInvalid', step: 'init', names: 'was not found in any of the search locations' },
      s,
    );
    assert.equal(diagnostics[0]!.summary, 'Failed to query available provider packages');
    assert.match(run.result!.message, /The image must carry the provider in its mirror/);
  });

  it('destroy keeps the reason of the step that failed: a required variable the durable inputs lack is exit 2, the state kept', async (t) => {
    const s = await scenario(t, { 'main.tf': replicas }, { 'terraform.tfvars.json': { replicas: 3 } });
    assert.equal((await s.run('apply')).exitCode, 0);
    const before = await readFile(s.state);
    await s.setInputs({});
    const run = await s.run('destroy');
    assert.equal(run.exitCode, 2, explain(run));
    assert.equal(run.result!.reason, 'InputsInvalid');
    assert.equal(run.result!.error!.step, 'plan');
    assert.ok(run.result!.message.includes('main.tf:1: No value for required variable'), run.result!.message);
    assert.deepEqual(await readFile(s.state), before, 'nothing was destroyed');
  });

  it('a diagnostic not on the list keeps exit 1 (a failed precondition that reads a local), with where terraform points', async (t) => {
    const s = await scenario(t, {
      'main.tf': hcl(
        'variable "greeting" {',
        '  default = "short"',
        '}',
        'locals { greeting = var.greeting }',
        'resource "terraform_data" "this" {',
        '  input = var.greeting',
        '  lifecycle {',
        '    precondition {',
        '      condition     = length(local.greeting) > 10',
        '      error_message = "The greeting must be longer than 10 characters."',
        '    }',
        '  }',
        '}',
      ),
    });
    const run = await s.run('apply');
    assert.equal(run.exitCode, 1, explain(run));
    const result = Result.parse(run.result);
    assert.equal(result.outcome, 'failed');
    assert.equal(result.reason, 'PlanFailed');
    assert.deepEqual(
      result.error!.detail!.diagnostics!.map((d) => [d.summary, d.file, d.line]),
      [['Resource precondition failed', 'main.tf', 9]],
    );
    assert.ok(!existsSync(s.state));
  });
});
