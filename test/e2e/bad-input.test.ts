// Bad input: a clear message naming what is wrong and how to fix it, a well-formed result, the
// documented exit code, and nothing applied.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Result } from '../../src/schemas/result.ts';
import { modules } from '../support/tf-modules.ts';
import { explain, runRunner, scenario } from '../support/runner.ts';

describe('bad input', () => {
  const cases: {
    name: string;
    exit: number;
    reason: RegExp;
    message: RegExp;
    prepare?: (dir: string) => Promise<string[]>;
    args?: string[];
    inputs?: Record<string, string>;
  }[] = [
    {
      name: 'malformed terraform.tfvars.json',
      exit: 2,
      reason: /InputsInvalid/,
      message: /terraform\.tfvars\.json.*not valid JSON/,
      inputs: { 'terraform.tfvars.json': '{"cluster_name": ' },
    },
    {
      name: 'tfvars that is not an object',
      exit: 2,
      reason: /InputsInvalid/,
      message: /not an object/,
      inputs: { 'terraform.tfvars.json': '[1, 2]' },
    },
    {
      name: 'an unknown --kind',
      exit: 2,
      reason: /SettingsInvalid/,
      message: /--kind \(or CAPTF_KIND\)/,
      args: ['--kind', 'server'],
    },
    {
      name: 'an unknown --guard value',
      exit: 2,
      reason: /SettingsInvalid/,
      message: /--guard/,
      args: ['--guard', 'maybe'],
    },
    {
      name: 'the guard turned off for a cluster',
      exit: 2,
      reason: /GuardRequired/,
      message: /cannot be turned off for a cluster/,
      args: ['--kind', 'cluster', '--guard', 'off'],
    },
    {
      name: 'the guard turned off without a kind (a cluster by default)',
      exit: 2,
      reason: /GuardRequired/,
      message: /drop --guard off/,
      args: ['--guard', 'off'],
    },
    ...(
      [
        ['../x', /"\.\.\/x" is not a Kubernetes object name: a DNS-1123 subdomain/],
        ['a/b', /"a\/b" is not a Kubernetes object name/],
        ['x'.repeat(300), /"x{64}"… \(300 characters\) is not a Kubernetes object name: .*at most 253 characters/],
        ['Prod', /"Prod" is not a Kubernetes object name: .*lowercase letters/],
      ] as const
    ).map(([object, message]) => ({
      name: `--object ${object.length > 20 ? `of ${object.length} characters` : object}`,
      exit: 2,
      reason: /SettingsInvalid/,
      message: new RegExp(`^invalid settings: --object \\(or CAPTF_OBJECT\\): ${message.source}`),
      args: ['--object', object],
    })),
    {
      name: 'a --namespace that is no DNS-1123 label',
      exit: 2,
      reason: /SettingsInvalid/,
      message:
        /^invalid settings: --namespace \(or CAPTF_NAMESPACE\): "team\.a" is not a Kubernetes namespace: a DNS-1123 label/,
      args: ['--object', 'prod', '--namespace', 'team.a'],
    },
    {
      name: '--store without --namespace outside a cluster',
      exit: 2,
      reason: /StoreNeedsObject/,
      message:
        /--store keeps backups and plan artifacts per CAPTF object, by its namespace, kind and name: pass --namespace NS/,
      args: ['--object', 'prod', '--store', 's3://captf-artifacts/fleet'],
    },
    {
      name: 'an unknown flag',
      exit: 2,
      reason: /UsageInvalid/,
      message: /unknown option '--frobnicate'/,
      args: ['--frobnicate'],
    },
    {
      name: 'a --deadline that leaves no time to run',
      exit: 2,
      reason: /SettingsInvalid/,
      message:
        /--deadline 25s leaves the run no time: it stops itself at the deadline − --stop-grace \(20s\) − 5s .*Give a --deadline longer than 25s/,
      args: ['--deadline', '25s'],
    },
    {
      name: 'an inputs dir that does not exist',
      exit: 2,
      reason: /InputsInvalid/,
      message: /inputs/,
      args: ['--inputs', '/nonexistent/inputs'],
    },
    {
      name: 'a --module that does not exist (a typo on the command line, not the image)',
      exit: 2,
      reason: /ModuleDirMissing/,
      message: /^--module \/nonexistent\/module does not exist: check the path/,
      args: ['--module', '/nonexistent/module'],
    },
    {
      name: 'an unknown flag a letter short of one',
      exit: 2,
      reason: /UsageInvalid/,
      message: /^unknown option '--modul' \(Did you mean --module\?\): see captf-runner apply --help$/,
      args: ['--modul', '/nonexistent/module'],
    },
    {
      name: 'a module dir without .tf files',
      exit: 4,
      reason: /ImageInvalid/,
      message: /no \.tf files/,
      prepare: async (dir) => {
        await mkdir(join(dir, 'empty-module'), { recursive: true });
        return ['--module', join(dir, 'empty-module')];
      },
    },
    {
      name: 'no terraform',
      exit: 4,
      reason: /ImageInvalid/,
      message: /terraform not found.*--terraform PATH/,
      args: ['--terraform', '/nonexistent/terraform'],
    },
    {
      name: 'an unsupported terraform version',
      exit: 4,
      reason: /ImageInvalid/,
      message: /0\.12\.31/,
      prepare: async (dir) => {
        const fake = join(dir, 'old-terraform');
        await writeFile(
          fake,
          '#!/bin/sh\nif [ "$2" = "-json" ]; then echo \'{"terraform_version":"0.12.31"}\'; else echo "Terraform v0.12.31"; fi\n',
        );
        await chmod(fake, 0o755);
        return ['--terraform', fake];
      },
    },
  ];

  for (const c of cases) {
    it(`${c.name}: exit ${c.exit}, an invalid result, nothing applied`, async (t) => {
      const s = await scenario(t, modules.base, c.inputs ?? {});
      const extra = c.prepare ? await c.prepare(s.dir) : (c.args ?? []);
      const run = await s.run('apply', extra);
      assert.equal(run.exitCode, c.exit, explain(run));
      assert.ok(run.result, 'result.json is written');
      Result.parse(run.result);
      assert.equal(run.result!.outcome, 'invalid');
      assert.match(run.result!.reason, c.reason);
      assert.match(run.result!.message, c.message);
      assert.equal(run.result!.applied, false);
      assert.ok(!existsSync(s.state), 'nothing was applied');
    });
  }

  it("the module dir of the environment (CAPTF_MODULE, as a Job sets it) missing is the image's fault: exit 4", async (t) => {
    const s = await scenario(t, modules.base);
    const args = s.runArgs('apply');
    args.splice(args.indexOf('--module'), 2);
    const run = await runRunner(args, { CAPTF_MODULE: join(s.dir, 'nonexistent') }, s);
    assert.equal(run.exitCode, 4, explain(run));
    assert.equal(run.result!.reason, 'ImageInvalid');
    assert.match(run.result!.message, /does not exist: put the module at \/captf\/module in the image/);
  });

  it('an empty --out: exit 2, the termination message still says why', async (t) => {
    const s = await scenario(t, modules.base);
    const run = await s.run('apply', ['--out', '']);
    assert.equal(run.exitCode, 2, explain(run));
    assert.doesNotMatch(run.stderr, /internal error/);
    const termination = JSON.parse(await readFile(s.termination, 'utf8')) as {
      outcome: string;
      reason: string;
      message: string;
    };
    assert.equal(termination.outcome, 'invalid');
    assert.equal(termination.reason, 'SettingsInvalid');
    assert.match(termination.message, /--out \(or CAPTF_OUT\)/);
    assert.equal(
      Result.parse(JSON.parse(await readFile(join(s.dir, 'result.json'), 'utf8'))).reason,
      'SettingsInvalid',
      'result.json goes to the default out dir, the working directory',
    );
    assert.ok(!existsSync(s.state), 'nothing was applied');
  });

  it('an empty --termination-log: exit 2, result.json still says why', async (t) => {
    const s = await scenario(t, modules.base);
    const run = await s.run('apply', ['--termination-log', '']);
    assert.equal(run.exitCode, 2, explain(run));
    assert.equal(Result.parse(run.result).reason, 'SettingsInvalid');
    assert.match(run.result!.message, /--termination-log \(or CAPTF_TERMINATION_LOG\)/);
  });

  it('an unknown subcommand exits 2', async () => {
    const run = await runRunner(['frobnicate']);
    assert.equal(run.exitCode, 2);
    assert.equal(run.stderr, "error: unknown command 'frobnicate'\nsee captf-runner --help");
  });

  it('a refused command line: the error and one line pointing at --help, never the whole help; an op without --out leaves no result.json where it was typed', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'captf-usage-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const where = { out: join(dir, 'unused'), termination: join(dir, 'termination'), dir };
    const op = await runRunner(['apply', '--frobnicate', '--termination-log', where.termination], {}, where);
    assert.equal(op.exitCode, 2, op.stderr);
    assert.deepEqual(await readdir(dir), ['termination'], 'no result.json in the working directory');
    assert.match(
      op.stdout,
      /^captf-runner apply: invalid \(UsageInvalid\)\nunknown option '--frobnicate': see captf-runner apply --help\n/,
    );
    assert.match(
      await readFile(where.termination, 'utf8'),
      /"reason":"UsageInvalid"/,
      'the termination message still says why',
    );
    for (const [args, hint] of [
      [['classify', 'x.json', '--nope'], 'captf-runner classify'],
      [['contract', 'check', '--nope'], 'captf-runner contract check'],
      [['hash', '--kind'], 'captf-runner hash'],
    ] as const) {
      const run = await runRunner([...args]);
      assert.equal(run.exitCode, 2, run.stderr);
      assert.match(run.stderr, new RegExp(`^error: [^\\n]+\\nsee ${hint} --help$`), run.stderr);
    }
    for (const run of [op, await runRunner(['classify'])])
      assert.doesNotMatch(run.stderr + run.stdout, /Options:|Usage:/, 'never the whole help');
  });

  it('classify and hash refuse bad input with exit 2', async (t) => {
    const s = await scenario(t, modules.base, { 'terraform.tfvars.json': '{' });
    const hash = await runRunner(['hash', '--inputs', s.inputs, '--json']);
    assert.equal(hash.exitCode, 2);
    assert.match(hash.stderr, /terraform\.tfvars\.json/);
    const badKind = await runRunner(['hash', '--inputs', s.inputs, '--kind', 'server', '--json']);
    assert.equal(badKind.exitCode, 2);
    assert.match(badKind.stderr, /--kind \(or CAPTF_KIND\)/);
    const missing = await runRunner(['classify', join(s.dir, 'nope.json'), '--json']);
    assert.equal(missing.exitCode, 2);
    await writeFile(join(s.dir, 'truncated.json'), '{"format_version":"1.2","resource_changes":[{"address":');
    const truncated = await runRunner(['classify', join(s.dir, 'truncated.json'), '--json']);
    assert.equal(truncated.exitCode, 2);
    assert.match(truncated.stderr, /byte/);
    const badLimit = await runRunner(['classify', join(s.dir, 'truncated.json'), '--limit', 'many']);
    assert.equal(badLimit.exitCode, 2);
    assert.equal(badLimit.stderr, 'captf-runner classify: --limit must be a whole number, not "many"');
    assert.match(
      missing.stderr,
      /^captf-runner classify: cannot read .*nope\.json \(ENOENT\): pass the path of a terraform show -json document$/,
    );
  });

  it("classify of a saved plan, plan -json's output, a state and a state's JSON (terraform 1.11's own): exit 2, each named with the command that makes a plan's JSON", async () => {
    const fixtures = join(import.meta.dirname, '..', 'fixtures', 'not-a-plan');
    const expected: Record<string, string> = {
      'saved.tfplan':
        'is a binary plan file (terraform plan -out), not the JSON document of a plan: make its JSON document with terraform show -json PLANFILE > plan.json, and classify that',
      'plan-json.jsonl':
        "is terraform plan -json's output (its messages, one JSON object a line), not the JSON document of a plan: make it with terraform plan -out=PLANFILE, then terraform show -json PLANFILE > plan.json, and classify that",
      'terraform.tfstate': 'is a terraform state (terraform.tfstate), not the JSON document of a plan',
      'show-state.json':
        'is the JSON of a state (terraform show -json without a plan file), not the JSON document of a plan',
    };
    for (const [name, said] of Object.entries(expected)) {
      const run = await runRunner(['classify', join(fixtures, name), '--detailed-exitcode']);
      assert.equal(run.exitCode, 2, `${name}: ${run.stderr}`);
      assert.ok(
        run.stderr.startsWith(`captf-runner classify: ${join(fixtures, name)} ${said}`),
        `${name}: ${run.stderr}`,
      );
      assert.equal(run.stdout, '');
    }
  });
});
