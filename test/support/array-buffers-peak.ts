// The peak of a child node's Buffer memory (process.memoryUsage().arrayBuffers, polled every
// millisecond, no collection forced): for tests that a reader makes no new Buffer a chunk, which would
// pile up outside V8's heap until V8 next collects (bench/HISTORY.md, "Issue 44: the 600 MiB plan on Node 24").
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The environment variable naming the file the preload writes the peak to (bytes, as text) at exit. */
export const PEAK_FILE_VARIABLE = 'ARRAY_BUFFERS_PEAK_FILE';

/** Writes the preload (for node's `--require`) into `dir`; returns its path. */
export async function arrayBuffersPeakPreload(dir: string): Promise<string> {
  const preload = join(dir, 'array-buffers-peak.cjs');
  await writeFile(
    preload,
    `let peak = 0;
     const poll = () => (peak = Math.max(peak, process.memoryUsage().arrayBuffers));
     setInterval(poll, 1).unref();
     process.on('exit', () => { poll(); require('node:fs').writeFileSync(process.env.${PEAK_FILE_VARIABLE}, String(peak)); });`,
  );
  return preload;
}
