// OpenTofu state encryption: which ops refuse to keep state copies in clear, which warn (pure).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encryptionSettings, plaintextBackupDecision } from '../../src/guard/plaintext-backups.ts';
import type { Op } from '../../src/schemas/result.ts';

describe('plaintext backups under OpenTofu state encryption', () => {
  it('names every setting: the module blocks and TF_ENCRYPTION', () => {
    assert.deepEqual(
      encryptionSettings([{ file: '/m/enc.tf', line: 3 }], { TF_ENCRYPTION: 'key_provider "pbkdf2" "k" {}' }),
      ['/m/enc.tf:3: terraform { encryption }', 'TF_ENCRYPTION in the environment'],
    );
    assert.deepEqual(
      encryptionSettings([], { TF_ENCRYPTION: '' }),
      [],
      'an empty TF_ENCRYPTION configures nothing (OpenTofu reads it only when non-empty)',
    );
  });

  it('apply, plan and restore refuse unless allowed; destroy warns; the others proceed; nothing configured: all proceed', () => {
    const settings = ['TF_ENCRYPTION in the environment'];
    for (const op of ['apply', 'plan', 'restore'] as Op[]) {
      const refused = plaintextBackupDecision(op, settings, false);
      assert.equal(refused.action, 'refuse', op);
      assert.match(
        refused.action === 'refuse' ? refused.message : '',
        /TF_ENCRYPTION in the environment.*decrypted.*Nothing was touched\. Pass --allow-plaintext-backups \(CAPTF_ALLOW_PLAINTEXT_BACKUPS=true\)/,
      );
      assert.equal(plaintextBackupDecision(op, settings, true).action, 'warn', op);
    }
    assert.equal(plaintextBackupDecision('destroy', settings, false).action, 'warn');
    for (const op of ['refresh', 'drift', 'unlock'] as Op[])
      assert.equal(plaintextBackupDecision(op, settings, false).action, 'proceed', op);
    for (const op of ['apply', 'plan', 'restore', 'destroy'] as Op[])
      assert.deepEqual(plaintextBackupDecision(op, [], false), { action: 'proceed' });
  });
});
