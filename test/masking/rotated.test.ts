// A rotated secret's old value read off a change (src/masking/rotated.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { oldValues } from '../../src/masking/rotated.ts';

/** The places of `secrets` in `after`, in order. */
const placesOf = (after: string, ...secrets: string[]) =>
  secrets
    .map((secret) => ({ start: after.indexOf(secret), end: after.indexOf(secret) + secret.length }))
    .sort((a, b) => a.start - b.start);

describe('the old value at the place of a secret', () => {
  it('the whole string, or the part the same text surrounds before and after', () => {
    assert.deepEqual(oldValues('OLD-1', 'NEW-22', placesOf('NEW-22', 'NEW-22')), ['OLD-1']);
    assert.deepEqual(
      oldValues('user:OLD-1@db:5432', 'user:NEW-22@db:5432', placesOf('user:NEW-22@db:5432', 'NEW-22')),
      ['OLD-1'],
    );
    // The old and new values share a beginning: the old value is still taken whole, not from where they differ.
    assert.deepEqual(oldValues('user:CANARYOLD-1', 'user:CANARYNEW-2', placesOf('user:CANARYNEW-2', 'CANARYNEW-2')), [
      'CANARYOLD-1',
    ]);
  });

  it('two secrets: each old value ends where the text between is next found, and the whole difference is taken too', () => {
    const after = 'postgres://NEWUSER:NEWPASS@db';
    assert.deepEqual(oldValues('postgres://olduser:oldpass@db', after, placesOf(after, 'NEWUSER', 'NEWPASS')), [
      'olduser',
      'oldpass',
      'olduser:oldpass',
    ]);
    // Side by side, nothing says where one ends: the difference alone.
    assert.deepEqual(oldValues('xOLDAOLDBy', 'xNEWANEWBy', placesOf('xNEWANEWBy', 'NEWA', 'NEWB')), ['OLDAOLDB']);
  });

  it("when more of the string changed, the part that differs, widened to the secret's place", () => {
    assert.deepEqual(oldValues('admin:OLD-1@db', 'user:NEW-22@db', placesOf('user:NEW-22@db', 'NEW-22')), [
      'admin:OLD-1',
    ]);
    assert.deepEqual(oldValues('abc', 'abc', placesOf('abc', 'abc')), []);
    assert.deepEqual(oldValues('old', 'new', []), []);
  });
});
