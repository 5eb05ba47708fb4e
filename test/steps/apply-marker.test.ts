// What an apply marker lists (steps/apply-marker.ts): the addresses the plan creates or replaces, bounded;
// and when a marker's writer is known to have ended. Pure.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { plannedCreates, writerEnded } from '../../src/steps/apply-marker.ts';
import { MASK, Masker } from '../../src/masking/mask.ts';

const entry = (address: string, actions: string[]) => ({ address, actions });

describe('plannedCreates', () => {
  it('lists creates and replaces (either order), not updates, deletes or no-ops', () => {
    const changes = [
      entry('a.create', ['create']),
      entry('a.update', ['update']),
      entry('a.delete', ['delete']),
      entry('a.replace', ['delete', 'create']),
      entry('a.cbd', ['create', 'delete']),
    ];
    assert.deepEqual(plannedCreates({ changes, changesTotal: 5 }, new Masker()), {
      addresses: ['a.create', 'a.replace', 'a.cbd'],
      addressesLeftOut: 0,
    });
  });

  it('keeps the first 50, cuts a long address, and counts what it left out (and what the plan did not list)', () => {
    const changes = Array.from({ length: 60 }, (_, i) => entry(`x.y["${i}"]`, ['create']));
    changes[0] = entry(`x.y["${'k'.repeat(1000)}"]`, ['create']);
    const listed = plannedCreates({ changes, changesTotal: 65 }, new Masker());
    assert.equal(listed.addresses.length, 50);
    assert.equal(listed.addresses[0]!.length, 500);
    assert.ok(listed.addresses[0]!.endsWith('…'));
    assert.equal(listed.addresses[1], 'x.y["1"]');
    assert.equal(listed.addressesLeftOut, 10 + 5);
  });

  it('masks an address whole before it cuts it: no part of a secret key across the cut is kept', () => {
    const secret = 'Kq7-marker-secret-key-Zx93-wW2v';
    const masker = new Masker();
    masker.add(secret, 'var.key');
    const address = `x.y["${'k'.repeat(470)}${secret}"]`;
    const [kept] = plannedCreates({ changes: [entry(address, ['create'])], changesTotal: 1 }, masker).addresses;
    assert.equal(kept, `x.y["${'k'.repeat(470)}${MASK}"]`);
    const long = `x.y["${'k'.repeat(490)}${secret}${'k'.repeat(100)}"]`;
    const [cut] = plannedCreates({ changes: [entry(long, ['create'])], changesTotal: 1 }, masker).addresses;
    assert.equal(cut, `x.y["${'k'.repeat(490)}…`);
  });
});

describe('writerEnded: a marker is reported as killed only when its writer is known to have ended', () => {
  const now = Date.parse('2026-12-06T12:00:00Z');
  const here = { host: 'node-a', pidNamespace: 'pid:[4026531836]', pid: 100 };
  const gone = (pid: number) => pid !== 7;
  const at = (pid: number, more: object = {}) => ({ writer: { ...here, pid, ...more } });

  it('its --deadline passed: ended, wherever it ran', () => {
    assert.equal(writerEnded({ runsUntil: '2026-12-06T11:59:59Z' }, { now, here, gone }), 'deadline passed');
    assert.equal(writerEnded({ runsUntil: '2026-12-06T11:00:00Z', ...at(7) }, { now, here, gone }), 'deadline passed');
  });

  it('its process gone from this machine and pid namespace: ended, whatever its deadline', () => {
    assert.equal(writerEnded(at(8), { now, here, gone }), 'process gone');
    assert.equal(writerEnded({ runsUntil: '2026-12-06T13:00:00Z', ...at(8) }, { now, here, gone }), 'process gone');
  });

  it('no deadline, or one ahead, and a process that may run: not known to have ended', () => {
    assert.equal(writerEnded({}, { now, here, gone }), undefined, 'a marker that names no writer');
    assert.equal(writerEnded({ runsUntil: '2026-12-06T13:00:00Z' }, { now, here, gone }), undefined);
    assert.equal(writerEnded(at(7), { now, here, gone }), undefined, 'its pid runs');
    assert.equal(writerEnded(at(8, { host: 'node-b' }), { now, here, gone }), undefined, 'another machine');
    assert.equal(writerEnded(at(8, { pidNamespace: 'pid:[1]' }), { now, here, gone }), undefined, 'another container');
    assert.equal(writerEnded(at(100), { now, here, gone: () => true }), undefined, 'its pid is this run');
  });
});
