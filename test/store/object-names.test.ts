import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { objectStorePrefix } from '../../src/store/object-names.ts';
import { OBJECT_KINDS } from '../../src/object-kind.ts';

describe('objectStorePrefix: the key of one CAPTF object in a store', () => {
  it('names the family, the kind, the namespace and the object', () => {
    assert.equal(objectStorePrefix('plan', 'cluster', 'team-a', 'prod'), 'captf-plan-tc.team-a.prod');
    assert.equal(objectStorePrefix('backup', 'pool', 'team-b', 'prod.eu-1'), 'captf-backup-tmp.team-b.prod.eu-1');
  });

  it('no two objects share a key, nor does one key start another followed by "/" (S3) or end the same column (PostgreSQL)', () => {
    const objects = ['prod', 'prod-5f56359ef1', 'prod.x', 'a.prod', 'x'.repeat(253), `${'x'.repeat(252)}y`];
    const namespaces = ['team-a', 'team-b', 'team', 'a', 'x'.repeat(63)];
    const keys = new Map<string, string>();
    for (const family of ['plan', 'backup'] as const)
      for (const kind of OBJECT_KINDS)
        for (const namespace of namespaces)
          for (const object of objects) {
            const key = objectStorePrefix(family, kind, namespace, object);
            const owner = `${family} ${kind} ${namespace}/${object}`;
            assert.equal(keys.get(key), undefined, `${owner} shares ${key} with ${keys.get(key)}`);
            keys.set(key, owner);
          }
    for (const a of keys.keys())
      for (const b of keys.keys()) if (a !== b) assert.ok(!b.startsWith(`${a}/`), `${a} ${b}`);
    // The namespace ends at the first "." after the kind: team-a/prod and team/a.prod... are told apart.
    assert.notEqual(
      objectStorePrefix('plan', 'cluster', 'team', 'a.prod'),
      objectStorePrefix('plan', 'cluster', 'team-a', 'prod'),
    );
  });

  it('is never a key of the layout before it (captf-<family>-<kindshort>-<object>)', () => {
    assert.doesNotMatch(objectStorePrefix('plan', 'cluster', 'tc', 'prod'), /^captf-plan-tc-/);
    assert.match(objectStorePrefix('backup', 'machine', 'team-a', 'prod'), /^captf-backup-tm\./);
  });

  it('refuses a name that is no Kubernetes name (Prod, ../x, a/b, 300 characters; a namespace with a ".")', () => {
    for (const [namespace, object] of [
      ['team-a', 'Prod'],
      ['team-a', '../x'],
      ['team-a', 'a/b'],
      ['team-a', 'x'.repeat(300)],
      ['team.a', 'prod'],
      ['Team-A', 'prod'],
      ['', 'prod'],
    ])
      assert.throws(
        () => objectStorePrefix('plan', 'cluster', namespace!, object!),
        (error: { reason?: string }) => error.reason === 'SettingsInvalid',
        `${namespace}/${object}`,
      );
  });
});
