import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'node:test';
import { peakLiveGrowth } from './live-memory.ts';

it('peakLiveGrowth sees a buffer held for a while and freed before the work ends', async () => {
  const size = 16 * 1024 * 1024;
  const { value, growth } = await peakLiveGrowth(async () => {
    let held: Buffer | undefined = Buffer.alloc(size, 1);
    await sleep(600);
    const first = held[0];
    held = undefined;
    return first;
  });
  assert.equal(value, 1);
  // What else was live at the baseline (the test runner's own objects) may be collected meanwhile:
  // tens of KB here. A sampler that missed the buffer would see far less (the next test: < 4 MiB).
  const elsewhereFreed = 1024 * 1024;
  assert.ok(growth >= size - elsewhereFreed, `growth ${growth} for a ${size}-byte buffer`);
});

it('peakLiveGrowth of work that keeps nothing is far below that', async () => {
  const { growth } = await peakLiveGrowth(() => sleep(100));
  assert.ok(growth < 4 * 1024 * 1024, `growth ${growth}`);
});
