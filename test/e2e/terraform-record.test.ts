// The image build's record of the terraform it verified (runner/terraform-record.sh, written beside
// the runner's entry; src/terraform/verified-record.ts): while the binary at the recorded path is the
// recorded file, the runner starts no `version` launch; any other path or file is asked as before.
// The binary is the real terraform behind test/support/newer-terraform.sh, whose log shows every
// launch; the runner is a copy of the built bundle, so the record sits beside its entry as in the image.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, chmod, copyFile, cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Result } from '../../src/schemas/result.ts';
import { runProcess } from '../support/exec.ts';
import {
  modules,
  NEWER_TERRAFORM,
  readNewerTerraformLog,
  tempDir,
  testTerraformEnv,
  TERRAFORM,
  writeTree,
} from '../support/tf-modules.ts';
import { RUNNER } from '../support/runner.ts';

const RECORD_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '../../runner/terraform-record.sh');

interface Setup {
  dir: string;
  entry: string;
  record: string;
  /** The recorded binary: the wrapper, at a path of the setup's own. */
  binary: string;
}

let setup: Setup;
let runs = 0;

/** One run of the copied runner with `binary` as its terraform: its exit code, result and the launches the wrapper logged. */
async function run(op: string, binary: string, tfvars: string) {
  const n = ++runs;
  const where = join(setup.dir, `run-${n}`);
  const log = join(where, 'terraform.log');
  await writeTree(join(where, 'module'), modules.base);
  await writeTree(join(where, 'inputs'), { 'terraform.tfvars.json': tfvars });
  const args = [
    op,
    '--kind',
    'cluster',
    '--module',
    join(where, 'module'),
    '--inputs',
    join(where, 'inputs'),
    '--state',
    join(where, 'terraform.tfstate'),
    '--new-state',
  ];
  const child = await runProcess(
    process.execPath,
    [setup.entry, ...args, '--out', join(where, 'out'), '--terraform', binary],
    {
      cwd: where,
      env: testTerraformEnv({ NEWER_TF_REAL: TERRAFORM, NEWER_TF_LOG: log }),
      timeoutMs: 120_000,
    },
  );
  const result = JSON.parse(await readFile(join(where, 'out', 'result.json'), 'utf8')) as Result;
  return {
    exitCode: child.exitCode,
    result,
    launches: await readNewerTerraformLog(log),
    stderr: child.stderr,
    state: join(where, 'terraform.tfstate'),
  };
}

/** Inputs that fail the inputs step, the one after preflight: a run that proves only how preflight learned the version. */
const STOP_AFTER_PREFLIGHT = '[1]';

describe('the image build’s record of its verified terraform', () => {
  before(async () => {
    const dir = await tempDir(undefined, 'captf-record-');
    const lib = join(dir, 'lib');
    await cp(dirname(RUNNER), lib, { recursive: true });
    const binary = join(dir, 'bin', 'terraform');
    await mkdir(join(dir, 'bin'));
    await copyFile(NEWER_TERRAFORM, binary);
    await chmod(binary, 0o755);
    const record = join(lib, 'terraform-verified.json');
    const made = await runProcess('sh', [RECORD_SCRIPT, binary, binary], {
      env: testTerraformEnv({ NEWER_TF_REAL: TERRAFORM }),
    });
    assert.equal(made.exitCode, 0, made.stderr);
    await writeFile(record, made.stdout);
    setup = { dir, entry: join(lib, 'captf-runner.mjs'), record, binary };
  });
  after(() => rm(setup.dir, { recursive: true, force: true }));

  it('the recorded binary, still that file: an apply starts no version launch and reports the recorded version', async () => {
    const applied = await run('apply', setup.binary, JSON.stringify({ cluster_name: 'demo' }));
    assert.equal(applied.exitCode, 0, applied.stderr);
    assert.equal(applied.result.outcome, 'succeeded');
    assert.deepEqual(applied.result.terraform, { version: '1.11.4', flavor: 'terraform' });
    assert.ok(!applied.launches.includes('version'), `launches: ${applied.launches.join(', ')}`);
    assert.match(applied.stderr, /the binary the image build verified, answered from its record \(no version launch\)/);
    assert.ok(applied.launches.includes('apply'), `the real terraform ran the apply: ${applied.launches.join(', ')}`);
    const state = JSON.parse(await readFile(applied.state, 'utf8')) as {
      terraform_version: string;
      resources: unknown[];
    };
    assert.equal(state.terraform_version, '1.11.4');
    assert.ok(state.resources.length > 0, 'the apply left its resources in the state');
  });

  it('the same bytes at another path (as --terraform gives one) are asked', async () => {
    const other = join(setup.dir, 'bin', 'terraform-elsewhere');
    await copyFile(setup.binary, other);
    await chmod(other, 0o755);
    const asked = await run('apply', other, STOP_AFTER_PREFLIGHT);
    assert.equal(asked.launches[0], 'version', `launches: ${asked.launches.join(', ')}`);
    assert.doesNotMatch(asked.stderr, /answered from its record/);
    assert.deepEqual(asked.result.terraform, { version: '1.11.4', flavor: 'terraform' });
  });

  it('a record that is not the file is asked: another record, a file writable by others, a changed byte, bytes appended', async () => {
    const original = await readFile(setup.binary);
    const recordText = await readFile(setup.record, 'utf8');
    const asked = async (why: string) => {
      const r = await run('apply', setup.binary, STOP_AFTER_PREFLIGHT);
      assert.equal(r.launches[0], 'version', `${why}: launches ${r.launches.join(', ')}`);
      assert.deepEqual(r.result.terraform, { version: '1.11.4', flavor: 'terraform' }, why);
    };
    // Control: the unchanged file and record are trusted on this same short run.
    const trusted = await run('apply', setup.binary, STOP_AFTER_PREFLIGHT);
    assert.ok(!trusted.launches.includes('version'), `launches: ${trusted.launches.join(', ')}`);
    assert.deepEqual(trusted.result.terraform, { version: '1.11.4', flavor: 'terraform' });

    await writeFile(setup.record, recordText.replace('Terraform v1.11.4', 'Terraform v1.11.4 with more'));
    await asked('a record that does not parse');
    await writeFile(setup.record, recordText);

    await chmod(setup.binary, 0o775);
    await asked('writable by its group');
    await chmod(setup.binary, 0o755);

    const changed = Buffer.from(original);
    changed[changed.indexOf('newer one')] = 'N'.charCodeAt(0);
    await writeFile(setup.binary, changed);
    await asked('one byte changed, the same size');

    await writeFile(setup.binary, original);
    await appendFile(setup.binary, '# 16 more bytes\n');
    await asked('bytes appended');
    await writeFile(setup.binary, original);
  });
});
