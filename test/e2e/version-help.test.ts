// The command line's own answers: --version (never starting terraform), --version --json (the
// terraform it finds, or null), no arguments (a usage error) and --help (exit codes, the CAPTF_* rule).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { runRunner } from '../support/runner.ts';
import { fakeTerraformEnv, installFakeTerraform, readFakeTerraformLog, tempDir } from '../support/tf-modules.ts';
import { RESULT_API_VERSION } from '../../src/schemas/result.ts';
import { EXIT } from '../../src/vocabulary/reasons.ts';

const PACKAGE_VERSION = (
  JSON.parse(await readFile(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }
).version;

describe('captf-runner --version, --help and no arguments', () => {
  it('--version prints the runner version and the contract version, and never starts terraform', async (t) => {
    const { binDir } = await installFakeTerraform(t);
    const log = join(await tempDir(t, 'captf-version-'), 'tf.log');
    for (const flag of ['--version', '-V']) {
      const run = await runRunner([flag], {
        PATH: `${binDir}:${process.env.PATH}`,
        CAPTF_TERRAFORM: join(binDir, 'terraform'),
        ...fakeTerraformEnv({ log }),
      });
      assert.equal(run.exitCode, 0, run.stderr);
      assert.equal(run.stdout, `captf-runner ${PACKAGE_VERSION} (contract ${RESULT_API_VERSION})`);
      assert.equal(RESULT_API_VERSION, 'runner.captf.io/v1');
    }
    assert.deepEqual(await readFakeTerraformLog(log), [], 'no terraform started');
  });

  it('--version --json adds the terraform it finds: path, version and flavour (CAPTF_TERRAFORM, else PATH)', async (t) => {
    const onPath = await runRunner(['--version', '--json']);
    assert.equal(onPath.exitCode, 0, onPath.stderr);
    const report = JSON.parse(onPath.stdout) as {
      runner: string;
      contract: string;
      terraform: { path: string; version: string; flavor: string };
    };
    assert.equal(report.runner, PACKAGE_VERSION);
    assert.equal(report.contract, RESULT_API_VERSION);
    assert.deepEqual(
      { version: report.terraform.version, flavor: report.terraform.flavor },
      { version: '1.11.4', flavor: 'terraform' },
    );
    assert.match(report.terraform.path, /^\/.*\/terraform$/);

    // An OpenTofu named terraform is told by what it prints, not by its name.
    const { terraformPath } = await installFakeTerraform(t);
    const tofu = await runRunner(['--json', '--version'], {
      CAPTF_TERRAFORM: terraformPath,
      ...fakeTerraformEnv({ faults: ['version:opentofu'], version: '1.8.3' }),
    });
    assert.equal(tofu.exitCode, 0, tofu.stderr);
    assert.deepEqual(JSON.parse(tofu.stdout).terraform, { path: terraformPath, version: '1.8.3', flavor: 'opentofu' });
  });

  it('--version --json without a terraform still exits 0: terraform is null, and why', async (t) => {
    const empty = await tempDir(t, 'captf-no-tf-');
    const run = await runRunner(['--version', '--json'], { PATH: empty });
    assert.equal(run.exitCode, 0, run.stderr);
    const report = JSON.parse(run.stdout) as { runner: string; terraform: unknown; terraformProblem: string };
    assert.equal(report.runner, PACKAGE_VERSION);
    assert.equal(report.terraform, null);
    assert.match(report.terraformProblem, /terraform not found: "terraform" is not an executable file on PATH/);
  });

  it('no arguments is a usage error: exit 2, the usage on stderr, nothing on stdout', async () => {
    const run = await runRunner([]);
    assert.equal(run.exitCode, EXIT.usage);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^Usage: captf-runner \[options\] \[command\]/);
    const contract = await runRunner(['contract']);
    assert.equal(contract.exitCode, EXIT.usage, 'a command group without its command is one too');
  });

  it('--help names every exit code and the CAPTF_* rule', async () => {
    const run = await runRunner(['--help']);
    assert.equal(run.exitCode, 0, run.stderr);
    for (const code of Object.values(EXIT))
      assert.match(run.stdout, new RegExp(`^  (\\d+ / )?${code}\\b`, 'm'), `exit ${code} is listed`);
    assert.match(
      run.stdout,
      /a flag beats its CAPTF_\* variable, and an op ignores the CAPTF_\* variables of settings it does not take/,
    );
    assert.equal((await runRunner(['help'])).exitCode, 0, '`help` asks for it: no usage error');
  });
});
