import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { withSerial } from '../../src/state/serial.ts';
import { durationMs, envName, loadSettings } from '../../src/schemas/config.ts';
import { exitCodeOf } from '../../src/run/exit-codes.ts';
import { RunnerError } from '../../src/errors.ts';

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
    const s = loadSettings('apply', { kind: 'pool' }, { CAPTF_KIND: 'machine', CAPTF_MODULE: '/m', CAPTF_BACKEND_CONFIG: 'a.hcl,b.hcl' });
    assert.equal(s.kind, 'pool');
    assert.equal(s.module, '/m');
    assert.deepEqual(s.backendConfig, ['a.hcl', 'b.hcl']);
    assert.equal(s.inputs, '/captf/inputs');
  });

  it('--allow-plaintext-backups: a boolean flag, or CAPTF_ALLOW_PLAINTEXT_BACKUPS, default off', () => {
    assert.equal(loadSettings('apply', {}, {}).allowPlaintextBackups, false);
    assert.equal(loadSettings('apply', { allowPlaintextBackups: true }, {}).allowPlaintextBackups, true);
    assert.equal(loadSettings('apply', {}, { CAPTF_ALLOW_PLAINTEXT_BACKUPS: 'true' }).allowPlaintextBackups, true);
    assert.equal(loadSettings('apply', {}, { CAPTF_ALLOW_PLAINTEXT_BACKUPS: 'no' }).allowPlaintextBackups, false);
  });

  it('names the flag and the variable when a value is wrong', () => {
    assert.throws(() => loadSettings('apply', { guard: 'maybe' }, {}), /--guard \(or CAPTF_GUARD\)/);
    assert.throws(() => loadSettings('apply', {}, { CAPTF_LOCK_TIMEOUT: 'soon' }), /--lock-timeout \(or CAPTF_LOCK_TIMEOUT\)/);
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
    assert.equal(exitCodeOf('failed', e('artifact', 'ArtifactMismatch')), 5);
    assert.equal(exitCodeOf('failed', e('plan', 'RefreshRefused')), 4);
    assert.equal(exitCodeOf('invalid', e('usage', 'InputsInvalid')), 2);
    assert.equal(exitCodeOf('interrupted', e('interrupted', 'JobDeadlineExceeded', { cause: 'deadline' })), 124);
    assert.equal(exitCodeOf('interrupted', e('interrupted', 'Interrupted', { cause: 'SIGINT' })), 130);
    assert.equal(exitCodeOf('interrupted', e('interrupted', 'Interrupted', { cause: 'SIGTERM' })), 143);
  });
});
