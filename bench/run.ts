// What the runner costs on top of terraform, measured side by side in one run on one machine
// (BENCHMARKS.md states the targets and the figures). Nothing here is a test: it prints figures.
// One file a part, each returning its rows; what they share is in bench/lib/ (harness.ts, sides.ts).
//
//   1. apply (bench/apply.ts): `captf-runner apply --kind cluster` ÷ the steps a person runs by hand on the
//      same module (bench/bare-apply.sh), no changes and changes, wall and CPU ratios of interleaved pairs;
//      and the runner node's own peak RSS.
//   2. start (bench/start.ts): from launch to the runner's first terraform spawn ÷ `node -e 0`, interleaved
//      rounds; through the startup snapshot, and with a compile cache when the node (--node) has one.
//   3. memory (bench/memory.ts): `captf-runner classify -` of synthetic plan documents up to 1 GiB: peak RSS.
//   4. output (bench/output.ts): terraform printing hundreds of MiB through the runner: peak RSS.
//   5. breakdown (bench/breakdown.ts): where the runner's extra time goes, from traced runs of both sides.
//   6. policy (bench/policy.ts): `captf-runner classify --policy DIR -` under the worst rules: wall and CPU
//      time, cost units, µs a unit, peak RSS.
//   7. reader (bench/reader.ts): the streaming JSON reader cold, on the first document of a fresh process,
//      ÷ JSON.parse of the same bytes: MB/s.
//
//   npm run bench                               # builds, runs everything (~15 min on 2 CPUs)
//   npm run bench -- --only apply --sizes 20x25:5
//   npm run bench -- --only start --node /path/to/node24/bin/node
//
// Options: --only apply,start,memory,output,breakdown,policy,reader; --sizes RxN[:PAIRS],... (default
// 20x25:9,100x100:5; R resources of N instances each, N ≤ 100); --start-rounds N (20); --memory-mib A,B,...
// (100,1024); --output-mib N (200); --breakdown-size RxN (20x25); --breakdown-runs N (5); --reader-rounds N (15);
// --node PATH (the node that runs the runner and `node -e 0`; default the one running this script); --runner FILE
// (default: `npm run build`, then dist/captf-runner.mjs); --terraform PATH (terraform on PATH); --json-out FILE
// (default $TMPDIR/captf-bench.json, so that a trial run never overwrites the committed figures; - for none);
// --keep (keep the temp dir); --snapshot (the runner of parts 1, 3 and 4 starts through the startup snapshot, as the
// image's command starts it; part 7 also reads through snapshots of its worker, with and without the reader's warm-up in
// their build); --verified-terraform (the runner answers `version` from a record of terraform made beside it with
// the image build's checks, bench/lib/verified-terraform.ts, as the image's runner does: the apply part's runs then
// start no `version` launch; the breakdown's do, their terraform a tracing wrapper that is not the verified file);
// --no-change-only (the apply part's no-change pairs only). The summary marks issue 44's bounds on a no-change
// apply's CPU ratio (500 and 10,000 instances), the other rows with their figures only.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';
import { type ApplyRow, benchApply } from './apply.ts';
import { type BreakdownResult, benchBreakdown } from './breakdown.ts';
import {
  APPLY_CPU_TARGETS,
  type BenchOptions,
  fail,
  fmt,
  loadavg,
  log,
  mb,
  parseOptions,
  setUp,
  TARGETS,
} from './lib/harness.ts';
import { benchMemory, type MemoryRow } from './memory.ts';
import { benchOutput, type OutputRow } from './output.ts';
import { benchPolicy, type PolicyRow } from './policy.ts';
import { benchReader, type ReaderRow } from './reader.ts';
import { benchStart, type StartResult } from './start.ts';

/** What --json-out holds (bench/results/latest.json). */
interface Results {
  date: string;
  machine: {
    nproc: number;
    cpu: string;
    memoryGiB: number;
    node: string;
    terraform: string;
    bundleBytes: number;
    /** --verified-terraform: the apply part's runner answered `version` from the record, as in the image. */
    terraformRecord: boolean;
    /** --snapshot: the runner started through the startup snapshot (IMAGE_V8_FLAGS, its blob), as in the image. */
    snapshot: boolean;
    loadavgAtStart: string;
    loadavgAtEnd?: string;
  };
  apply: ApplyRow[];
  start: StartResult | undefined;
  memory: MemoryRow[];
  output: OutputRow[];
  breakdown: BreakdownResult | undefined;
  policy: PolicyRow[];
  reader: ReaderRow[];
  readerSnapshotBlobBytes?: { snapshot: number; snapshotWarmed: number };
}

function summary(results: Results): void {
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const m = results.machine;
  const lines = ['', '== summary (ratios: medians of interleaved pairs; targets in brackets)'];
  lines.push(
    `machine: ${m.nproc} CPU (${m.cpu}), ${m.memoryGiB} GiB, ${m.node}, ${m.terraform}; load average at start ${m.loadavgAtStart}, at end ${loadavg()}`,
  );
  for (const a of results.apply) {
    for (const [label, r, target] of [
      ['no changes', a.noChanges, APPLY_CPU_TARGETS[a.instances]],
      [`${a.updatesPerChange} updates`, a.changes, undefined],
    ] as const) {
      if (!r) continue;
      const cpuVerdict = target === undefined ? '(no target)' : `${verdict(r.cpuRatio <= target)} [≤ ${target}]`;
      lines.push(
        `apply ${a.size.padEnd(8)} ${label.padEnd(12)} wall ${fmt(r.runnerWallMedianMs).padStart(8)} / ${fmt(r.bareWallMedianMs).padStart(8)} ×${r.wallRatio.toFixed(3)}; ` +
          `CPU ${fmt(r.runnerCpuMedianMs).padStart(8)} / ${fmt(r.bareCpuMedianMs).padStart(8)} ×${r.cpuRatio.toFixed(3)} ${cpuVerdict}; ` +
          `runner peak RSS ${mb(r.runnerPeakRssMaxBytes)} ${verdict(r.runnerPeakRssMaxBytes <= TARGETS.rssBytes)} [≤ 150 MB]`,
      );
    }
  }
  if (results.start) {
    const s = results.start;
    lines.push(
      `start (${s.node}): first spawn ÷ node -e 0: wall ×${s.firstSpawn.wallRatio.toFixed(2)} ${verdict(s.firstSpawn.wallRatio <= TARGETS.start)}, CPU ×${s.firstSpawn.cpuRatio.toFixed(2)} ${verdict(s.firstSpawn.cpuRatio <= TARGETS.start)} [≤ ${TARGETS.start}]`,
    );
    const snap = s.firstSpawnThroughSnapshot;
    lines.push(
      `start (${s.node}, startup snapshot): wall ×${snap.wallRatio.toFixed(2)}, CPU ×${snap.cpuRatio.toFixed(2)} ${verdict(snap.cpuRatio <= TARGETS.startSnapshot)} [≤ ${TARGETS.startSnapshot}]`,
    );
    const c = s.firstSpawnWithCompileCache;
    if (c)
      lines.push(
        `start (${s.node}, compile cache): wall ×${c.wallRatio.toFixed(2)} ${verdict(c.wallRatio <= TARGETS.start)}, CPU ×${c.cpuRatio.toFixed(2)} ${verdict(c.cpuRatio <= TARGETS.start)}`,
      );
  }
  for (const s of results.output)
    lines.push(
      `output ${String(s.mib).padStart(4)} MiB, ${s.case.padEnd(36)}: peak RSS ${mb(s.peakRssBytes)} ${verdict(s.peakRssBytes <= TARGETS.rssBytes)} [≤ 150 MB], ${fmt(s.ms)}`,
    );
  for (const s of results.memory)
    lines.push(
      `classify ${String(s.mib).padStart(5)} MiB: peak RSS ${mb(s.peakRssBytes)} ${verdict(s.peakRssBytes <= TARGETS.rssBytes)} [≤ 150 MB], ${fmt(s.ms)}, counts ${s.countsMatch ? 'match' : 'DIFFER'}`,
    );
  for (const s of results.policy)
    lines.push(
      `policy ${s.case}: peak RSS ${mb(s.peakRssBytes)} ${verdict(s.peakRssBytes <= TARGETS.rssBytes)} [≤ 150 MB], ${fmt(s.ms)} (CPU ${fmt(s.cpuMs)})${'refused' in s ? ', refused' : `, ${s.cost.toLocaleString('en-US')} units`}`,
    );
  for (const s of results.reader)
    lines.push(
      `reader ${s.document.padEnd(26)}: ${s.readerMBps.toFixed(1)} MB/s ${verdict(s.readerMBps >= TARGETS.readerMBps)} [≥ ${TARGETS.readerMBps}], JSON.parse ${s.jsonParseMBps.toFixed(1)} MB/s, ×${s.ratio.toFixed(2)} its CPU time`,
    );
  log(lines.join('\n'));
}

let opts: BenchOptions;
try {
  opts = parseOptions(process.argv.slice(2));
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
const b = setUp(opts);
const results: Results = {
  date: new Date().toISOString(),
  machine: {
    nproc: cpus().length,
    cpu: readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m)?.[1] ?? 'unknown',
    memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
    node: b.nodeVersion,
    terraform: spawnSync(b.terraform, ['version'], { encoding: 'utf8', env: b.env }).stdout.split('\n')[0],
    bundleBytes: statSync(b.runner).size,
    terraformRecord: b.terraformRecord !== undefined,
    snapshot: opts.snapshot,
    loadavgAtStart: loadavg(),
  },
  apply: [],
  start: undefined,
  memory: [],
  output: [],
  breakdown: undefined,
  policy: [],
  reader: [],
};

log(
  `captf-runner benchmark: ${results.machine.bundleBytes}-byte entry, ${b.nodeVersion}${opts.snapshot ? ' through the startup snapshot' : ''}, ${results.machine.terraform}${b.terraformRecord ? ' (verified: no version launch)' : ''}; ${results.machine.nproc} CPU, load ${results.machine.loadavgAtStart}; temp dir ${b.tmp}`,
);
try {
  if (opts.only.has('start')) results.start = benchStart(b);
  if (opts.only.has('apply')) for (const size of opts.sizes) results.apply.push(benchApply(b, size));
  if (opts.only.has('breakdown')) results.breakdown = benchBreakdown(b, opts.breakdownSize, opts.breakdownRuns);
  if (opts.only.has('memory')) for (const mib of opts.memoryMib) results.memory.push(benchMemory(b, mib));
  if (opts.only.has('output')) results.output.push(...benchOutput(b, opts.outputMib));
  if (opts.only.has('policy')) results.policy.push(...benchPolicy(b));
  if (opts.only.has('reader')) {
    const { rows, snapshotBlobBytes } = benchReader(b);
    results.reader.push(...rows);
    if (snapshotBlobBytes) results.readerSnapshotBlobBytes = snapshotBlobBytes;
  }
} catch (error) {
  summary(results);
  process.stderr.write(`bench: ${error instanceof Error ? error.stack : error}\n(temp dir kept: ${b.tmp})\n`);
  opts.keep = true;
  process.exit(1);
}
results.machine.loadavgAtEnd = loadavg();
summary(results);
if (opts.jsonOut !== '-') {
  mkdirSync(dirname(resolve(opts.jsonOut)), { recursive: true });
  writeFileSync(opts.jsonOut, `${JSON.stringify(results, null, 2)}\n`);
  log(`results: ${opts.jsonOut}`);
}
