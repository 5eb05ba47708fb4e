import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'node:test';
import { liveBytes, peakLiveGrowth } from './live-memory.ts';

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

it("peakLiveGrowth samples when the work asks, between its timer's samples", async () => {
  const size = 16 * 1024 * 1024;
  const { growth } = await peakLiveGrowth(async (sample) => {
    const held = Buffer.alloc(size, 1);
    sample();
    return held[0];
  }, 60_000);
  assert.ok(growth >= size - 1024 * 1024, `growth ${growth} for a ${size}-byte buffer`);
});

it('liveBytes does not count the Buffers that were freed before it', () => {
  const baseline = liveBytes();
  for (let round = 0; round < 5; round++) {
    // 10 MiB of Buffers that are garbage by the time liveBytes collects.
    for (let i = 0; i < 160; i++) Buffer.allocUnsafeSlow(64 * 1024).fill(i);
    const growth = liveBytes() - baseline;
    assert.ok(growth < 1024 * 1024, `round ${round}: ${growth} bytes of freed Buffers counted as live`);
  }
});
