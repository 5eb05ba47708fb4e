// The driver reads terraform's stdout and stderr into one reused buffer each (src/util/socket-chunks.ts),
// as `classify` reads its document (test/commands/classify-chunks.e2e.test.ts): a pipe's Socket makes a
// new Buffer a read, outside V8's heap until V8 next collects (bench/HISTORY.md, "Issue 44: the 600 MiB
// plan on Node 24"). The built runner's apply, its terraform the test suite's fake printing a 32 MiB plan
// at `show -json`, every change classified as ever; the peak of process.memoryUsage().arrayBuffers, polled
// every millisecond, stays under 2 MiB (read a Buffer a chunk, it reached 5.8 MiB on the tests' node). The
// streamed output (stdout and stderr in lines) is measured in the driver alone (driver.e2e.test.ts):
// through the runner, what its sinks make of each line (a log record, a Buffer a record: src/output/log.ts)
// blurs it, 1.5–1.9 MiB at the peak either way.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fakeScenario } from '../e2e/faults.support.ts';
import { arrayBuffersPeakPreload, PEAK_FILE_VARIABLE } from '../support/array-buffers-peak.ts';
import { RUNNER } from '../support/runner.ts';
import { fakeTerraformEnv, tempDir } from '../support/tf-modules.ts';

const MiB = 2 ** 20;
const BYTES = 32 * MiB;
const PEAK_LIMIT = 2 * MiB;

const preload = await arrayBuffersPeakPreload(await tempDir(undefined, 'captf-driver-chunks-'));

describe("the driver reads terraform's output into one buffer a stream, not a Buffer a read", () => {
  it(`show -json's 32 MiB plan, classified as it streams: the apply succeeds, every change counted, Buffers under ${PEAK_LIMIT / MiB} MiB at their peak`, async (t) => {
    const s = await fakeScenario(t);
    const peakFile = join(s.dir, 'peak');
    const child = spawn(
      process.execPath,
      [
        '--require',
        preload,
        RUNNER,
        'apply',
        '--kind',
        'cluster',
        '--terraform',
        s.terraformPath,
        '--module',
        s.module,
        '--inputs',
        s.inputs,
        '--state',
        s.state,
        '--new-state',
        '--out',
        s.out,
        '--termination-log',
        s.termination,
        '--log-format',
        'json',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH ?? '',
          [PEAK_FILE_VARIABLE]: peakFile,
          ...fakeTerraformEnv({ faults: [`show:huge-plan=${BYTES}`], state: s.fakeState, log: s.log }),
        },
      },
    );
    // Pipes, drained: a write to one takes the runner's string as it is (to /dev/null a Buffer is made a write).
    child.stdout!.resume();
    child.stderr!.resume();
    const code = await new Promise<number | null>((resolve, reject) => child.on('error', reject).on('close', resolve));
    const result = JSON.parse(await readFile(join(s.out, 'result.json'), 'utf8')) as {
      outcome: string;
      plan?: { counts?: { create?: number } };
    };
    assert.equal(code, 0, `the apply exited ${code}: ${JSON.stringify(result)}`);
    assert.equal(result.outcome, 'succeeded');
    const streamed = (await readFile(s.log, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { event: string; resourceChanges?: number })
      .find((e) => e.event === 'streamed');
    assert.ok(streamed?.resourceChanges, 'the fake counted the changes it printed');
    assert.equal(result.plan?.counts?.create, streamed.resourceChanges, 'every change of the plan classified');
    const peak = Number(await readFile(peakFile, 'utf8'));
    t.diagnostic(`arrayBuffers peaked at ${(peak / MiB).toFixed(2)} MiB`);
    assert.ok(peak < PEAK_LIMIT, `arrayBuffers peaked at ${peak} bytes`);
  });
});
