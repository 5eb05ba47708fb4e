// contract/vectors/decide-op.json is generated (scripts/generators/gen-decide-vectors.ts) and checked in. CI
// fails here when it is stale, and every vector in it replays through decideOp as a controller would.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  DECIDE_VECTORS_PATH,
  JOB_IMAGE_VECTORS_PATH,
  renderDecideVectors,
  renderJobImageVectors,
} from '../../scripts/generators/gen-decide-vectors.ts';
import { type JobImage, jobImage } from '../../src/controller-model/op-shape.ts';
import { decideOp } from '../../src/controller-model/decide-op.ts';
import { Decision } from '../../src/controller-model/decision.ts';
import { parseSnapshot } from '../../src/controller-model/snapshot.ts';

const checkedIn = readFileSync(DECIDE_VECTORS_PATH, 'utf8');

test('the checked-in vectors are what the generator writes (run: node --import tsx scripts/generators/gen-decide-vectors.ts)', () => {
  assert.equal(checkedIn, renderDecideVectors());
});

test('every vector replays through decideOp', () => {
  const { vectors } = JSON.parse(checkedIn) as {
    vectors: Array<{ name: string; snapshot: unknown; decision: unknown }>;
  };
  assert.ok(vectors.length >= 30, `a few dozen vectors, got ${vectors.length}`);
  for (const vector of vectors) {
    assert.deepEqual(decideOp(parseSnapshot(vector.snapshot)), Decision.parse(vector.decision), vector.name);
  }
});

test('contract/vectors/job-image.json is what the generator writes, and replays through jobImage', () => {
  const text = readFileSync(JOB_IMAGE_VECTORS_PATH, 'utf8');
  assert.equal(text, renderJobImageVectors());
  const { vectors } = JSON.parse(text) as {
    vectors: Array<{
      name: string;
      image: 'spec' | 'pinned';
      images: { spec: string; applied?: string; pinnedDigest?: string };
      expected: JobImage;
    }>;
  };
  assert.ok(vectors.length >= 8);
  for (const v of vectors) assert.deepEqual(jobImage(v.image, v.images), v.expected, v.name);
});
