// OpenTofu state encryption, end to end with the built runner: `state pull` prints the state
// decrypted, so with an `encryption` block (.tf or .tf.json) or TF_ENCRYPTION set, apply, plan and
// restore refuse before touching state unless --allow-plaintext-backups, and destroy warns and
// proceeds. OpenTofu cannot run here: only the detection is tested (terraform 1.11 ignores
// TF_ENCRYPTION, and would reject the block at validate), and every refusal checks the state.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modules, resourceIds } from '../support/tf-modules.ts';
import { applied, IMAGE } from './apply.support.ts';
import { explain, scenario, type RunnerRun } from '../support/runner.ts';

const TF_ENCRYPTION =
  'key_provider "pbkdf2" "k" { passphrase = "a-passphrase-of-16+" }\nmethod "aes_gcm" "m" { keys = key_provider.pbkdf2.k }\nstate { method = method.aes_gcm.m }';
const HCL_BLOCK = `terraform {
  encryption {
    key_provider "pbkdf2" "k" {
      passphrase = "a-passphrase-of-16+"
    }
  }
}
`;

function assertRefused(run: RunnerRun, names: RegExp) {
  assert.equal(run.exitCode, 4, explain(run));
  const r = run.result!;
  assert.equal(r.outcome, 'invalid');
  assert.equal(r.reason, 'ImageInvalid');
  assert.equal(r.error!.step, 'preflight');
  assert.match(r.message, names);
  assert.match(
    r.message,
    /decrypted.*Nothing was touched\. Pass --allow-plaintext-backups \(CAPTF_ALLOW_PLAINTEXT_BACKUPS=true\)/,
  );
  assert.deepEqual(
    r.steps.map((s) => s.name),
    ['preflight'],
    'refused before init: nothing touched the state',
  );
  assert.equal(r.applied, false);
}

describe('OpenTofu state encryption: no backup in clear without consent', () => {
  it('an encryption block in a .tf file: apply refuses, naming the file and line; no state is written', async (t) => {
    const s = await scenario(t, { ...modules.base, 'encryption.tf': HCL_BLOCK });
    const run = await s.run('apply', ['--image', IMAGE]);
    assertRefused(
      run,
      new RegExp(`${join(s.module, 'encryption.tf').replace(/[.+]/g, '\\$&')}:2: terraform \\{ encryption \\}`),
    );
    assert.equal(existsSync(s.state), false, 'no state was created');
  });

  it('an encryption block in a .tf.json file: plan refuses; no artifact is written', async (t) => {
    const s = await scenario(t, {
      ...modules.base,
      'encryption.tf.json': JSON.stringify({ terraform: { encryption: { state: { enforced: true } } } }, null, 2),
    });
    const artifacts = join(s.dir, 'artifacts');
    const run = await s.run('plan', ['--image', IMAGE, '--artifacts', artifacts]);
    assertRefused(run, /encryption\.tf\.json:3: terraform \{ encryption \}/);
    assert.deepEqual(await readdir(artifacts).catch(() => []), []);
  });

  it('TF_ENCRYPTION: apply refuses; restore refuses, the state untouched; with --allow-plaintext-backups (or its variable) apply runs and warns', async (t) => {
    const s = await applied(t);
    const before = await readFile(s.state);

    assertRefused(
      await s.run('apply', ['--image', 'registry.example/captf-module:2.0.0'], { TF_ENCRYPTION }),
      /TF_ENCRYPTION in the environment/,
    );
    const restore = await s.run('restore', ['--backup', join(s.out, 'backups', 'none')], { TF_ENCRYPTION });
    assertRefused(restore, /TF_ENCRYPTION in the environment/);
    assert.deepEqual(await readFile(s.state), before, 'the state is untouched');

    const allowed = await s.run(
      'apply',
      ['--image', 'registry.example/captf-module:2.0.0', '--allow-plaintext-backups'],
      { TF_ENCRYPTION },
    );
    assert.equal(allowed.exitCode, 0, explain(allowed));
    assert.ok(
      allowed.result!.warnings.some(
        (w) =>
          w.includes('TF_ENCRYPTION in the environment') &&
          w.includes('--allow-plaintext-backups accepts them in clear'),
      ),
      JSON.stringify(allowed.result!.warnings),
    );
    assert.ok(allowed.result!.backup, 'the backup was taken');
    const byVariable = await s.run('plan', ['--image', IMAGE, '--artifacts', join(s.dir, 'artifacts')], {
      TF_ENCRYPTION,
      CAPTF_ALLOW_PLAINTEXT_BACKUPS: 'true',
    });
    assert.equal(byVariable.exitCode, 0, explain(byVariable));
  });

  it('destroy takes its backup with a warning and proceeds (a teardown never wedges)', async (t) => {
    const s = await applied(t);
    const run = await s.run('destroy', ['--image', IMAGE], { TF_ENCRYPTION });
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.reason, 'DestroySucceeded');
    assert.ok(run.result!.backup, 'the backup was taken');
    assert.ok(
      run.result!.warnings.some(
        (w) => w.includes('TF_ENCRYPTION in the environment') && w.includes('The destroy takes its backup in clear'),
      ),
      JSON.stringify(run.result!.warnings),
    );
    assert.deepEqual(resourceIds(await s.readState()), {}, 'everything was destroyed');
  });
});
