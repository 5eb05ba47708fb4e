// contract/vectors/label-values.json is generated (scripts/generators/gen-label-vectors.ts) and checked in: it
// fails here when stale, and every vector replays through labelValueFor and through the rule as the
// contract states it, written again here with node's own sha256.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { LABEL_VECTORS_PATH, renderLabelVectors } from '../../scripts/generators/gen-label-vectors.ts';
import { isLabelValue, labelValueFor } from '../../src/util/kube-names.ts';

test('contract/vectors/label-values.json is what the generator writes (node --import tsx scripts/generators/gen-label-vectors.ts), and replays', () => {
  const text = readFileSync(LABEL_VECTORS_PATH, 'utf8');
  assert.equal(text, renderLabelVectors());
  const { vectors } = JSON.parse(text) as { vectors: Array<{ name: string; value: string; expected: string }> };
  for (const v of vectors) {
    assert.equal(labelValueFor(v.value), v.expected, v.name);
    assert.ok(isLabelValue(v.expected), v.name);
  }
});

test('an approval hash label: its first 52 hex digits, "-", and 10 hex digits of the sha256 of the whole hash (contract/sections/kubernetes.md)', () => {
  for (const seed of ['a', 'b', 'c']) {
    const hash = createHash('sha256').update(seed).digest('hex');
    const digest = createHash('sha256').update(hash, 'utf8').digest('hex').slice(0, 10);
    assert.equal(labelValueFor(hash), `${hash.slice(0, 52)}-${digest}`);
  }
});
