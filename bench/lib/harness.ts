// What `npm run bench` (bench/run.ts) shares between its parts: the options, the runner, terraform and the temp
// dir set up once, a timed run of a process tree, interleaved pairs, and the figures' formats.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
// @ts-expect-error -- a plain ESM script shared with the build, no type declarations
import { buildSnapshotBlob as buildSnapshotBlobUntyped } from '../../scripts/image/snapshot-blob.mjs';
import { cleanEnv } from './env.ts';
import type { ModuleSize } from './module.ts';
import { writeVerifiedRecord } from './verified-terraform.ts';

const buildSnapshotBlob: (node: string, entry: string, blob: string) => void = buildSnapshotBlobUntyped;

export const REPO = resolve(import.meta.dirname, '../..');
/** scripts/generators/gen-plan.mjs: synthetic plan documents of a given size, its counts on stderr. */
export const GEN_PLAN = join(REPO, 'scripts/generators/gen-plan.mjs');
/** Preloaded into the runner's node: its own CPU, peak RSS, start and exit times. */
export const SELF_USAGE = join(REPO, 'bench/self-usage.cjs');
const RUSAGE = join(REPO, 'bench/rusage.py');

const PARTS = ['apply', 'start', 'memory', 'output', 'breakdown', 'policy', 'reader'] as const;
type Part = (typeof PARTS)[number];

/** A module size with the pairs of runs measured on it. */
export interface SizeWithPairs extends ModuleSize {
  pairs: number;
}

export interface BenchOptions {
  only: Set<Part>;
  sizes: SizeWithPairs[];
  startRounds: number;
  memoryMib: number[];
  outputMib: number;
  breakdownSize: SizeWithPairs;
  breakdownRuns: number;
  readerRounds: number;
  /** The node that runs the runner and `node -e 0`. */
  node: string;
  /** A built runner to measure instead of a fresh `npm run build`. */
  runner: string | undefined;
  terraform: string;
  /** Where the results go; - for nowhere. */
  jsonOut: string;
  keep: boolean;
  /** The runner of the apply, memory and output parts starts through the startup snapshot; the reader part also reads through snapshots. */
  snapshot: boolean;
  /** The runner answers `version` from a record of terraform made with the image build's checks (bench/lib/verified-terraform.ts). */
  verifiedTerraform: boolean;
  /** --no-change-only: the apply part measures its no-change pairs only (the pairs with changes take ×3 as long at 10,000 instances). */
  noChangeOnly: boolean;
}

const DEFAULT_PAIRS = 5;

/** Ends the process with exit 2: what the bench needs is wrong or missing. */
export function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

function positive(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number, not "${text}"`);
  return n;
}

function parseSize(text: string, withPairs: boolean): SizeWithPairs {
  const m = /^(\d+)x(\d+)(?::(\d+))?$/.exec(text.trim());
  if (!m || Number(m[2]) > 100 || (m[3] !== undefined && !withPairs))
    throw new Error(
      `"${text}" is not RESOURCESxINSTANCES${withPairs ? '[:PAIRS]' : ''} with INSTANCES ≤ 100 (plan time is quadratic in the instances of one resource)`,
    );
  return {
    resources: Number(m[1]),
    instances: Number(m[2]),
    pairs: m[3] === undefined ? DEFAULT_PAIRS : positive(m[3], 'PAIRS'),
  };
}

/** The command line's options (bench/run.ts lists them), checked: throws on a wrong one. */
export function parseOptions(args: string[]): BenchOptions {
  const { values: opts } = parseArgs({
    args,
    options: {
      only: { type: 'string', default: PARTS.join(',') },
      sizes: { type: 'string', default: '20x25:9,100x100:5' },
      'start-rounds': { type: 'string', default: '20' },
      'memory-mib': { type: 'string', default: '100,1024' },
      'output-mib': { type: 'string', default: '200' },
      'breakdown-size': { type: 'string', default: '20x25' },
      'breakdown-runs': { type: 'string', default: '5' },
      'reader-rounds': { type: 'string', default: '15' },
      node: { type: 'string' },
      runner: { type: 'string' },
      terraform: { type: 'string', default: 'terraform' },
      'json-out': { type: 'string', default: join(tmpdir(), 'captf-bench.json') },
      keep: { type: 'boolean', default: false },
      snapshot: { type: 'boolean', default: false },
      'verified-terraform': { type: 'boolean', default: false },
      'no-change-only': { type: 'boolean', default: false },
    },
  });
  const only = new Set<Part>();
  for (const part of opts.only.split(',')) {
    const known = PARTS.find((p) => p === part);
    if (!known) throw new Error(`--only: "${part}" is not one of ${PARTS.join(', ')}`);
    only.add(known);
  }
  return {
    only,
    sizes: opts.sizes.split(',').map((text) => parseSize(text, true)),
    breakdownSize: parseSize(opts['breakdown-size'], false),
    breakdownRuns: positive(opts['breakdown-runs'], '--breakdown-runs'),
    startRounds: positive(opts['start-rounds'], '--start-rounds'),
    memoryMib: opts['memory-mib'].split(',').map((s) => positive(s, '--memory-mib')),
    outputMib: positive(opts['output-mib'], '--output-mib'),
    readerRounds: positive(opts['reader-rounds'], '--reader-rounds'),
    node: opts.node ? resolve(opts.node) : process.execPath,
    runner: opts.runner,
    terraform: opts.terraform,
    jsonOut: opts['json-out'],
    keep: opts.keep,
    snapshot: opts.snapshot,
    verifiedTerraform: opts['verified-terraform'],
    noChangeOnly: opts['no-change-only'],
  };
}

/** The V8 flags the image's command gives node, and its blob is built under (runner/captf-runner.sh, scripts/image/snapshot-blob.sh). */
export const IMAGE_V8_FLAGS = ['--single-threaded', '--max-semi-space-size=8'];
/** What the image's command sets for a run through the snapshot (runner/captf-runner.sh). */
export const APPLY_ENV_SNAPSHOT = { GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1' };

/** What every part measures with: set up once by `setUp`. */
export interface Bench {
  opts: BenchOptions;
  /** The temp dir of this run (removed at exit unless --keep). */
  tmp: string;
  /** The node that runs the runner, and its `--version`. */
  node: string;
  nodeVersion: string;
  /** The runner's bundle, a copy in the temp dir. */
  runner: string;
  terraform: string;
  /** The environment the runner and terraform run in (bench/lib/env.ts). */
  env: NodeJS.ProcessEnv;
  /** With --snapshot, the runner's runs (apply, memory, output) start through the blob as the image's command starts them (runner/captf-runner.sh). */
  applyLaunch: string[];
  applyEnv: NodeJS.ProcessEnv;
  /** The startup snapshot's blob, made by the node that runs the runner (on first use). */
  snapshotBlob(): string;
  /** With --verified-terraform, the record beside the runner: its runs of `terraform` start no `version` launch. */
  terraformRecord: string | undefined;
}

function which(name: string): string {
  if (name.includes('/')) return resolve(name);
  const found = spawnSync('bash', ['-c', 'command -v "$1"', 'which', name], { encoding: 'utf8' }).stdout.trim();
  if (!found) fail(`${name} is not on PATH (pass --terraform PATH)`);
  return found;
}

/**
 * The bundle (built now unless --runner names one), copied so a rebuild during the run cannot change it; its
 * startup snapshot's bundle beside it; terraform; python3 for the process tree's CPU. Ends the process with exit
 * 2 when one of them is missing.
 */
export function setUp(opts: BenchOptions): Bench {
  if (!opts.runner) {
    const build = spawnSync(process.execPath, [join(REPO, 'scripts/build/build.mjs')], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (build.status !== 0) fail('npm run build failed');
  }
  const source = resolve(opts.runner ?? join(REPO, 'dist/captf-runner.mjs'));
  if (!existsSync(source)) fail(`${source} does not exist (pass --runner FILE, or leave it out to build dist/)`);
  if (spawnSync('python3', ['-c', 'import os; os.wait4'], { stdio: 'ignore' }).status !== 0)
    fail('python3 is needed (bench/rusage.py measures the CPU time of a process tree)');
  if (spawnSync(opts.node, ['-e', '0']).status !== 0) fail(`${opts.node} does not run \`node -e 0\``);
  const terraform = which(opts.terraform);

  const tmp = mkdtempSync(join(tmpdir(), 'captf-bench-'));
  process.on('exit', () => {
    if (!opts.keep) rmSync(tmp, { recursive: true, force: true });
  });
  process.on('SIGINT', () => process.exit(130));
  const runner = join(tmp, 'runner/captf-runner.mjs');
  mkdirSync(dirname(runner));
  copyFileSync(source, runner);
  // The bundle is built with code splitting: the entry imports its chunks from ./chunks/ next to it.
  if (existsSync(join(dirname(source), 'chunks')))
    cpSync(join(dirname(source), 'chunks'), join(dirname(runner), 'chunks'), { recursive: true });
  // The startup snapshot's bundle and libraries beside the runner's (scripts/build/build-snapshot.mjs): the blob
  // is made by --node.
  const snapshotDir = join(dirname(runner), 'snapshot');
  cpSync(join(dirname(source), 'snapshot'), snapshotDir, { recursive: true });
  const blob = join(snapshotDir, 'captf-runner.blob');
  rmSync(blob, { force: true });
  const snapshotBlob = () => {
    if (!existsSync(blob)) buildSnapshotBlob(opts.node, join(snapshotDir, 'captf-runner.cjs'), blob);
    return blob;
  };
  const env = cleanEnv();
  let terraformRecord: string | undefined;
  try {
    if (opts.verifiedTerraform) terraformRecord = writeVerifiedRecord(REPO, terraform, dirname(runner), env);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  return {
    opts,
    tmp,
    node: opts.node,
    nodeVersion: spawnSync(opts.node, ['--version'], { encoding: 'utf8' }).stdout.trim(),
    runner,
    terraform,
    env,
    applyLaunch: opts.snapshot ? [...IMAGE_V8_FLAGS, '--snapshot-blob', snapshotBlob()] : [],
    applyEnv: opts.snapshot ? APPLY_ENV_SNAPSHOT : {},
    snapshotBlob,
    terraformRecord,
  };
}

/** What the summary marks met or MISSED: ratios, peak RSS in bytes, the reader's MB/s (BENCHMARKS.md has each target's latest bound). */
export const TARGETS = { start: 1.3, startSnapshot: 2.5, rssBytes: 150e6, readerMBps: 50 };

/** Issue 44's bounds on a no-change apply's CPU ÷ the person's steps', by instance count; other sizes and the runs with changes have none. */
export const APPLY_CPU_TARGETS: Readonly<Record<number, number>> = { 500: 1.45, 10_000: 1.1 };

export const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** This process's own CPU time so far, user and system, in ms. */
export const ownCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** The median of the defined values, undefined when there are none. */
export function median(xs: (number | undefined)[]): number | undefined {
  const s = xs.filter((x) => x !== undefined).sort((a, b) => a - b);
  if (!s.length) return undefined;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The median of a series that has values (a part's rounds); throws on an empty one. */
export function medianOf(xs: number[]): number {
  const m = median(xs);
  if (m === undefined) throw new Error('the median of no values');
  return m;
}

export const fmt = (ms: number | undefined) =>
  ms === undefined
    ? '–'
    : Math.abs(ms) >= 10_000
      ? `${(ms / 1000).toFixed(1)} s`
      : Math.abs(ms) >= 1000
        ? `${(ms / 1000).toFixed(2)} s`
        : `${ms.toFixed(1)} ms`;
export const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
export const log = (line: string) => process.stdout.write(`${line}\n`);
export const now = () => performance.timeOrigin + performance.now();
/** A word for bash, quoted. */
export const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** What bench/self-usage.cjs writes for the node it is preloaded into. */
export interface SelfUsage {
  cpuMs: number;
  maxRssBytes: number;
  /** ms since the epoch. */
  startedAtMs: number;
  exitAtMs: number;
}

export const readSelfUsage = (file: string): SelfUsage => JSON.parse(readFileSync(file, 'utf8'));

/** A run timed by bench/rusage.py, in ms. */
export interface Timed {
  ms: number;
  /** User + system of the command and every descendant it waited for. */
  cpuMs: number;
  /** ms since the epoch. */
  launchedAtMs: number;
  endedAtMs: number;
  /** What the command wrote to stderr. */
  stderr: string;
}

/**
 * Runs a command to completion under bench/rusage.py: when it was launched, its wall time and CPU
 * time (user + system of the command and every descendant it waited for), in ms. Throws with the
 * stderr tail when the exit code is not 0.
 */
export function timed(b: Bench, file: string, args: string[], env: NodeJS.ProcessEnv = b.env): Timed {
  const usageFile = join(b.tmp, 'rusage.txt');
  const r = spawnSync('python3', [RUSAGE, usageFile, file, ...args], {
    env,
    cwd: b.tmp,
    stdio: ['ignore', 'ignore', 'pipe'],
    maxBuffer: 256 * 2 ** 20,
  });
  if (r.status !== 0)
    throw new Error(`${file} ${args.join(' ')} exited ${r.status ?? r.signal}:\n${String(r.stderr).slice(-3000)}`);
  const [launchedUs, wallUs, userUs, systemUs] = readFileSync(usageFile, 'utf8').trim().split(' ').map(Number);
  return {
    ms: wallUs / 1000,
    cpuMs: (userUs + systemUs) / 1000,
    launchedAtMs: launchedUs / 1000,
    endedAtMs: (launchedUs + wallUs) / 1000,
    stderr: String(r.stderr),
  };
}

/** The figures of interleaved pairs of runs of the runner and the bare steps (the results' apply part). */
export interface Pairs {
  pairs: number;
  runnerWallMs: number[];
  bareWallMs: number[];
  runnerCpuMs: number[];
  bareCpuMs: number[];
  runnerSelfCpuMs: number[];
  runnerPeakRssBytes: number[];
  loadavg: string[];
  runnerWallMedianMs: number;
  bareWallMedianMs: number;
  runnerCpuMedianMs: number;
  bareCpuMedianMs: number;
  runnerSelfCpuMedianMs: number;
  runnerPeakRssMaxBytes: number;
  wallRatio: number;
  cpuRatio: number;
}

/** Pairs of runs, the order alternating (AB, BA, AB…): the noise of a shared machine falls on both sides. */
export function interleave(
  count: number,
  runner: (k: number) => Timed & { self: SelfUsage },
  bare: (k: number) => Timed,
  label: string,
): Pairs {
  const rs: (Timed & { self: SelfUsage; load: string })[] = [];
  const bs: Timed[] = [];
  for (let k = 0; k < count; k++) {
    const load = loadavg();
    let r: Timed & { self: SelfUsage };
    let b: Timed;
    if (k % 2 === 0) {
      r = runner(k);
      b = bare(k);
    } else {
      b = bare(k);
      r = runner(k);
    }
    rs.push({ ...r, load });
    bs.push(b);
    log(
      `  ${label} #${k + 1} (load ${load}): wall ${fmt(r.ms)} / ${fmt(b.ms)} ×${(r.ms / b.ms).toFixed(3)}; CPU ${fmt(r.cpuMs)} / ${fmt(b.cpuMs)} ×${(r.cpuMs / b.cpuMs).toFixed(3)}; node's own CPU ${fmt(r.self.cpuMs)}, peak RSS ${mb(r.self.maxRssBytes)}`,
    );
  }
  return {
    pairs: count,
    runnerWallMs: rs.map((x) => x.ms),
    bareWallMs: bs.map((x) => x.ms),
    runnerCpuMs: rs.map((x) => x.cpuMs),
    bareCpuMs: bs.map((x) => x.cpuMs),
    runnerSelfCpuMs: rs.map((x) => x.self.cpuMs),
    runnerPeakRssBytes: rs.map((x) => x.self.maxRssBytes),
    loadavg: rs.map((x) => x.load),
    runnerWallMedianMs: medianOf(rs.map((x) => x.ms)),
    bareWallMedianMs: medianOf(bs.map((x) => x.ms)),
    runnerCpuMedianMs: medianOf(rs.map((x) => x.cpuMs)),
    bareCpuMedianMs: medianOf(bs.map((x) => x.cpuMs)),
    runnerSelfCpuMedianMs: medianOf(rs.map((x) => x.self.cpuMs)),
    runnerPeakRssMaxBytes: Math.max(...rs.map((x) => x.self.maxRssBytes)),
    wallRatio: medianOf(rs.map((x, k) => x.ms / bs[k].ms)),
    cpuRatio: medianOf(rs.map((x, k) => x.cpuMs / bs[k].cpuMs)),
  };
}
