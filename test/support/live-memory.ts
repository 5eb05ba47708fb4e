// Live memory of this process, for tests that prove bounded memory by comparing two sizes: what a
// streaming reader or writer keeps does not grow with its input, where holding the input would.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// RSS counts garbage the collector has not reached yet (tens of MB, varying run to run), so a
// sample is what is live: JS heap plus Buffers, right after a full collection. Twice: the Buffers
// one collection frees are still counted until their memory is swept, which it does while the
// program goes on (all the Buffers a stream read since the last sample: megabytes).
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

export function liveBytes(): number {
  collectGarbage();
  collectGarbage();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

/**
 * Runs `work`, sampling live memory every `everyMs` and whenever work calls `sample` (at points of
 * its progress: a run shorter than the interval is sampled too); resolves to its result and the peak
 * growth over the live bytes before it (bytes).
 */
export async function peakLiveGrowth<T>(
  work: (sample: () => void) => Promise<T>,
  everyMs = 250,
): Promise<{ value: T; growth: number }> {
  const baseline = liveBytes();
  let peak = baseline;
  const sample = () => void (peak = Math.max(peak, liveBytes()));
  const sampler = setInterval(sample, everyMs);
  try {
    const value = await work(sample);
    peak = Math.max(peak, liveBytes());
    return { value, growth: peak - baseline };
  } finally {
    clearInterval(sampler);
  }
}
