// DecideOp against the docs: every case of decide-cases.ts (one or more per rule and per note) runs
// here, named after the rule and the doc sentence it checks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decideOp } from '../../src/controller-model/decide-op.ts';
import { Decision } from '../../src/controller-model/decision.ts';
import { parseSnapshot } from '../../src/controller-model/snapshot.ts';
import {
  BACKOFF_CASES,
  BASELINE_CASES,
  BLOCKED_CASES,
  HOLD_CASES,
  IMMUTABLE_CASES,
  MANUAL_CASES,
  ORDER_CASES,
  SCHEDULE_CASES,
  type DecideCase,
} from './decide.cases.ts';

const groups: Record<string, DecideCase[]> = {
  baseline: BASELINE_CASES,
  'the order 0–10': ORDER_CASES,
  'why immutable kinds still retry': IMMUTABLE_CASES,
  'applyPolicy: Manual, the plan flow': MANUAL_CASES,
  'the blocked-apply wait': BLOCKED_CASES,
  'retries and backoff': BACKOFF_CASES,
  'held until something changes': HOLD_CASES,
  'the schedule': SCHEDULE_CASES,
};

for (const [group, cases] of Object.entries(groups)) {
  describe(group, () => {
    for (const c of cases) {
      test(`${c.name} — “${c.doc}”`, () => {
        const decision = decideOp(parseSnapshot(c.snapshot));
        assert.deepEqual(decision, c.decision);
        Decision.parse(decision); // every decision fits the published schema
      });
    }
  });
}

describe('the snapshot contract', () => {
  const valid = BASELINE_CASES[0]!.snapshot;

  test('applyPolicy belongs to a TerraformCluster only — “Under applyPolicy: Manual (a TerraformCluster only)”', () => {
    const poolWithPolicy = {
      ...BASELINE_CASES[2]!.snapshot,
      object: { ...BASELINE_CASES[2]!.snapshot.object, applyPolicy: 'Manual' },
    };
    assert.throws(() => parseSnapshot(poolWithPolicy), /TerraformCluster only/);
  });

  test('membership belongs to pools — “The membership interval (pools)”', () => {
    const clusterWithMembership = {
      ...valid,
      refresh: { ...valid.refresh, membership: { converging: true, intervalSeconds: 60 } },
    };
    assert.throws(() => parseSnapshot(clusterWithMembership), /pool only/);
  });

  test('a live object carries its current inputs hash; a deleting one builds no inputs', () => {
    assert.throws(() => parseSnapshot({ ...valid, inputs: { currentHash: null } }), /currentHash/);
    const deleting = { ...valid, object: { ...valid.object, deleting: true }, inputs: { currentHash: null } };
    assert.equal(decideOp(parseSnapshot(deleting)).reason, 'Deleting');
  });

  test('unknown fields are refused, so a misspelt field never reads as absent', () => {
    assert.throws(() => parseSnapshot({ ...valid, aproveDestructivePlan: 'h1' }));
  });
});
