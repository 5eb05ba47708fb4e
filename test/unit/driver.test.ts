import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { terraformEnv } from '../../src/terraform/exec.ts';
import { interpretExit } from '../../src/terraform/terraform.ts';
import { planArgs } from '../../src/terraform/plan.ts';
import { applyArgs } from '../../src/terraform/apply.ts';
import { initArgs } from '../../src/terraform/init.ts';
import { detectLockError } from '../../src/terraform/lock.ts';
import { withSerial } from '../../src/state/serial.ts';
import { durationMs, envName, loadSettings } from '../../src/schemas/config.ts';
import { exitCodeOf } from '../../src/run/exit-codes.ts';
import { RunnerError } from '../../src/errors.ts';

describe('driver: arguments and environment', () => {
  it('builds argument arrays, never a shell string', () => {
    assert.deepEqual(planArgs({ out: '/p', varFiles: ['/v.json'], vars: { captf_inputs_hash: 'h' }, lockTimeout: '30s', destroy: true }), [
      'plan', '-input=false', '-no-color', '-detailed-exitcode', '-out=/p', '-lock-timeout=30s', '-destroy', '-var-file=/v.json', '-var', 'captf_inputs_hash=h',
    ]);
    assert.deepEqual(applyArgs({ planFile: '/p' }), ['apply', '-input=false', '-no-color', '/p']);
    assert.deepEqual(initArgs({ backendConfigs: ['a.hcl'], lockfileReadonly: true }), ['init', '-input=false', '-no-color', '-lockfile=readonly', '-backend-config=a.hcl']);
  });

  it('removes what would change terraform behind the runner and marks automation', () => {
    const env = terraformEnv({ PATH: '/bin', TF_CLI_ARGS: '-x', TF_CLI_ARGS_plan: '-y', TF_VAR_secret: 's', TF_WORKSPACE: 'w', TF_LOG: 'trace', TF_DATA_DIR: 'd', AWS_REGION: 'eu', TF_PLUGIN_CACHE_DIR: '/c' });
    assert.deepEqual(Object.keys(env).sort(), ['AWS_REGION', 'CHECKPOINT_DISABLE', 'PATH', 'TF_INPUT', 'TF_IN_AUTOMATION', 'TF_PLUGIN_CACHE_DIR']);
    assert.equal(env.TF_IN_AUTOMATION, '1');
  });

  it('interprets exit codes in one place', () => {
    assert.equal(interpretExit('plan', 2, true), 'changes');
    assert.equal(interpretExit('plan', 2, false), 'error');
    assert.equal(interpretExit('apply', 2), 'error');
    assert.equal(interpretExit('plan', 0, true), 'ok');
    assert.equal(interpretExit('plan', 1, true), 'error');
  });

  it('reads the lock holder from the local backend, and never from pg', () => {
    const local = `Error: Error acquiring the state lock\n\nError message: resource temporarily unavailable\nLock Info:\n  ID:        1b2c\n  Path:      terraform.tfstate\n  Operation: OperationTypeApply\n  Who:       runner@pod\n  Version:   1.11.4\n  Created:   2026-11-30 01:00:00 UTC\n`;
    assert.deepEqual(detectLockError(local), { holderKnown: true, id: '1b2c', path: 'terraform.tfstate', operation: 'OperationTypeApply', who: 'runner@pod', created: '2026-11-30 01:00:00 UTC' });
    const pg = `Error: Error acquiring the state lock\n\nError message: Workspace is already locked: default\nLock Info:\n  ID:        9999\n  Who:       me@here\n`;
    assert.deepEqual(detectLockError(pg), { holderKnown: false });
    assert.equal(detectLockError('Error: something else'), undefined);
  });
});

describe('state: serial rewrite', () => {
  it('changes only the top-level serial, byte for byte', () => {
    const text = '{\n  "version": 4,\n  "serial": 7,\n  "lineage": "l",\n  "resources": [{"instances":[{"attributes":{"serial":3,"big":123456789012345678901234567890}}]}]\n}\n';
    assert.equal(withSerial(text, 12), text.replace('"serial": 7', '"serial": 12'));
    assert.throws(() => withSerial('{"version":4}', 1), RunnerError);
  });
});

describe('settings', () => {
  it('takes a flag, else CAPTF_*, else the default', () => {
    assert.equal(envName('approvedHash'), 'CAPTF_APPROVED_HASH');
    const s = loadSettings({ kind: 'pool' }, { CAPTF_KIND: 'machine', CAPTF_MODULE: '/m', CAPTF_BACKEND_CONFIG: 'a.hcl,b.hcl' });
    assert.equal(s.kind, 'pool');
    assert.equal(s.module, '/m');
    assert.deepEqual(s.backendConfig, ['a.hcl', 'b.hcl']);
    assert.equal(s.inputs, '/captf/inputs');
  });

  it('--allow-plaintext-backups: a boolean flag, or CAPTF_ALLOW_PLAINTEXT_BACKUPS, default off', () => {
    assert.equal(loadSettings({}, {}).allowPlaintextBackups, false);
    assert.equal(loadSettings({ allowPlaintextBackups: true }, {}).allowPlaintextBackups, true);
    assert.equal(loadSettings({}, { CAPTF_ALLOW_PLAINTEXT_BACKUPS: 'true' }).allowPlaintextBackups, true);
    assert.equal(loadSettings({}, { CAPTF_ALLOW_PLAINTEXT_BACKUPS: 'no' }).allowPlaintextBackups, false);
  });

  it('names the flag and the variable when a value is wrong', () => {
    assert.throws(() => loadSettings({ guard: 'maybe' }, {}), /--guard \(or CAPTF_GUARD\)/);
    assert.throws(() => loadSettings({}, { CAPTF_LOCK_TIMEOUT: 'soon' }), /--lock-timeout \(or CAPTF_LOCK_TIMEOUT\)/);
  });

  it('reads durations as terraform writes them', () => {
    assert.equal(durationMs('1h30m'), 5_400_000);
    assert.equal(durationMs('45s'), 45_000);
  });
});

describe('exit codes', () => {
  it('follow the contract table', () => {
    const e = (kind: ConstructorParameters<typeof RunnerError>[0]['kind'], reason = 'R', detail?: Record<string, unknown>) => new RunnerError({ kind, reason, message: '', detail });
    assert.equal(exitCodeOf('succeeded'), 0);
    assert.equal(exitCodeOf('noChanges'), 0);
    assert.equal(exitCodeOf('failed', e('terraform')), 1);
    assert.equal(exitCodeOf('invalid', e('usage')), 2);
    assert.equal(exitCodeOf('blocked', e('blocked')), 3);
    assert.equal(exitCodeOf('invalid', e('image')), 4);
    assert.equal(exitCodeOf('failed', e('terraform', 'PlanStale')), 5);
    assert.equal(exitCodeOf('interrupted', e('interrupted', 'JobDeadlineExceeded', { cause: 'deadline' })), 124);
    assert.equal(exitCodeOf('interrupted', e('interrupted', 'Interrupted', { cause: 'SIGINT' })), 130);
    assert.equal(exitCodeOf('interrupted', e('interrupted', 'Interrupted', { cause: 'SIGTERM' })), 143);
  });
});
