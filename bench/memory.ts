// Part 3 of `npm run bench` (bench/run.ts): `captf-runner classify --json -` of synthetic plan documents (up to
// 1 GiB, scripts/generators/gen-plan.mjs) fed through a pipe (as terraform's stdout is): peak RSS of the runner
// process (its own ru_maxrss, from the preload), and its counts against the generator's. With --snapshot the runner
// starts through the startup snapshot, as the image's command starts it (runner/captf-runner.sh).
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Bench, fmt, GEN_PLAN, log, mb, now, q, readSelfUsage, SELF_USAGE } from './lib/harness.ts';

export interface MemoryRow {
  mib: number;
  bytes: number;
  resources: number;
  ms: number;
  peakRssBytes: number;
  /** The runner's counts, destructive total and output changes are the generator's, and nothing failed closed. */
  countsMatch: boolean;
}

/** What gen-plan.mjs prints last on stderr, and what `classify --json` prints: the parts compared. */
interface Counts {
  resources: number;
  counts: Record<string, number>;
  destructiveTotal: number;
  outputChanges: unknown;
  failClosed: unknown[];
}

export function benchMemory(b: Bench, mib: number): MemoryRow {
  const file = join(b.tmp, `plan-${mib}MiB.json`);
  log(`\n== classify of a synthetic plan of ${mib} MiB`);
  const gen = spawnSync(process.execPath, [GEN_PLAN, '--bytes', String(mib * 2 ** 20), '--out', file], {
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (gen.status !== 0) throw new Error(`gen-plan failed: ${gen.stderr}`);
  const expected: Counts = JSON.parse(gen.stderr.trim().split('\n').at(-1) ?? '');
  try {
    spawnSync('bash', ['-c', `cat ${q(file)} >/dev/null`]); // into the page cache
    const out = join(b.tmp, 'classify.json');
    const usageFile = join(b.tmp, 'classify-usage.json');
    rmSync(usageFile, { force: true });
    const started = now();
    const r = spawnSync(
      'bash',
      [
        '-c',
        `set -euo pipefail; cat ${q(file)} | ${[b.node, ...b.applyLaunch, '--require', SELF_USAGE, b.runner].map(q).join(' ')} classify --json - >${q(out)}`,
      ],
      { env: { ...b.env, ...b.applyEnv, BENCH_SELF_USAGE_FILE: usageFile }, stdio: 'ignore' },
    );
    const ms = now() - started;
    if (r.status !== 0) throw new Error(`classify of ${mib} MiB exited ${r.status}`);
    const peakRssBytes = readSelfUsage(usageFile).maxRssBytes;
    const got: Counts = JSON.parse(readFileSync(out, 'utf8'));
    const countsMatch =
      JSON.stringify(got.counts) === JSON.stringify(expected.counts) &&
      got.destructiveTotal === expected.destructiveTotal &&
      JSON.stringify(got.outputChanges) === JSON.stringify(expected.outputChanges) &&
      got.failClosed.length === 0;
    const bytes = statSync(file).size;
    log(
      `  ${fmt(ms)} (${(bytes / 2 ** 20 / (ms / 1000)).toFixed(0)} MiB/s), peak RSS ${mb(peakRssBytes)}, counts ${countsMatch ? 'match the generator' : `DIFFER: ${JSON.stringify(got.counts)} vs ${JSON.stringify(expected.counts)}`}`,
    );
    return { mib, bytes, resources: expected.resources, ms, peakRssBytes, countsMatch };
  } finally {
    rmSync(file, { force: true });
  }
}
