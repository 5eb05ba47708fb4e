import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RunnerError } from '../../src/errors.ts';
import { refuseOtherState } from '../../src/steps/state.ts';

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
