// `classify` reads its document, from a pipe on stdin or from a file, into one reused buffer: a Buffer
// made a chunk (process.stdin, createReadStream) lives outside V8's heap until V8 next collects, and
// Node 24 lets 60–100 MB of them pile up while a 600 MiB plan streams (bench/HISTORY.md, "Issue 44: the
// 600 MiB plan on Node 24"). Measured here on the tests' node, where a stream's chunks reach ≈ 10 MB
// for a 32 MiB document: the peak of process.memoryUsage().arrayBuffers, polled every millisecond.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { arrayBuffersPeakPreload, PEAK_FILE_VARIABLE } from '../support/array-buffers-peak.ts';
import { RUNNER } from '../support/runner.ts';
import { runChecked } from '../support/exec.ts';

const GEN_PLAN = fileURLToPath(new URL('../../scripts/generators/gen-plan.mjs', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'captf-classify-chunks-'));
const plan = join(dir, 'plan.json');
const peakFile = join(dir, 'peak');
const preload = await arrayBuffersPeakPreload(dir);
const generated = await runChecked(process.execPath, [GEN_PLAN, '--bytes', String(32 * 2 ** 20), '--out', plan]);
const expected = JSON.parse(generated.stderr.trim().split('\n').at(-1)!) as { counts: unknown };

/** classify --json of the plan (`-`: through a pipe on stdin, as a shell pipeline gives it), its counts and its peak of Buffer memory. */
function classify(file: string): Promise<{ counts: unknown; arrayBuffersPeak: number }> {
  const child = spawn(process.execPath, ['--require', preload, RUNNER, 'classify', '--json', file], {
    stdio: [file === '-' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', [PEAK_FILE_VARIABLE]: peakFile },
  });
  if (file === '-') createReadStream(plan).pipe(child.stdin!);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => (out += text));
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (err += text));
  return new Promise((resolve, reject) =>
    child.on('error', reject).on('close', (code) => {
      if (code !== 0) return reject(new Error(`classify exited ${code}: ${err}`));
      readFile(peakFile, 'utf8').then(
        (peak) => resolve({ counts: (JSON.parse(out) as { counts: unknown }).counts, arrayBuffersPeak: Number(peak) }),
        reject,
      );
    }),
  );
}

describe('classify reads its document into one buffer, not a Buffer a chunk', () => {
  for (const [name, file] of [
    ['a pipe on stdin', '-'],
    ['a file', plan],
  ] as const)
    it(`${name}: a 32 MiB plan classified with the generator's counts, Buffers under 2 MiB at their peak`, async () => {
      const run = await classify(file);
      assert.deepEqual(run.counts, expected.counts);
      assert.ok(run.arrayBuffersPeak < 2 * 2 ** 20, `arrayBuffers peaked at ${run.arrayBuffersPeak} bytes`);
    });
});
