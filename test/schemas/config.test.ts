import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { durationMs, envName, loadSettings } from '../../src/schemas/config.ts';

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
