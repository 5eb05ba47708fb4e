// When a kept errored state may be pushed over the backend's state (steps/errored-state.ts): pure.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { erroredStateRefusal } from '../../src/steps/errored-state.ts';

const L = '11111111-1111-4111-8111-111111111111';
const M = '22222222-2222-4222-8222-222222222222';

describe('erroredStateRefusal', () => {
  it('pushes a state of the backend’s lineage and a higher serial', () => {
    assert.equal(erroredStateRefusal({ lineage: L, serial: 5 }, { lineage: L, serial: 4 }, undefined), undefined);
    assert.equal(erroredStateRefusal({ lineage: L, serial: 5 }, { lineage: L, serial: 4 }, L), undefined);
  });

  it('pushes into a backend that holds no state (none, or the empty one a pg backend holds)', () => {
    assert.equal(erroredStateRefusal({ lineage: L, serial: 2 }, { lineage: null, serial: null }, undefined), undefined);
    assert.equal(erroredStateRefusal({ lineage: L, serial: 2 }, { lineage: '', serial: 0 }, undefined), undefined);
  });

  it('refuses another lineage, a serial not above the backend’s, a state without lineage, one not the object’s', () => {
    assert.match(erroredStateRefusal({ lineage: M, serial: 9 }, { lineage: L, serial: 4 }, undefined)!, /lineage/);
    assert.match(erroredStateRefusal({ lineage: L, serial: 4 }, { lineage: L, serial: 4 }, undefined)!, /not above/);
    assert.match(erroredStateRefusal({ lineage: L, serial: 3 }, { lineage: L, serial: 4 }, undefined)!, /not above/);
    assert.match(erroredStateRefusal({ lineage: '', serial: 3 }, { lineage: L, serial: 2 }, undefined)!, /no lineage/);
    assert.match(
      erroredStateRefusal({ lineage: L, serial: 2 }, { lineage: null, serial: null }, M)!,
      /not the object's \(2222/,
    );
  });
});
