import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RunnerError } from '../../src/errors.ts';
import { isPlannedState, plannedState, refuseOtherState } from '../../src/steps/state.ts';

const state = (serial: number | null, lineage: string | null) => ({
  serial,
  lineage,
  terraformVersion: null,
  recordedInputsHash: null,
});
const LINEAGE = '8d9f6c2e-3b1a-4c5d-9e7f-0a1b2c3d4e5f';

describe('steps: refuseOtherState (--expect-lineage)', () => {
  it('passes the expected lineage, and anything when none is expected', () => {
    refuseOtherState(state(3, LINEAGE), LINEAGE);
    refuseOtherState(state(null, null), undefined);
    refuseOtherState(state(3, 'other'), undefined);
  });

  it('refuses another lineage, no state, and an empty pg state (serial 0, lineage ""): StateLineageMismatch, both lineages in the detail', () => {
    const refused = (s: ReturnType<typeof state>, found: string | null) =>
      assert.throws(
        () => refuseOtherState(s, LINEAGE),
        (error: unknown) =>
          error instanceof RunnerError &&
          error.kind === 'state' &&
          error.reason === 'StateLineageMismatch' &&
          error.detail?.expectedLineage === LINEAGE &&
          error.detail?.foundLineage === found,
      );
    refused(state(3, 'another'), 'another');
    refused(state(null, null), null);
    refused(state(0, ''), null);
  });
});

describe('steps: isPlannedState (the state a saved plan names, as terraform checks it)', () => {
  it('a plan file\'s header of no state (lineage "", serial 0) names no state: a pull of none, or of a pg backend\'s empty state, is it', () => {
    const none = plannedState({ lineage: '', serial: 0 });
    assert.deepEqual(none, { lineage: null, serial: null });
    assert.ok(isPlannedState(none, state(null, null)));
    assert.ok(isPlannedState(none, state(0, '')));
    assert.ok(!isPlannedState(none, state(1, LINEAGE)));
  });

  it('a state: the same lineage and serial, nothing else', () => {
    const planned = plannedState({ lineage: LINEAGE, serial: 4 });
    assert.ok(isPlannedState(planned, state(4, LINEAGE)));
    assert.ok(!isPlannedState(planned, state(5, LINEAGE)), 'another run wrote it after the plan');
    assert.ok(!isPlannedState(planned, state(4, 'another')));
    assert.ok(!isPlannedState(planned, state(null, null)));
    // A summary (a pulled state, or the state before read from the plan) compares the same way.
    assert.ok(isPlannedState(state(4, LINEAGE), state(4, LINEAGE)));
    assert.ok(isPlannedState(state(null, null), state(0, '')));
  });
});
