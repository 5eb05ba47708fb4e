#!/usr/bin/env node
// What the runner costs on top of terraform, measured side by side in one run on one machine
// (BENCHMARKS.md states the targets and the figures). Nothing here is a test: it prints figures.
//
//   1. apply: `captf-runner apply --kind cluster` ÷ the steps a person runs by hand on the same
//      module (bench/bare-apply.sh: init, validate, plan -detailed-exitcode -out, show -json, apply
//      PLANFILE when there are changes), each side on its own copy of the module and its own state,
//      no changes and changes, wall and CPU (user + system of the whole process tree) ratios, the
//      median of interleaved pairs whose order alternates; and the runner node's own peak RSS.
//   2. start: from launch to the runner's first terraform spawn ÷ `node -e 0`, interleaved rounds;
//      with another node (--node) and its compile cache (NODE_COMPILE_CACHE) when that node has one.
//   3. memory: `captf-runner classify -` of synthetic plan documents up to 1 GiB: peak RSS.
//   4. breakdown: where the runner's extra time goes, from traced runs of both sides: every terraform
//      launch (start, end, CPU), the runner's result.json steps[], and the node process's own start
//      and exit.
//   5. policy: `captf-runner classify --policy DIR -` under the worst rules: the issue's (refused
//      when the policy loads) and rules that pass the estimate but spend their whole budget on
//      every change of a plan with 9,000-character keys, until the plan's budget runs out: wall
//      and CPU time, cost units, µs a unit, peak RSS.
//   6. reader: the streaming JSON reader (src/json/select-json.ts) cold, on the first document of a
//      fresh process: a `state pull` of 500 instances (≈ 230 KB), `show -json` documents of ≈ 530 KB
//      and 4 MiB; MB/s, and ÷ JSON.parse of the same bytes, each in a fresh process, interleaved.
//
//   npm run bench                               # builds, runs everything (~15 min on 2 CPUs)
//   npm run bench -- --only apply --sizes 20x25:5
//   npm run bench -- --only start --node /path/to/node24/bin/node
//
// Options: --only apply,start,memory,output,breakdown,policy,reader; --reader-rounds N (15); --sizes RxN[:PAIRS],... (default 20x25:9,100x100:5;
// R resources of N instances each, N ≤ 100); --start-rounds N (20); --memory-mib A,B,... (100,1024);
// --breakdown-size RxN (20x25); --breakdown-runs N (5); --node PATH (the node that runs the runner
// and `node -e 0`; default the one running this script); --runner FILE (default: `npm run build`,
// then dist/captf-runner.mjs); --terraform PATH (terraform on PATH); --json-out FILE (default
// $TMPDIR/captf-bench.json, so that a trial run never overwrites the committed figures; - for none); --keep (keep the temp dir);
// --snapshot (part 1's runner starts through the startup snapshot, as the image's command starts it; part 6 also reads
// through snapshots of its worker, with and without the reader's warm-up in their build).
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildSnapshotBlob } from '../scripts/image/snapshot-blob.mjs';
import { cleanEnv } from './lib/env.ts';
import { moduleText, stateText } from './lib/module.ts';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: opts } = parseArgs({
  options: {
    only: { type: 'string', default: 'apply,start,memory,output,breakdown,policy,reader' },
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
  },
});
const ONLY = new Set(opts.only.split(','));
const PARTS = ['apply', 'start', 'memory', 'output', 'breakdown', 'policy', 'reader'];
for (const part of ONLY) if (!PARTS.includes(part)) fail(`--only: "${part}" is not one of ${PARTS.join(', ')}`);
const DEFAULT_PAIRS = 5;
const SIZES = opts.sizes.split(',').map((text) => parseSize(text, true));
const BREAKDOWN_SIZE = parseSize(opts['breakdown-size'], false);
const BREAKDOWN_RUNS = positive(opts['breakdown-runs'], '--breakdown-runs');
const START_ROUNDS = positive(opts['start-rounds'], '--start-rounds');
const MEMORY_MIB = opts['memory-mib'].split(',').map((s) => positive(s, '--memory-mib'));
const OUTPUT_MIB = positive(opts['output-mib'], '--output-mib');
const READER_ROUNDS = positive(opts['reader-rounds'], '--reader-rounds');
const NODE = opts.node ? resolve(opts.node) : process.execPath;

function parseSize(text, withPairs) {
  const m = /^(\d+)x(\d+)(?::(\d+))?$/.exec(text.trim());
  if (!m || Number(m[2]) > 100 || (m[3] !== undefined && !withPairs))
    fail(
      `"${text}" is not RESOURCESxINSTANCES${withPairs ? '[:PAIRS]' : ''} with INSTANCES ≤ 100 (plan time is quadratic in the instances of one resource)`,
    );
  return {
    resources: Number(m[1]),
    instances: Number(m[2]),
    pairs: m[3] === undefined ? DEFAULT_PAIRS : positive(m[3], 'PAIRS'),
  };
}
function positive(text, name) {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n <= 0) fail(`${name} must be a positive whole number, not "${text}"`);
  return n;
}
function fail(message) {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// Setup: the bundle (built now unless --runner names one), copied so a rebuild during the run cannot
// change it; terraform; python3 for the process tree's CPU.

if (!opts.runner) {
  const build = spawnSync(process.execPath, [join(REPO, 'scripts/build/build.mjs')], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status !== 0) fail('npm run build failed');
}
const RUNNER_SOURCE = resolve(opts.runner ?? join(REPO, 'dist/captf-runner.mjs'));
if (!existsSync(RUNNER_SOURCE))
  fail(`${RUNNER_SOURCE} does not exist (pass --runner FILE, or leave it out to build dist/)`);
if (spawnSync('python3', ['-c', 'import os; os.wait4'], { stdio: 'ignore' }).status !== 0)
  fail('python3 is needed (bench/rusage.py measures the CPU time of a process tree)');
if (spawnSync(NODE, ['-e', '0']).status !== 0) fail(`${NODE} does not run \`node -e 0\``);

const TMP = mkdtempSync(join(tmpdir(), 'captf-bench-'));
const RUNNER = join(TMP, 'runner/captf-runner.mjs');
mkdirSync(dirname(RUNNER));
copyFileSync(RUNNER_SOURCE, RUNNER);
// The bundle is built with code splitting: the entry imports its chunks from ./chunks/ next to it.
if (existsSync(join(dirname(RUNNER_SOURCE), 'chunks')))
  cpSync(join(dirname(RUNNER_SOURCE), 'chunks'), join(dirname(RUNNER), 'chunks'), { recursive: true });
/** The startup snapshot's bundle and libraries beside the runner's (scripts/build/build-snapshot.mjs): part 2 makes a blob with --node. */
const SNAPSHOT_DIR = join(dirname(RUNNER), 'snapshot');
cpSync(join(dirname(RUNNER_SOURCE), 'snapshot'), SNAPSHOT_DIR, { recursive: true });
rmSync(join(SNAPSHOT_DIR, 'captf-runner.blob'), { force: true });
const SNAPSHOT_BLOB = join(SNAPSHOT_DIR, 'captf-runner.blob');
/** The startup snapshot's blob, made by the node that runs the runner (on first use). */
function snapshotBlob() {
  if (!existsSync(SNAPSHOT_BLOB)) buildSnapshotBlob(NODE, join(SNAPSHOT_DIR, 'captf-runner.cjs'), SNAPSHOT_BLOB);
  return SNAPSHOT_BLOB;
}
/** The V8 flags the image's command gives node, and its blob is built under (runner/captf-runner.sh, scripts/image/snapshot-blob.sh). */
const IMAGE_V8_FLAGS = ['--single-threaded'];
/** With --snapshot, the applies start through the blob as the image's command starts them (runner/captf-runner.sh). */
const APPLY_LAUNCH = opts.snapshot ? [...IMAGE_V8_FLAGS, '--snapshot-blob', snapshotBlob()] : [];
/** What the image's command sets for a run through the snapshot (runner/captf-runner.sh). */
const APPLY_ENV_SNAPSHOT = { GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1' };
const APPLY_ENV = opts.snapshot ? APPLY_ENV_SNAPSHOT : {};

const TERRAFORM = which(opts.terraform);
const BARE = join(REPO, 'bench/bare-apply.sh');
const GEN_PLAN = join(REPO, 'scripts/generators/gen-plan.mjs');
/** The test suite's fake terraform, which prints enormous output on request (test/support/fake-terraform.mjs). */
const FAKE_TERRAFORM = join(REPO, 'test/support/fake-terraform.mjs');
/** Preloaded into the runner's node: its own CPU, peak RSS, start and exit times. */
const SELF_USAGE = join(REPO, 'bench/self-usage.cjs');
const RUSAGE = join(REPO, 'bench/rusage.py');
const ENV = cleanEnv();

process.on('exit', () => {
  if (!opts.keep) rmSync(TMP, { recursive: true, force: true });
});
process.on('SIGINT', () => process.exit(130));

function which(name) {
  if (name.includes('/')) return resolve(name);
  const found = spawnSync('bash', ['-c', 'command -v "$1"', 'which', name], { encoding: 'utf8' }).stdout.trim();
  if (!found) fail(`${name} is not on PATH (pass --terraform PATH)`);
  return found;
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const nodeVersion = spawnSync(NODE, ['--version'], { encoding: 'utf8' }).stdout.trim();
const results = {
  date: new Date().toISOString(),
  machine: {
    nproc: cpus().length,
    cpu: readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m)?.[1] ?? 'unknown',
    memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
    node: nodeVersion,
    terraform: spawnSync(TERRAFORM, ['version'], { encoding: 'utf8', env: ENV }).stdout.split('\n')[0],
    bundleBytes: statSync(RUNNER).size,
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

const median = (xs) => {
  const s = xs.filter((x) => x !== undefined).sort((a, b) => a - b);
  if (!s.length) return undefined;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (ms) =>
  ms === undefined
    ? '–'
    : Math.abs(ms) >= 10_000
      ? `${(ms / 1000).toFixed(1)} s`
      : Math.abs(ms) >= 1000
        ? `${(ms / 1000).toFixed(2)} s`
        : `${ms.toFixed(1)} ms`;
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const log = (line) => process.stdout.write(line + '\n');
const now = () => performance.timeOrigin + performance.now();
/** A word for bash, quoted. */
const q = (s) => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * Runs a command to completion under bench/rusage.py: when it was launched, its wall time and CPU
 * time (user + system of the command and every descendant it waited for), in ms. Throws with the
 * stderr tail when the exit code is not 0.
 */
function timed(file, args, { env = ENV, cwd = TMP, stdin = 'ignore' } = {}) {
  const usageFile = join(TMP, 'rusage.txt');
  const r = spawnSync('python3', [RUSAGE, usageFile, file, ...args], {
    env,
    cwd,
    stdio: [stdin, 'ignore', 'pipe'],
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
  };
}

/** Pairs of runs, the order alternating (AB, BA, AB…): the noise of a shared machine falls on both sides. */
function interleave(count, runner, bare, label) {
  const rs = [];
  const bs = [];
  for (let k = 0; k < count; k++) {
    const load = loadavg();
    if (k % 2 === 0) {
      rs.push(runner(k));
      bs.push(bare(k));
    } else {
      bs.push(bare(k));
      rs.push(runner(k));
    }
    const [r, b] = [rs[k], bs[k]];
    log(
      `  ${label} #${k + 1} (load ${load}): wall ${fmt(r.ms)} / ${fmt(b.ms)} ×${(r.ms / b.ms).toFixed(3)}; CPU ${fmt(r.cpuMs)} / ${fmt(b.cpuMs)} ×${(r.cpuMs / b.cpuMs).toFixed(3)}; node's own CPU ${fmt(r.self.cpuMs)}, peak RSS ${mb(r.self.maxRssBytes)}`,
    );
    r.load = load;
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
    runnerWallMedianMs: median(rs.map((x) => x.ms)),
    bareWallMedianMs: median(bs.map((x) => x.ms)),
    runnerCpuMedianMs: median(rs.map((x) => x.cpuMs)),
    bareCpuMedianMs: median(bs.map((x) => x.cpuMs)),
    runnerSelfCpuMedianMs: median(rs.map((x) => x.self.cpuMs)),
    runnerPeakRssMaxBytes: Math.max(...rs.map((x) => x.self.maxRssBytes)),
    wallRatio: median(rs.map((x, k) => x.ms / bs[k].ms)),
    cpuRatio: median(rs.map((x, k) => x.cpuMs / bs[k].cpuMs)),
  };
}

// ---------------------------------------------------------------------------------------------
// The module, the states, and one run of each side.

/**
 * Two sides of one module, each with its own copy of it and its own state, equal at the start:
 *   runner/  module/ (what --module names), inputs/terraform.tfvars.json, runner.tfstate (--state),
 *            out/ (result.json, the backups); the runner copies the module into a fresh workdir
 *            of its own each run, as in a Job.
 *   bare/    the person's checkout: main.tf, terraform.tfvars.json, terraform.tfstate; its
 *            .terraform/ and plan file are removed before each run (untimed), so that init starts
 *            from nothing as in the runner's fresh workdir.
 * The runner's first apply (untimed) records its inputs hash: from then on its state holds one more
 * resource than the person's, the runner's own record of its inputs.
 */
function setUpSides(dir, size) {
  const tf = moduleText(size);
  const state = stateText(size, 'g0');
  mkdirSync(join(dir, 'runner/module'), { recursive: true });
  mkdirSync(join(dir, 'runner/inputs'), { recursive: true });
  mkdirSync(join(dir, 'runner/out'), { recursive: true });
  mkdirSync(join(dir, 'bare'), { recursive: true });
  writeFileSync(join(dir, 'runner/module/main.tf'), tf);
  writeFileSync(join(dir, 'bare/main.tf'), tf);
  writeFileSync(join(dir, 'runner/runner.tfstate'), state);
  writeFileSync(join(dir, 'bare/terraform.tfstate'), state);
  // Only the runner's record of its inputs changes: the outcome is noChanges.
  const first = runnerApply(dir, 'g0', { terraform: TERRAFORM, expect: 'noChanges' });
  const counts = first.result.plan?.counts ?? {};
  if (counts.create !== 0 || counts.noop !== size.resources * size.instances)
    throw new Error(`the first apply did not see the synthetic state as up to date: ${JSON.stringify(counts)}`);
  const bareFirst = bareApply(dir, 'g0', { terraform: TERRAFORM, expectChanges: false });
  return { first, bareFirst };
}

function runnerApply(dir, gen, { terraform, expect }) {
  writeFileSync(join(dir, 'runner/inputs/terraform.tfvars.json'), JSON.stringify({ gen }));
  const resultFile = join(dir, 'runner/out/result.json');
  rmSync(resultFile, { force: true });
  const usageFile = join(TMP, 'self-usage.json');
  rmSync(usageFile, { force: true });
  const d = join(dir, 'runner');
  const args = [
    ...APPLY_LAUNCH,
    '--require',
    SELF_USAGE,
    RUNNER,
    'apply',
    '--kind',
    'cluster',
    '--module',
    join(d, 'module'),
    '--inputs',
    join(d, 'inputs'),
    '--state',
    join(d, 'runner.tfstate'),
    '--new-state',
    '--out',
    join(d, 'out'),
    '--termination-log',
    join(d, 'termination-log'),
    '--log-format',
    'json',
    '--terraform',
    terraform,
    '--image',
    'bench',
  ];
  const t = timed(NODE, args, { env: { ...ENV, ...APPLY_ENV, BENCH_SELF_USAGE_FILE: usageFile } });
  const result = JSON.parse(readFileSync(resultFile, 'utf8'));
  if (result.outcome !== expect)
    throw new Error(
      `the runner's apply ended ${result.outcome} (${result.reason}: ${result.message}), expected ${expect}`,
    );
  return { ...t, self: JSON.parse(readFileSync(usageFile, 'utf8')), result };
}

const serialOf = (file) => JSON.parse(readFileSync(file, 'utf8')).serial;

function bareApply(dir, gen, { terraform, expectChanges }) {
  const d = join(dir, 'bare');
  writeFileSync(join(d, 'terraform.tfvars.json'), JSON.stringify({ gen }));
  rmSync(join(d, '.terraform'), { recursive: true, force: true });
  rmSync(join(d, 'tfplan'), { force: true });
  const serial = serialOf(join(d, 'terraform.tfstate'));
  const t = timed('bash', [BARE, terraform, d]);
  // The baseline did what it was measured for: applied exactly when there were changes.
  const applied = serialOf(join(d, 'terraform.tfstate')) !== serial;
  if (applied !== expectChanges)
    throw new Error(`the bare steps ${applied ? 'applied' : 'did not apply'} with var.gen = ${gen}`);
  return t;
}

// ---------------------------------------------------------------------------------------------
// 1. apply ÷ the bare steps.

function benchApply(size) {
  const name = `${size.resources}x${size.instances}`;
  const instances = size.resources * size.instances;
  log(
    `\n== apply, ${size.resources} resources × ${size.instances} instances (${instances} instances), ${size.pairs} pairs each`,
  );
  const dir = join(TMP, `apply-${name}`);
  setUpSides(dir, size);
  const noChanges = interleave(
    size.pairs,
    () => runnerApply(dir, 'g0', { terraform: TERRAFORM, expect: 'noChanges' }),
    () => bareApply(dir, 'g0', { terraform: TERRAFORM, expectChanges: false }),
    'no changes',
  );
  // Changes: every run gives r0 a new value, so each side updates r0's instances (the runner also its own record).
  let updates;
  const changes = interleave(
    size.pairs,
    (k) => {
      const r = runnerApply(dir, `runner-${k}`, { terraform: TERRAFORM, expect: 'succeeded' });
      updates = r.result.plan.counts.update;
      return r;
    },
    (k) => bareApply(dir, `bare-${k}`, { terraform: TERRAFORM, expectChanges: true }),
    `${size.instances} updates`,
  );
  results.apply.push({
    size: name,
    resources: size.resources,
    instancesEach: size.instances,
    instances,
    updatesPerChange: updates,
    noChanges,
    changes,
  });
  rmSync(dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// 2. Start: `node -e 0` and the time from launching `captf-runner apply` until it spawns terraform
// (a stand-in that records $EPOCHREALTIME as it starts, then fails), in one bash loop with
// $EPOCHREALTIME (µs, no fork), interleaved. CPU too: node's own for `node -e 0` (a second run with the
// preload, so that the timed one is plain), and
// for the runner its threads' CPU so far (/proc/PPID/task/*/schedstat, read by the stand-in).

const hasCompileCache = (() => {
  const [major, minor] = nodeVersion.slice(1).split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 1);
})();

function benchStart() {
  log(
    `\n== start, ${START_ROUNDS} interleaved rounds, ${nodeVersion}${hasCompileCache ? ', with and without a compile cache' : ''}`,
  );
  const dir = join(TMP, 'start');
  for (const sub of ['module', 'inputs', 'out']) mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(join(dir, 'module/main.tf'), 'resource "terraform_data" "x" {}\n');
  const stamp = join(dir, 'stamp');
  const usage = join(dir, 'usage.json');
  const standin = join(dir, 'terraform');
  writeFileSync(
    standin,
    `#!/bin/bash\nt=\${EPOCHREALTIME/./}\nc=0\nfor f in /proc/$PPID/task/*/schedstat; do read -r n _ <"$f" && c=$((c + n)); done 2>/dev/null\necho "$t $c" >>'${stamp}'\nexit 1\n`,
  );
  chmodSync(standin, 0o755);
  const node = q(NODE);
  const apply = `${q(RUNNER)} apply --kind cluster --module ${q(dir + '/module')} --inputs ${q(dir + '/inputs')} --state ${q(dir + '/state.tfstate')} --new-state --out ${q(dir + '/out')} --termination-log ${q(dir + '/termination-log')} --log-format json --terraform ${q(standin)} >/dev/null 2>&1`;
  // What a compile cache would save (the image carries none: it is not byte-identical build to build): one run fills it first.
  const cached = `NODE_COMPILE_CACHE=${q(dir + '/compile-cache')}`;
  const cachedRounds = hasCompileCache ? `s=\${EPOCHREALTIME/./}; ${cached} ${node} ${apply}; spawned spawnCached` : '';
  // Through the startup snapshot, as the image starts it: its command (runner/captf-runner.sh) naming this node and
  // the runner here, and a blob made by this node.
  const launcher = join(dirname(RUNNER), 'captf-runner.sh');
  writeFileSync(
    launcher,
    readFileSync(join(REPO, 'runner/captf-runner.sh'), 'utf8')
      .replace(/^lib=.*$/m, `lib=${q(dirname(RUNNER))}`)
      .replace(/^node=.*$/m, `node=${q(NODE)}`),
    { mode: 0o755 },
  );
  const blob = snapshotBlob();
  const launched = `PATH=${q(dirname(NODE))}:"$PATH" ${q(launcher)} ${apply.slice(q(RUNNER).length + 1)}`;
  const snapshotRounds = `s=\${EPOCHREALTIME/./}; ${launched}; spawned spawnSnapshot`;
  const script = `
set -u
export BENCH_SELF_USAGE_FILE=${q(usage)}
spawned() { read -r f c < <(sort -n ${q(stamp)} | head -1); echo "$1 $((f - s)) $((c / 1000))"; rm -f ${q(stamp)}; }
${hasCompileCache ? `${cached} ${node} ${apply};` : ''} ${node} ${apply}; ${launched}; rm -f ${q(stamp)}
for k in $(seq ${START_ROUNDS}); do
  s=\${EPOCHREALTIME/./}; ${node} -e 0; e=\${EPOCHREALTIME/./}; echo "node $((e - s))"
  ${node} --require ${q(SELF_USAGE)} -e 0
  s=\${EPOCHREALTIME/./}; ${node} ${apply}; spawned spawn
  ${cachedRounds}
  ${snapshotRounds}
  s=\${EPOCHREALTIME/./}; ${q(standin)} version; spawned standin
done`;
  const r = spawnSync('bash', ['-c', script], { env: ENV, encoding: 'utf8', cwd: dir });
  const wall = {};
  // `node -e 0`'s CPU: its own, one line per round from the preload (timed without it); the runner's: µs from the stand-in.
  const cpu = {
    node: existsSync(usage)
      ? readFileSync(usage, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).cpuMs)
      : [],
  };
  for (const line of r.stdout.split('\n').filter(Boolean)) {
    const [k, w, c] = line.split(' ');
    (wall[k] ??= []).push(Number(w) / 1000);
    if (k !== 'node') (cpu[k] ??= []).push(Number(c) / 1000);
  }
  if (
    wall.spawnSnapshot?.length !== START_ROUNDS ||
    wall.spawn?.length !== START_ROUNDS ||
    wall.node?.length !== START_ROUNDS ||
    cpu.node.length !== START_ROUNDS
  )
    throw new Error(`the start loop failed:\n${r.stdout}\n${r.stderr}`);
  const ratio = (series, k) => median(series[k].map((v, i) => v / series.node[i]));
  const side = (k) => ({
    wallMedianMs: median(wall[k]),
    cpuMedianMs: median(cpu[k]),
    wallRatio: ratio(wall, k),
    cpuRatio: ratio(cpu, k),
  });
  results.start = {
    node: nodeVersion,
    rounds: START_ROUNDS,
    nodeE0: { wallMedianMs: median(wall.node), cpuMedianMs: median(cpu.node) },
    firstSpawn: side('spawn'),
    firstSpawnWithCompileCache: hasCompileCache ? side('spawnCached') : undefined,
    firstSpawnThroughSnapshot: side('spawnSnapshot'),
    snapshotBlobBytes: statSync(blob).size,
    standinOwnStartMedianMs: median(wall.standin),
    wall,
    cpu,
  };
  const s = results.start;
  log(`  node -e 0: wall ${fmt(s.nodeE0.wallMedianMs)}, CPU ${fmt(s.nodeE0.cpuMedianMs)}`);
  log(
    `  until the first spawn: wall ${fmt(s.firstSpawn.wallMedianMs)} ×${s.firstSpawn.wallRatio.toFixed(2)}, CPU ${fmt(s.firstSpawn.cpuMedianMs)} ×${s.firstSpawn.cpuRatio.toFixed(2)} (the stand-in's own start, ${fmt(s.standinOwnStartMedianMs)}, included in the wall)`,
  );
  {
    const c = s.firstSpawnThroughSnapshot;
    log(
      `  the same through the startup snapshot (${mb(s.snapshotBlobBytes)} blob): wall ${fmt(c.wallMedianMs)} ×${c.wallRatio.toFixed(2)}, CPU ${fmt(c.cpuMedianMs)} ×${c.cpuRatio.toFixed(2)} [≤ ${TARGETS.startSnapshot}]`,
    );
  }
  if (s.firstSpawnWithCompileCache) {
    const c = s.firstSpawnWithCompileCache;
    log(
      `  the same with the compile cache: wall ${fmt(c.wallMedianMs)} ×${c.wallRatio.toFixed(2)}, CPU ${fmt(c.cpuMedianMs)} ×${c.cpuRatio.toFixed(2)}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Memory: `captf-runner classify --json -` of synthetic plan documents fed through a pipe (as
// terraform's stdout is), peak RSS of the runner process (its own ru_maxrss, from the preload).

function benchMemory(mib) {
  const file = join(TMP, `plan-${mib}MiB.json`);
  log(`\n== classify of a synthetic plan of ${mib} MiB`);
  const gen = spawnSync(process.execPath, [GEN_PLAN, '--bytes', String(mib * 2 ** 20), '--out', file], {
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (gen.status !== 0) throw new Error(`gen-plan failed: ${gen.stderr}`);
  const expected = JSON.parse(gen.stderr.trim().split('\n').at(-1));
  try {
    spawnSync('bash', ['-c', `cat ${q(file)} >/dev/null`]); // into the page cache
    const out = join(TMP, 'classify.json');
    const usageFile = join(TMP, 'classify-usage.json');
    rmSync(usageFile, { force: true });
    const started = now();
    const r = spawnSync(
      'bash',
      [
        '-c',
        `set -euo pipefail; cat ${q(file)} | ${q(NODE)} --require ${q(SELF_USAGE)} ${q(RUNNER)} classify --json - >${q(out)}`,
      ],
      { env: { ...ENV, BENCH_SELF_USAGE_FILE: usageFile }, stdio: 'ignore' },
    );
    const ms = now() - started;
    if (r.status !== 0) throw new Error(`classify of ${mib} MiB exited ${r.status}`);
    const peakRssBytes = JSON.parse(readFileSync(usageFile, 'utf8')).maxRssBytes;
    const got = JSON.parse(readFileSync(out, 'utf8'));
    const countsMatch =
      JSON.stringify(got.counts) === JSON.stringify(expected.counts) &&
      got.destructiveTotal === expected.destructiveTotal &&
      JSON.stringify(got.outputChanges) === JSON.stringify(expected.outputChanges) &&
      got.failClosed.length === 0;
    const bytes = statSync(file).size;
    results.memory.push({ mib, bytes, resources: expected.resources, ms, peakRssBytes, countsMatch });
    log(
      `  ${fmt(ms)} (${(bytes / 2 ** 20 / (ms / 1000)).toFixed(0)} MiB/s), peak RSS ${mb(peakRssBytes)}, counts ${countsMatch ? 'match the generator' : `DIFFER: ${JSON.stringify(got.counts)} vs ${JSON.stringify(expected.counts)}`}`,
    );
  } finally {
    rmSync(file, { force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// 4. Output: terraform printing hundreds of MB (the test suite's fake terraform) streams through the
// runner's masker to its stdout and stderr, read by a pipe, once by a reader that stalls for 5 s
// first (a kubelet under pressure: the runner must stop reading terraform, not buffer). Peak RSS of
// the runner process, and the bytes that came through.

const OUTPUT_CASES = [
  { step: 'init', fault: 'huge-stdout', streamed: true },
  { step: 'plan', fault: 'huge-stdout', streamed: true },
  { step: 'plan', fault: 'huge-stderr', streamed: true },
  { step: 'apply', fault: 'huge-stdout', streamed: true },
  { step: 'apply', fault: 'huge-stdout', streamed: true, stallMs: 5000 },
  { step: 'show', fault: 'huge-plan', streamed: false },
];

function benchOutput(mib) {
  log(`\n== terraform printing ${mib} MiB through the runner (the test suite's fake terraform)`);
  for (const c of OUTPUT_CASES) {
    const dir = join(TMP, `output-${c.step}-${c.fault}${c.stallMs ? '-stalled' : ''}`);
    for (const sub of ['module', 'inputs', 'out', 'state']) mkdirSync(join(dir, sub), { recursive: true });
    writeFileSync(join(dir, 'module/main.tf'), 'resource "terraform_data" "fake" {}\n');
    const usageFile = join(dir, 'usage.json');
    const count = join(dir, 'bytes');
    const reader = c.stallMs ? `{ sleep ${c.stallMs / 1000}; wc -c; }` : 'wc -c';
    const apply = `${q(NODE)} --require ${q(SELF_USAGE)} ${q(RUNNER)} apply --kind cluster --terraform ${q(FAKE_TERRAFORM)} --module ${q(dir + '/module')} --inputs ${q(dir + '/inputs')} --state ${q(dir + '/state/terraform.tfstate')} --new-state --out ${q(dir + '/out')} --termination-log ${q(dir + '/termination-log')} --log-format json`;
    const env = {
      ...ENV,
      BENCH_SELF_USAGE_FILE: usageFile,
      FAKE_TF_FAULT: `${c.step}:${c.fault}=${mib * 2 ** 20}`,
      FAKE_TF_STATE: join(dir, 'fake.tfstate'),
    };
    const started = now();
    const r = spawnSync('bash', ['-c', `set -o pipefail; ${apply} 2>&1 | ${reader} >${q(count)}`], {
      env,
      stdio: 'ignore',
    });
    const ms = now() - started;
    const result = JSON.parse(readFileSync(join(dir, 'out/result.json'), 'utf8'));
    if (r.status !== 0 || result.outcome !== 'succeeded')
      throw new Error(`apply with ${c.step}:${c.fault} ended ${result.outcome} (${result.message}), exit ${r.status}`);
    const bytes = Number(readFileSync(count, 'utf8').trim());
    if (c.streamed && bytes < mib * 2 ** 20)
      throw new Error(`only ${bytes} bytes of terraform's ${mib} MiB came through the runner`);
    const { maxRssBytes } = JSON.parse(readFileSync(usageFile, 'utf8'));
    const label = `${c.step} ${c.fault}${c.stallMs ? `, reader stalled ${c.stallMs / 1000} s` : ''}`;
    results.output.push({ case: label, mib, ms, bytesThrough: bytes, peakRssBytes: maxRssBytes });
    log(
      `  ${label.padEnd(40)} ${fmt(ms).padStart(8)}, ${(bytes / 2 ** 20).toFixed(0)} MiB through, peak RSS ${mb(maxRssBytes)}`,
    );
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// 5. Breakdown: both sides run a tracing terraform, a bash wrapper that notes when each launch
// starts and ends (µs), its CPU (bash's `times`: ms) and its arguments. The wrapper costs each
// launch a bash start (a few ms, on both sides): these runs are not the ratios above.

function tracingTerraform(dir) {
  const wrapper = join(dir, 'terraform');
  const trace = join(dir, 'trace.tsv');
  writeFileSync(
    wrapper,
    `#!/bin/bash
s=\${EPOCHREALTIME/./}
${q(TERRAFORM)} "$@"
rc=$?
e=\${EPOCHREALTIME/./}
times >${q(dir)}/times.$$
{ read -r _; read -r user system; } <${q(dir)}/times.$$
rm -f ${q(dir)}/times.$$
printf '%s\\t%s\\t%s\\t%s %s\\t%s\\n' "$s" "$e" "$rc" "$user" "$system" "$*" >>${q(trace)}
exit $rc
`,
  );
  chmodSync(wrapper, 0o755);
  return { wrapper, trace };
}

/** bash's `times` format, 0m0.052s, in ms. */
const timesMs = (text) => {
  const m = /^(\d+)m([\d.]+)s$/.exec(text);
  return (Number(m[1]) * 60 + Number(m[2])) * 1000;
};

/** A launch's name in the timeline: the command and its first flag that tells it apart. */
function launchName(argv) {
  const [command, second] = argv.split(' ');
  if (command === 'version') return second === '-json' ? 'version -json' : 'version';
  if (command === 'state') return `state ${second}`;
  if (command === 'show' || command === 'output') return `${command} -json`;
  return command;
}

/**
 * One traced run as a timeline: launch → first terraform start ("node start"), each terraform
 * launch (concurrent ones merged), the gaps between them (work in the runner's node, or bash), and
 * the tail from the last terraform exit until the process was reaped.
 */
function timeline(run, traceFile) {
  const launches = readFileSync(traceFile, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [s, e, rc, cpu, argv] = line.split('\t');
      const [user, system] = cpu.split(' ').map(timesMs);
      return {
        name: launchName(argv),
        startMs: Number(s) / 1000,
        endMs: Number(e) / 1000,
        exitCode: Number(rc),
        cpuMs: user + system,
      };
    });
  rmSync(traceFile);
  launches.sort((a, b) => a.startMs - b.startMs);
  const groups = [];
  for (const l of launches) {
    const last = groups.at(-1);
    if (last && l.startMs < last.endMs) {
      last.name += ` ∥ ${l.name}`;
      last.endMs = Math.max(last.endMs, l.endMs);
      last.cpuMs += l.cpuMs;
    } else groups.push({ ...l });
  }
  const seen = {};
  const segments = [{ key: 'launch → first terraform start', ms: groups[0].startMs - run.launchedAtMs }];
  groups.forEach((g, i) => {
    const n = (seen[g.name] = (seen[g.name] ?? 0) + 1);
    const key = n > 1 ? `${g.name} (${n})` : g.name;
    if (i > 0) segments.push({ key: `gap before ${key}`, ms: g.startMs - groups[i - 1].endMs });
    segments.push({ key, ms: g.endMs - g.startMs, cpuMs: g.cpuMs, terraform: true });
  });
  segments.push({ key: 'last terraform exit → exit', ms: run.endedAtMs - groups.at(-1).endMs });
  return {
    segments,
    total: run.ms,
    cpuMs: run.cpuMs,
    selfCpuMs: run.self?.cpuMs,
    nodeStartMs: run.self ? run.self.startedAtMs - run.launchedAtMs : undefined,
    firstStepMs: run.result ? Date.parse(run.result.steps[0].startedAt) - run.launchedAtMs : undefined,
    nodeExitToReapedMs: run.self ? run.endedAtMs - run.self.exitAtMs : undefined,
    steps: run.result?.steps.map((s) => ({ name: s.name, status: s.status, ms: s.durationMs })),
  };
}

/** Medians per segment key over runs, in the order of the first run. */
function medianTimeline(runs) {
  const keys = [];
  for (const r of runs) for (const s of r.segments) if (!keys.includes(s.key)) keys.push(s.key);
  const pick = (r, key, field) => r.segments.find((s) => s.key === key)?.[field];
  const stepNames = [];
  for (const r of runs) for (const s of r.steps ?? []) if (!stepNames.includes(s.name)) stepNames.push(s.name);
  return {
    segments: keys.map((key) => ({
      key,
      ms: median(runs.map((r) => pick(r, key, 'ms'))),
      cpuMs: median(runs.map((r) => pick(r, key, 'cpuMs'))),
      terraform: runs.some((r) => pick(r, key, 'terraform')),
    })),
    totalMs: median(runs.map((r) => r.total)),
    cpuMs: median(runs.map((r) => r.cpuMs)),
    selfCpuMs: median(runs.map((r) => r.selfCpuMs)),
    nodeStartMs: median(runs.map((r) => r.nodeStartMs)),
    firstStepMs: median(runs.map((r) => r.firstStepMs)),
    nodeExitToReapedMs: median(runs.map((r) => r.nodeExitToReapedMs)),
    steps: runs[0].steps
      ? stepNames.map((name) => ({ name, ms: median(runs.map((r) => r.steps.find((s) => s.name === name)?.ms)) }))
      : undefined,
  };
}

function benchBreakdown(size) {
  const name = `${size.resources}x${size.instances}`;
  log(
    `\n== breakdown, ${name} (${size.resources * size.instances} instances), ${BREAKDOWN_RUNS} traced runs of each side per case, interleaved`,
  );
  const dir = join(TMP, `breakdown-${name}`);
  setUpSides(dir, size);
  const { wrapper, trace } = tracingTerraform(dir);
  const out = {};
  for (const changes of [false, true]) {
    const runner = [];
    const bare = [];
    for (let k = 0; k < BREAKDOWN_RUNS; k++) {
      const sides = [
        () =>
          runner.push(
            timeline(
              runnerApply(dir, changes ? `runner-${k}` : 'g0', {
                terraform: wrapper,
                expect: changes ? 'succeeded' : 'noChanges',
              }),
              trace,
            ),
          ),
        () =>
          bare.push(
            timeline(
              bareApply(dir, changes ? `bare-${k}` : 'g0', { terraform: wrapper, expectChanges: changes }),
              trace,
            ),
          ),
      ];
      if (k % 2) sides.reverse();
      for (const side of sides) side();
    }
    const entry = { runner: medianTimeline(runner), bare: medianTimeline(bare), runs: { runner, bare } };
    entry.extra = extraTime(entry.runner, entry.bare);
    out[changes ? 'changes' : 'noChanges'] = entry;
    printTimeline(changes ? `${size.instances} updates` : 'no changes', entry);
  }
  results.breakdown = { size: name, instances: size.resources * size.instances, runs: BREAKDOWN_RUNS, ...out };
  rmSync(dir, { recursive: true, force: true });
}

const PERSON_STEPS = ['init', 'validate', 'plan', 'show -json', 'apply'];

/**
 * The runner's time and CPU beyond the bare steps', by cause: node before its first terraform, the
 * launches a person does not make, the person's own steps run by the runner, the gaps between
 * launches (node's work between steps), and from the last exit until the process is reaped.
 */
function extraTime(runner, bare) {
  const sum = (t, pick, field = 'ms') => t.segments.filter(pick).reduce((n, x) => n + (x[field] ?? 0), 0);
  const isGap = (x) => x.key.startsWith('gap before');
  const isPerson = (x) => !isGap(x) && PERSON_STEPS.includes(x.key);
  const isExtraLaunch = (x) => x.terraform && !PERSON_STEPS.includes(x.key);
  const first = (t) => t.segments[0].ms;
  const tail = (t) => t.segments.at(-1).ms;
  const launches = runner.segments.filter(isExtraLaunch).map((x) => ({ key: x.key, ms: x.ms, cpuMs: x.cpuMs }));
  return {
    totalMs: runner.totalMs - bare.totalMs,
    cpuMs: runner.cpuMs - bare.cpuMs,
    beforeFirstSpawnMs: first(runner) - first(bare),
    extraLaunches: launches,
    extraLaunchesMs: sum(runner, isExtraLaunch),
    extraLaunchesCpuMs: sum(runner, isExtraLaunch, 'cpuMs'),
    personStepsMs: sum(runner, isPerson) - sum(bare, isPerson),
    personStepsCpuMs: sum(runner, isPerson, 'cpuMs') - sum(bare, isPerson, 'cpuMs'),
    gapsMs: sum(runner, isGap) - sum(bare, isGap),
    tailMs: tail(runner) - tail(bare),
    runnerNodeCpuMs: runner.selfCpuMs,
  };
}

function printTimeline(label, { runner, bare, extra }) {
  log(`  ${label}: medians, runner | bare`);
  const bareOf = (key) => bare.segments.find((s) => s.key === key);
  for (const s of runner.segments) {
    const b = bareOf(s.key);
    const cpu = s.terraform ? `  CPU ${fmt(s.cpuMs)}${b ? ` | ${fmt(b.cpuMs)}` : ''}` : '';
    log(`    ${s.key.padEnd(40)} ${fmt(s.ms).padStart(9)} | ${(b ? fmt(b.ms) : '').padStart(9)}${cpu}`);
  }
  log(
    `    ${'total'.padEnd(40)} ${fmt(runner.totalMs).padStart(9)} | ${fmt(bare.totalMs).padStart(9)}  CPU ${fmt(runner.cpuMs)} | ${fmt(bare.cpuMs)} (node's own ${fmt(runner.selfCpuMs)})`,
  );
  log(
    `    the runner's node: started ${fmt(runner.nodeStartMs)} after launch, began its first step (${runner.steps[0].name}) ${fmt(runner.firstStepMs)} after launch, was reaped ${fmt(runner.nodeExitToReapedMs)} after its exit`,
  );
  log(`    result.json steps[]: ${runner.steps.map((s) => `${s.name} ${fmt(s.ms)}`).join(', ')}`);
  log(
    `    the runner's extra ${fmt(extra.totalMs)} (CPU ${fmt(extra.cpuMs)}): before its first terraform ${fmt(extra.beforeFirstSpawnMs)}; ` +
      `launches a person does not make ${fmt(extra.extraLaunchesMs)} (CPU ${fmt(extra.extraLaunchesCpuMs)}: ${extra.extraLaunches.map((l) => `${l.key} ${fmt(l.ms)}/${fmt(l.cpuMs)}`).join(', ')}); ` +
      `the person's steps ${fmt(extra.personStepsMs)} (CPU ${fmt(extra.personStepsCpuMs)}); gaps ${fmt(extra.gapsMs)}; exit ${fmt(extra.tailMs)}; node's own CPU ${fmt(extra.runnerNodeCpuMs)}`,
  );
}

// ---------------------------------------------------------------------------------------------
// 5. Policy: the worst rules (contract/sections/policy.md §5, Bounds), through `captf-runner
// classify --json --policy DIR -` of a plan document of `changes` creates with 9,000-character
// keys. The issue's rules are refused when the policy loads; the others pass the estimate (made
// for 1,024-character addresses) and spend their whole budget on every change, until the plan's
// budget is spent and every rule fails closed: the longest and largest an evaluation can be.

const POLICY_CASES = [
  {
    name: "the issue's rules (cubic in a key; a list of lists from a key)",
    rules: {
      cubic:
        'change.address.split("").exists(a, change.address.split("").exists(b, change.address.indexOf(a + b + "#") >= 0))',
      lists: 'change.address.split("").map(c, change.address.split("")).size() > 0',
    },
    changes: 5,
    refused: true,
  },
  {
    name: 'a search inside a loop over the key',
    rules: { search: 'change.address.split("").exists(c, change.address.contains(c + "#"))' },
    changes: 60,
  },
  {
    name: "a map over the key's characters (linear: within its budget)",
    rules: { mapped: 'change.address.split("").map(c, c + "x").size() < 0' },
    changes: 60,
  },
  {
    name: 'a list of strings built from the key, then searched',
    rules: { built: 'change.address.split("").map(c, change.address + c).exists(s, s.contains("#"))' },
    changes: 60,
  },
  {
    name: 'a string built at each step of a map over the key',
    rules: { strings: 'change.address.split("").map(c, change.address + c).size() < 0' },
    changes: 60,
  },
  {
    name: 'all three, each on every change',
    rules: {
      search: 'change.address.split("").exists(c, change.address.contains(c + "#"))',
      built: 'change.address.split("").map(c, change.address + c).exists(s, s.contains("#"))',
      strings: 'change.address.split("").map(c, change.address + c).size() < 0',
    },
    changes: 30,
  },
];

function policyPlan(file, changes) {
  const key = (i) => `${i}-${'k'.repeat(9000)}`;
  const entry = (i) => ({
    address: `terraform_data.db["${key(i)}"]`,
    mode: 'managed',
    type: 'terraform_data',
    name: 'db',
    index: key(i),
    provider_name: 'terraform.io/builtin/terraform',
    change: { actions: ['create'], before: null, after: { input: 'x' } },
  });
  writeFileSync(
    file,
    JSON.stringify({
      format_version: '1.2',
      terraform_version: '1.11.4',
      resource_changes: Array.from({ length: changes }, (_, i) => entry(i)),
    }),
  );
}

function benchPolicy() {
  log('\n== policy: the worst rules, `classify --json --policy DIR -` of creates with 9,000-character keys');
  for (const c of POLICY_CASES) {
    const dir = join(TMP, `policy-${results.policy.length}`);
    mkdirSync(dir, { recursive: true });
    const rules = Object.entries(c.rules)
      .map(([name, match]) => `- name: ${name}\n  match: ${JSON.stringify(match)}\n  effect: deny\n`)
      .join('');
    writeFileSync(join(dir, 'policy.yaml'), `apiVersion: policy.captf.io/v1\nrules:\n${rules}`);
    const plan = join(TMP, 'policy-plan.json');
    policyPlan(plan, c.changes);
    const out = join(TMP, 'policy-out.json');
    const usageFile = join(TMP, 'policy-usage.json');
    rmSync(usageFile, { force: true });
    const started = now();
    const r = spawnSync(
      'bash',
      [
        '-c',
        `${q(NODE)} --require ${q(SELF_USAGE)} ${q(RUNNER)} classify --json --policy ${q(dir)} - <${q(plan)} >${q(out)} 2>${q(out)}.err`,
      ],
      { env: { ...ENV, BENCH_SELF_USAGE_FILE: usageFile }, stdio: 'ignore' },
    );
    const ms = now() - started;
    const usage = JSON.parse(readFileSync(usageFile, 'utf8'));
    if (c.refused) {
      if (r.status !== 4)
        throw new Error(`policy case "${c.name}": expected the policy refused (exit 4), got ${r.status}`);
      results.policy.push({ case: c.name, refused: true, ms, cpuMs: usage.cpuMs, peakRssBytes: usage.maxRssBytes });
      log(
        `  ${c.name}: refused when the policy loads in ${fmt(ms)} (CPU ${fmt(usage.cpuMs)}), peak RSS ${mb(usage.maxRssBytes)}`,
      );
      continue;
    }
    if (r.status !== 0)
      throw new Error(`policy case "${c.name}" exited ${r.status}: ${readFileSync(`${out}.err`, 'utf8').slice(-2000)}`);
    const { cost, costExceeded, timedOut, deniedTotal } = JSON.parse(readFileSync(out, 'utf8')).policy;
    results.policy.push({
      case: c.name,
      changes: c.changes,
      rules: Object.keys(c.rules).length,
      ms,
      cpuMs: usage.cpuMs,
      peakRssBytes: usage.maxRssBytes,
      cost,
      costExceeded,
      timedOut,
      deniedTotal,
      cpuUsPerUnit: (usage.cpuMs * 1000) / cost,
    });
    log(
      `  ${c.name}: ${c.changes} changes, ${fmt(ms)} (CPU ${fmt(usage.cpuMs)}), ${cost.toLocaleString('en-US')} units (${((usage.cpuMs * 1000) / cost).toFixed(3)} µs CPU a unit, the start included), ` +
        `peak RSS ${mb(usage.maxRssBytes)}; costExceeded ${costExceeded}, timedOut ${timedOut}, ${deniedTotal} denied`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// 6. Reader: the streaming JSON reader on the first document of a fresh process (its code cold, as
// in a run: each document is read once), through the runner's own selectors, against JSON.parse of
// the same bytes in a fresh process of its own; rounds interleaved, the order alternating. The time
// is the read's own (bench/json-reader-cold.ts), not the process start; MB/s are of its CPU time.

/** The reader's documents: a `state pull` of the 500-instance module, and plans from gen-plan.mjs. */
function readerDocuments(dir) {
  const state = join(dir, 'state-20x25.json');
  // terraform prints a pulled state indented by two spaces.
  writeFileSync(state, JSON.stringify(JSON.parse(stateText({ resources: 20, instances: 25 }, 'g1')), null, 2));
  const documents = [{ name: 'state pull, 500 instances', mode: 'state', file: state }];
  for (const [label, bytes] of [
    ['530 KB', 530_000],
    ['4 MiB', 4 * 2 ** 20],
  ]) {
    const file = join(dir, `plan-${bytes}.json`);
    const gen = spawnSync(process.execPath, [GEN_PLAN, '--bytes', String(bytes), '--out', file], { stdio: 'ignore' });
    if (gen.status !== 0) throw new Error(`gen-plan --bytes ${bytes} failed`);
    documents.push({ name: `show -json, ${label}`, mode: 'plan', file });
  }
  return documents;
}

function benchReader() {
  log(
    `\n== the JSON reader, cold (the first document of a fresh process), ${READER_ROUNDS} interleaved rounds, ${nodeVersion}${opts.snapshot ? ', and through startup snapshots, warmed and not' : ''}`,
  );
  const dir = join(TMP, 'reader');
  mkdirSync(dir, { recursive: true });
  const bundle = (format, outfile) => {
    const built = spawnSync(
      process.execPath,
      [
        '-e',
        `require('esbuild').buildSync({ entryPoints: [${JSON.stringify(join(REPO, 'bench/json-reader-cold.ts'))}], bundle: true, platform: 'node', format: '${format}', target: 'node20', outfile: ${JSON.stringify(outfile)}, logLevel: 'error' })`,
      ],
      { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    if (built.status !== 0) throw new Error('bundling bench/json-reader-cold.ts failed');
    return outfile;
  };
  const worker = bundle('esm', join(dir, 'json-reader-cold.mjs'));
  // With --snapshot: the same read from a blob of the worker as the runner starts from its own (its modules
  // evaluated in the build), without and with the reader's warm-up in the build (src/warm-reader.ts).
  const variants = [{ name: 'reader', launch: [worker], env: ENV }];
  if (opts.snapshot) {
    const entry = bundle('cjs', join(dir, 'json-reader-cold.cjs'));
    for (const [name, warm] of [
      ['snapshot', '0'],
      ['snapshotWarmed', '1'],
    ]) {
      const blob = join(dir, `${name}.blob`);
      // The flags of scripts/image/snapshot-blob.sh; WARM_READER chooses the warm-up (the script would clear it).
      const made = spawnSync(
        NODE,
        ['--predictable', ...IMAGE_V8_FLAGS, '--no-warnings', '--snapshot-blob', blob, '--build-snapshot', entry],
        {
          env: { ...ENV, WARM_READER: warm },
          stdio: ['ignore', 'inherit', 'inherit'],
        },
      );
      if (made.status !== 0) throw new Error(`building ${blob} failed`);
      results.readerSnapshotBlobBytes = { ...results.readerSnapshotBlobBytes, [name]: statSync(blob).size };
      variants.push({
        name,
        launch: [...IMAGE_V8_FLAGS, '--snapshot-blob', blob, entry],
        env: { ...ENV, ...APPLY_ENV_SNAPSHOT },
      });
    }
    log(
      `  blobs: ${mb(results.readerSnapshotBlobBytes.snapshot)} without the warm-up, ${mb(results.readerSnapshotBlobBytes.snapshotWarmed)} with it`,
    );
  }
  variants.push({ name: 'jsonParse', launch: [worker], env: ENV, mode: 'json-parse' });
  const once = (variant, mode, file) => {
    const r = spawnSync(NODE, [...variant.launch, variant.mode ?? mode, file], { env: variant.env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${variant.name} ${mode} ${file} exited ${r.status}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  for (const doc of readerDocuments(dir)) {
    const bytes = statSync(doc.file).size;
    const runs = Object.fromEntries(variants.map((v) => [v.name, []]));
    for (let k = 0; k < READER_ROUNDS; k++) {
      // Each round runs every variant once, starting one further along each round.
      for (let j = 0; j < variants.length; j++) {
        const variant = variants[(k + j) % variants.length];
        runs[variant.name].push(once(variant, doc.mode, doc.file));
      }
    }
    // MB/s of CPU time: on a shared machine the wall time mostly measures the other processes.
    const mbps = (ms) => bytes / 1e6 / (ms / 1000);
    const cpu = (name) => runs[name].map((x) => x.cpuMs);
    const reader = runs.reader;
    const parse = runs.jsonParse;
    const entry = {
      document: doc.name,
      bytes,
      rounds: READER_ROUNDS,
      loadavg: loadavg(),
      readerWallMs: reader.map((x) => x.ms),
      jsonParseWallMs: parse.map((x) => x.ms),
      readerCpuMs: cpu('reader'),
      jsonParseCpuMs: cpu('jsonParse'),
      readerWallMedianMs: median(reader.map((x) => x.ms)),
      readerCpuMedianMs: median(cpu('reader')),
      jsonParseCpuMedianMs: median(cpu('jsonParse')),
      readerMBps: mbps(median(cpu('reader'))),
      jsonParseMBps: mbps(median(cpu('jsonParse'))),
      ratio: median(reader.map((x, k) => x.cpuMs / parse[k].cpuMs)),
    };
    if (opts.snapshot)
      for (const name of ['snapshot', 'snapshotWarmed'])
        entry[name] = {
          cpuMs: cpu(name),
          cpuMedianMs: median(cpu(name)),
          MBps: mbps(median(cpu(name))),
          ratio: median(runs[name].map((x, k) => x.cpuMs / parse[k].cpuMs)),
        };
    const over = (a, b) => median(runs[a].map((x, k) => x.cpuMs / runs[b][k].cpuMs));
    if (opts.snapshot) {
      entry.warmedOverSnapshot = over('snapshotWarmed', 'snapshot');
      entry.runnerOverPlain = over('snapshotWarmed', 'reader');
    }
    results.reader.push(entry);
    log(
      `  ${doc.name} (${mb(bytes)}): CPU of the read ${fmt(entry.readerCpuMedianMs)} (${entry.readerMBps.toFixed(1)} MB/s; wall ${fmt(entry.readerWallMedianMs)}), JSON.parse ${fmt(entry.jsonParseCpuMedianMs)} (${entry.jsonParseMBps.toFixed(1)} MB/s), reader ÷ JSON.parse ×${entry.ratio.toFixed(2)}; load ${entry.loadavg}`,
    );
    if (opts.snapshot)
      log(
        `    through the snapshot ${fmt(entry.snapshot.cpuMedianMs)} (${entry.snapshot.MBps.toFixed(1)} MB/s, ×${entry.snapshot.ratio.toFixed(2)} JSON.parse), warmed ${fmt(entry.snapshotWarmed.cpuMedianMs)} (${entry.snapshotWarmed.MBps.toFixed(1)} MB/s, ×${entry.snapshotWarmed.ratio.toFixed(2)}); ` +
          `warmed ÷ not ×${entry.warmedOverSnapshot.toFixed(2)}, as the runner (warmed) ÷ the plain bundle ×${entry.runnerOverPlain.toFixed(2)}`,
      );
  }
}

// ---------------------------------------------------------------------------------------------

const TARGETS = { apply: 1.03, start: 1.3, startSnapshot: 2.5, rssBytes: 150e6, readerMBps: 50 };

function summary() {
  const verdict = (ok) => (ok ? 'met' : 'MISSED');
  const m = results.machine;
  const lines = ['', '== summary (ratios: medians of interleaved pairs; targets in brackets)'];
  lines.push(
    `machine: ${m.nproc} CPU (${m.cpu}), ${m.memoryGiB} GiB, ${m.node}, ${m.terraform}; load average at start ${m.loadavgAtStart}, at end ${loadavg()}`,
  );
  for (const a of results.apply) {
    for (const [label, r] of [
      ['no changes', a.noChanges],
      [`${a.updatesPerChange} updates`, a.changes],
    ]) {
      lines.push(
        `apply ${a.size.padEnd(8)} ${label.padEnd(12)} wall ${fmt(r.runnerWallMedianMs).padStart(8)} / ${fmt(r.bareWallMedianMs).padStart(8)} ×${r.wallRatio.toFixed(3)} ${verdict(r.wallRatio <= TARGETS.apply)}; ` +
          `CPU ${fmt(r.runnerCpuMedianMs).padStart(8)} / ${fmt(r.bareCpuMedianMs).padStart(8)} ×${r.cpuRatio.toFixed(3)} ${verdict(r.cpuRatio <= TARGETS.apply)} [≤ ${TARGETS.apply}]; ` +
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
      `policy ${s.case}: peak RSS ${mb(s.peakRssBytes)} ${verdict(s.peakRssBytes <= TARGETS.rssBytes)} [≤ 150 MB], ${fmt(s.ms)} (CPU ${fmt(s.cpuMs)})${s.refused ? ', refused' : `, ${s.cost.toLocaleString('en-US')} units`}`,
    );
  for (const s of results.reader)
    lines.push(
      `reader ${s.document.padEnd(26)}: ${s.readerMBps.toFixed(1)} MB/s ${verdict(s.readerMBps >= TARGETS.readerMBps)} [≥ ${TARGETS.readerMBps}], JSON.parse ${s.jsonParseMBps.toFixed(1)} MB/s, ×${s.ratio.toFixed(2)} its CPU time`,
    );
  log(lines.join('\n'));
}

log(
  `captf-runner benchmark: ${results.machine.bundleBytes}-byte entry, ${nodeVersion}, ${results.machine.terraform}; ${results.machine.nproc} CPU, load ${results.machine.loadavgAtStart}; temp dir ${TMP}`,
);
try {
  if (ONLY.has('start')) benchStart();
  if (ONLY.has('apply')) for (const size of SIZES) benchApply(size);
  if (ONLY.has('breakdown')) benchBreakdown(BREAKDOWN_SIZE);
  if (ONLY.has('memory')) for (const mib of MEMORY_MIB) benchMemory(mib);
  if (ONLY.has('output')) benchOutput(OUTPUT_MIB);
  if (ONLY.has('policy')) benchPolicy();
  if (ONLY.has('reader')) benchReader();
} catch (error) {
  summary();
  process.stderr.write(`bench: ${error.stack ?? error}\n(temp dir kept: ${TMP})\n`);
  opts.keep = true;
  process.exit(1);
}
results.machine.loadavgAtEnd = loadavg();
summary();
if (opts['json-out'] !== '-') {
  mkdirSync(dirname(resolve(opts['json-out'])), { recursive: true });
  writeFileSync(opts['json-out'], JSON.stringify(results, null, 2) + '\n');
  log(`results: ${opts['json-out']}`);
}
