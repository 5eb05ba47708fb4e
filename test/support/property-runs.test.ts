import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';

it('CAPTF_PROPERTY_SEED sets the seed of every property, CAPTF_PROPERTY_RUNS multiplies the runs', async () => {
  process.env.CAPTF_PROPERTY_SEED = '4242';
  process.env.CAPTF_PROPERTY_RUNS = '3';
  const { runs } = await import('./property-runs.ts');
  assert.equal(fc.readConfigureGlobal().seed, 4242);
  assert.equal(runs(50), 150);
  delete process.env.CAPTF_PROPERTY_RUNS;
  assert.equal(runs(50), 50);
});
