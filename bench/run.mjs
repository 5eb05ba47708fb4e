#!/usr/bin/env node
// The runner's overhead, measured side by side in one run on this machine (BENCHMARKS.md):
//
//   1. apply: `captf-runner apply` ÷ the same terraform commands run bare (bench/bare-apply.sh), on
//      modules of 100 resources × 20 and × 100 instances, with no changes and with changes;
//   2. show: `terraform show -json | captf-runner classify -` ÷ `terraform show -json > /dev/null`;
//   3. synthetic: `captf-runner classify -` of 100 MiB, 600 MiB and 1 GiB plan documents from
//      scripts/gen-plan.mjs: wall time, peak RSS, and the counts checked against the generator's;
//   4. cold start: `captf-runner --version` and the time until the runner spawns terraform, ÷ `node -e 0`.
//
// Runner and baseline runs are interleaved (the order alternates per pair) and medians reported, so
// that the noise of a shared machine falls on both sides. Nothing here is a test: it prints figures.
//
//   node bench/run.mjs                         # everything, ~10-15 min on 2 CPUs
//   node bench/run.mjs --reps 5 --only apply,show
//   node bench/run.mjs --sizes 100x20 --synthetic-mib 100 --cold-reps 10 --json-out /tmp/bench.json
//
// Options: --reps N (apply and show pairs, default 3), --cold-reps N (default 20), --synthetic-reps N
// (default 1), --sizes RxN,... (default 100x20,100x100), --synthetic-mib A,B,... (default 100,600,1024),
// --only apply,show,synthetic,cold, --runner FILE (default dist/captf-runner.mjs: run `npm run build`
// first), --terraform PATH (default terraform on PATH), --keep (keep the temp dir), --json-out FILE.
import { spawnSync, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir, cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: opts } = parseArgs({
  options: {
    reps: { type: 'string', default: '3' },
    'cold-reps': { type: 'string', default: '20' },
    'synthetic-reps': { type: 'string', default: '1' },
    sizes: { type: 'string', default: '100x20,100x100' },
    'synthetic-mib': { type: 'string', default: '100,600,1024' },
    only: { type: 'string', default: 'apply,show,synthetic,cold' },
    runner: { type: 'string', default: join(REPO, 'dist/captf-runner.mjs') },
    terraform: { type: 'string', default: 'terraform' },
    keep: { type: 'boolean', default: false },
    'json-out': { type: 'string' },
  },
});
const REPS = positive(opts.reps, '--reps');
const COLD_REPS = positive(opts['cold-reps'], '--cold-reps');
const SYNTH_REPS = positive(opts['synthetic-reps'], '--synthetic-reps');
const SIZES = opts.sizes.split(',').map((s) => {
  const m = /^(\d+)x(\d+)$/.exec(s.trim());
  if (!m || Number(m[2]) > 100) fail(`--sizes: "${s}" is not RESOURCESxINSTANCES with INSTANCES ≤ 100`);
  return { resources: Number(m[1]), instances: Number(m[2]) };
});
const SYNTH_MIB = opts['synthetic-mib'].split(',').map((s) => positive(s, '--synthetic-mib'));
const ONLY = new Set(opts.only.split(','));

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
// Setup: a temp dir, a snapshot of the bundle (a rebuild during the run must not change it), terraform.

if (!existsSync(opts.runner)) fail(`${opts.runner} does not exist: run \`npm run build\` first (or pass --runner FILE)`);
const TMP = mkdtempSync(join(tmpdir(), 'captf-bench-'));
const RUNNER = join(TMP, 'captf-runner.mjs');
copyFileSync(opts.runner, RUNNER);
// A bundle built with code splitting imports its chunks from ./chunks/ next to it.
if (existsSync(join(dirname(opts.runner), 'chunks'))) cpSync(join(dirname(opts.runner), 'chunks'), join(TMP, 'chunks'), { recursive: true });
const TERRAFORM = which(opts.terraform);
const BARE = join(REPO, 'bench/bare-apply.sh');
const GEN_PLAN = join(REPO, 'scripts/gen-plan.mjs');
/** Preloaded into the runner's node: writes the process's own CPU time (not its children's) on exit. */
const SELF_CPU_PRELOAD = join(REPO, 'bench/self-cpu.cjs');
const ENV = cleanEnv();
const hasGnuTime = existsSync('/usr/bin/time') && spawnSync('/usr/bin/time', ['-v', 'true'], { stdio: 'ignore' }).status === 0;
const results = { date: new Date().toISOString(), machine: machine(), reps: REPS, apply: [], show: undefined, synthetic: [], cold: undefined };

let exiting = false;
process.on('exit', () => {
  if (!opts.keep && !exiting) rmSync(TMP, { recursive: true, force: true });
});
process.on('SIGINT', () => process.exit(130));

function which(name) {
  if (name.includes('/')) return resolve(name);
  const found = spawnSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  if (!found) fail(`${name} is not on PATH (pass --terraform PATH)`);
  return found;
}

/** The environment of every child: no TF_VAR_/TF_CLI_ARGS leaking in, no CLI-config warning. */
function cleanEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(TF_|CAPTF_)/.test(k)) env[k] = v;
  return { ...env, TF_CLI_CONFIG_FILE: '/dev/null', CHECKPOINT_DISABLE: '1' };
}

function machine() {
  const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m)?.[1] ?? 'unknown';
  const tfVersion = spawnSync(which(opts.terraform), ['version'], { encoding: 'utf8', env: { ...process.env, TF_CLI_CONFIG_FILE: '/dev/null' } }).stdout.split('\n')[0];
  const free = spawnSync('free', ['-h'], { encoding: 'utf8' }).stdout.trim();
  const load = readFileSync('/proc/loadavg', 'utf8').trim();
  return { nproc: cpus().length, memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`, free, cpu, node: process.version, terraform: tfVersion, loadavgAtStart: load, bundleBytes: statSync(RUNNER).size };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (ms) => (ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
const log = (line) => process.stdout.write(line + '\n');

/** Runs a command to completion; returns its wall time in ms. Throws with the stderr tail on failure. */
function timed(file, args, options = {}) {
  return timedCpu(file, args, options).ms;
}

/**
 * Like timed(), and also the CPU time (user + system) of the command and every descendant it waited
 * for, from /usr/bin/time when installed (undefined otherwise). CPU time barely moves with the load
 * of a shared machine, so its ratio is the steadier measure of the runner's own cost.
 */
function timedCpu(file, args, { env = ENV, cwd = TMP, okCodes = [0], stdin = 'ignore' } = {}) {
  const timeFile = join(TMP, 'cpu.txt');
  const [cmd, argv] = hasGnuTime ? ['/usr/bin/time', ['-f', '%U %S', '-o', timeFile, file, ...args]] : [file, args];
  const started = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { env, cwd, stdio: [stdin, 'ignore', 'pipe'], maxBuffer: 64 * 2 ** 20 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (!okCodes.includes(r.status ?? -1)) throw new Error(`${file} ${args.join(' ')} exited ${r.status ?? r.signal}:\n${String(r.stderr).slice(-3000)}`);
  let cpuMs;
  if (hasGnuTime) {
    const [user, system] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
    cpuMs = (user + system) * 1000;
  }
  return { ms, cpuMs };
}

/**
 * Interleaves `reps` pairs (order alternating: AB, BA, AB…). Each side returns ms or {ms, cpuMs,
 * selfCpuMs}. Returns both series, medians and the median of the pairwise ratios.
 */
function pairs(reps, a, b, label) {
  const as = [];
  const bs = [];
  const norm = (v) => (typeof v === 'number' ? { ms: v } : v);
  for (let k = 0; k < reps; k++) {
    if (k % 2 === 0) {
      as.push(norm(a(k)));
      bs.push(norm(b(k)));
    } else {
      bs.push(norm(b(k)));
      as.push(norm(a(k)));
    }
    const cpu = as[k].cpuMs !== undefined ? `; CPU ${fmt(as[k].cpuMs)} vs ${fmt(bs[k].cpuMs)} (×${(as[k].cpuMs / bs[k].cpuMs).toFixed(3)})` : '';
    const self = as[k].selfCpuMs !== undefined ? `, the runner's own ${fmt(as[k].selfCpuMs)}` : '';
    log(`  ${label} #${k + 1}: ${fmt(as[k].ms)} vs ${fmt(bs[k].ms)} (×${(as[k].ms / bs[k].ms).toFixed(3)})${cpu}${self}`);
  }
  const out = {
    runnerMs: as.map((x) => x.ms),
    baselineMs: bs.map((x) => x.ms),
    runnerMedianMs: median(as.map((x) => x.ms)),
    baselineMedianMs: median(bs.map((x) => x.ms)),
    ratioOfMedians: median(as.map((x) => x.ms)) / median(bs.map((x) => x.ms)),
    medianPairRatio: median(as.map((x, k) => x.ms / bs[k].ms)),
  };
  if (as.every((x) => x.cpuMs !== undefined) && bs.every((x) => x.cpuMs !== undefined)) {
    Object.assign(out, {
      runnerCpuMs: as.map((x) => x.cpuMs),
      baselineCpuMs: bs.map((x) => x.cpuMs),
      runnerCpuMedianMs: median(as.map((x) => x.cpuMs)),
      baselineCpuMedianMs: median(bs.map((x) => x.cpuMs)),
      cpuMedianPairRatio: median(as.map((x, k) => x.cpuMs / bs[k].cpuMs)),
    });
  }
  if (as.every((x) => x.selfCpuMs !== undefined)) Object.assign(out, { runnerSelfCpuMs: as.map((x) => x.selfCpuMs), runnerSelfCpuMedianMs: median(as.map((x) => x.selfCpuMs)) });
  return out;
}

// ---------------------------------------------------------------------------------------------
// 1. apply vs bare terraform.

/** A module of `resources` terraform_data resources of `instances` each; r0 follows var.gen (the changes). */
function writeModule(dir, { resources, instances }) {
  mkdirSync(dir, { recursive: true });
  let tf = 'variable "gen" {\n  type    = string\n  default = "0"\n}\n\n';
  for (let r = 0; r < resources; r++) {
    const input = r === 0 ? '"${var.gen}-${count.index}"' : `"static-${r}-\${count.index}"`;
    tf += `resource "terraform_data" "r${r}" {\n  count = ${instances}\n  input = ${input}\n}\n\n`;
  }
  tf += `output "instances" {\n  value = length(terraform_data.r0)\n}\n`;
  writeFileSync(join(dir, 'main.tf'), tf);
}

/**
 * The state terraform would have written after applying the module with var.gen = gen: creating
 * 10,000 terraform_data instances through terraform takes many minutes (it is not what is measured).
 */
function writeState(file, { resources, instances }, gen) {
  const out = [];
  for (let r = 0; r < resources; r++) {
    const inst = [];
    for (let i = 0; i < instances; i++) {
      const value = r === 0 ? `${gen}-${i}` : `static-${r}-${i}`;
      inst.push({ index_key: i, schema_version: 0, attributes: { id: randomUUID(), input: { value, type: 'string' }, output: { value, type: 'string' }, triggers_replace: null }, sensitive_attributes: [] });
    }
    out.push({ mode: 'managed', type: 'terraform_data', name: `r${r}`, provider: 'provider["terraform.io/builtin/terraform"]', instances: inst });
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ version: 4, terraform_version: '1.11.4', serial: 1, lineage: randomUUID(), outputs: {}, resources: out, check_results: null }));
}

function runnerApply(dir, gen, expectOutcome) {
  writeFileSync(join(dir, 'inputs/terraform.tfvars.json'), JSON.stringify({ gen }));
  rmSync(join(dir, 'out/result.json'), { force: true });
  const args = [RUNNER, 'apply', '--module', join(dir, 'module'), '--inputs', join(dir, 'inputs'), '--state', join(dir, 'runner.tfstate'), '--out', join(dir, 'out'), '--termination-log', join(dir, 'termination-log'), '--log-format', 'json', '--terraform', TERRAFORM, '--image', 'bench'];
  const selfCpuFile = join(TMP, 'self-cpu.txt');
  rmSync(selfCpuFile, { force: true });
  const t = timedCpu(process.execPath, ['--require', SELF_CPU_PRELOAD, ...args], { env: { ...ENV, BENCH_SELF_CPU_FILE: selfCpuFile } });
  const result = JSON.parse(readFileSync(join(dir, 'out/result.json'), 'utf8'));
  if (result.outcome !== expectOutcome) throw new Error(`the runner's apply ended ${result.outcome} (${result.reason}: ${result.message}), expected ${expectOutcome}`);
  return { ...t, selfCpuMs: Number(readFileSync(selfCpuFile, 'utf8')), result };
}

function bareApply(dir, gen, hash) {
  const tfvars = join(dir, 'bare.tfvars.json');
  writeFileSync(tfvars, JSON.stringify({ gen }));
  return timedCpu('bash', [BARE, TERRAFORM, join(dir, 'module'), join(dir, 'captf_runner_inputs_hash.tf'), join(dir, 'bare.tfstate'), tfvars, hash]);
}

const fakeHash = (text) => createHash('sha256').update(text).digest('hex');

function benchApply(size) {
  const name = `${size.resources}x${size.instances}`;
  const dir = join(TMP, `apply-${name}`);
  log(`\n== apply, ${size.resources} resources × ${size.instances} instances (${size.resources * size.instances} instances)`);
  writeModule(join(dir, 'module'), size);
  mkdirSync(join(dir, 'inputs'), { recursive: true });
  mkdirSync(join(dir, 'out'), { recursive: true });
  writeState(join(dir, 'runner.tfstate'), size, 'g0');
  // The first apply records the inputs hash (the only change); its kept workdir gives the injected file.
  const workdir = join(dir, 'first-workdir');
  writeFileSync(join(dir, 'inputs/terraform.tfvars.json'), JSON.stringify({ gen: 'g0' }));
  const first = spawnSync(process.execPath, [RUNNER, 'apply', '--module', join(dir, 'module'), '--inputs', join(dir, 'inputs'), '--state', join(dir, 'runner.tfstate'), '--out', join(dir, 'out'), '--termination-log', join(dir, 'termination-log'), '--log-format', 'json', '--terraform', TERRAFORM, '--image', 'bench', '--workdir', workdir], { env: ENV, stdio: ['ignore', 'ignore', 'pipe'] });
  const firstResult = JSON.parse(readFileSync(join(dir, 'out/result.json'), 'utf8'));
  if (first.status !== 0 || firstResult.plan.counts.create !== 0 || firstResult.plan.counts.noop !== size.resources * size.instances)
    throw new Error(`the first apply did not see the synthetic state as up to date: ${JSON.stringify(firstResult.plan?.counts)} ${firstResult.message}\n${String(first.stderr).slice(-2000)}`);
  copyFileSync(join(workdir, 'root/captf_runner_inputs_hash.tf'), join(dir, 'captf_runner_inputs_hash.tf'));
  rmSync(workdir, { recursive: true, force: true });
  copyFileSync(join(dir, 'runner.tfstate'), join(dir, 'bare.tfstate'));
  const h0 = firstResult.inputsHash;

  const noChanges = pairs(REPS, () => runnerApply(dir, 'g0', 'noChanges'), () => bareApply(dir, 'g0', h0), 'no changes');
  let updates;
  const changes = pairs(
    REPS,
    (k) => {
      const { result, ...t } = runnerApply(dir, `runner-${k}`, 'succeeded');
      updates = result.plan.counts.update;
      return t;
    },
    (k) => bareApply(dir, `bare-${k}`, fakeHash(`bare-${k}`)),
    `${size.instances} updates`,
  );
  const entry = { size: name, instances: size.resources * size.instances, updatesPerChange: updates, noChanges, changes };
  results.apply.push(entry);
  return { dir, entry };
}

// ---------------------------------------------------------------------------------------------
// 2. show -json + classification vs show -json > /dev/null.

function benchShow(size) {
  const name = `${size.resources}x${size.instances}`;
  const dir = join(TMP, `show-${name}`);
  log(`\n== show -json | classify, ${name} plan with changes`);
  writeModule(join(dir, 'root'), size);
  writeState(join(dir, 'state.tfstate'), size, 'g0');
  writeFileSync(join(dir, 'root/backend_override.tf'), `terraform {\n  backend "local" {\n    path = ${JSON.stringify(join(dir, 'state.tfstate'))}\n  }\n}\n`);
  const tfOpts = { cwd: join(dir, 'root'), okCodes: [0, 2] };
  timed(TERRAFORM, ['init', '-input=false', '-no-color'], tfOpts);
  timed(TERRAFORM, ['plan', '-input=false', '-no-color', '-detailed-exitcode', '-out=plan.tfplan', '-var', 'gen=changed'], tfOpts);
  const sh = (script) => timedCpu('bash', ['-c', `set -euo pipefail; ${script}`], { cwd: join(dir, 'root') });
  const q = (s) => `'${s.replaceAll("'", "'\\''")}'`;
  const show = `${q(TERRAFORM)} show -json -no-color plan.tfplan`;
  const bytes = Number(spawnSync('bash', ['-c', `${show} | wc -c`], { cwd: join(dir, 'root'), env: ENV, encoding: 'utf8' }).stdout.trim());
  // The classification itself, checked once.
  const check = spawnSync('bash', ['-c', `set -o pipefail; ${show} | ${q(process.execPath)} ${q(RUNNER)} classify --json -`], { cwd: join(dir, 'root'), env: ENV, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const plan = JSON.parse(check.stdout);
  if (plan.counts.update !== size.instances || plan.counts.noop !== (size.resources - 1) * size.instances) throw new Error(`unexpected classification of the ${name} plan: ${JSON.stringify(plan.counts)}`);
  const r = pairs(REPS, () => sh(`${show} | ${q(process.execPath)} ${q(RUNNER)} classify - >/dev/null`), () => sh(`${show} >/dev/null`), 'show+classify vs show');
  results.show = { size: name, documentBytes: bytes, counts: plan.counts, ...r };
}

// ---------------------------------------------------------------------------------------------
// 3. Synthetic plan documents: time and peak RSS of `captf-runner classify -`.


/** Runs `bash -c script` (which pipes the plan into the runner); returns wall ms and the runner's peak RSS in bytes. */
async function measureRss(file, expectedOut) {
  const q = (s) => `'${s.replaceAll("'", "'\\''")}'`;
  const timeFile = join(TMP, 'time.txt');
  if (hasGnuTime) {
    const script = `set -euo pipefail; cat ${q(file)} | /usr/bin/time -v -o ${q(timeFile)} ${q(process.execPath)} ${q(RUNNER)} classify --json - >${q(expectedOut)}`;
    const ms = timed('bash', ['-c', script]);
    const text = readFileSync(timeFile, 'utf8');
    const kib = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(text)?.[1]);
    return { ms, peakRssBytes: kib * 1024, rssSource: '/usr/bin/time -v (ru_maxrss)' };
  }
  // No GNU time: poll the runner's VmHWM (its high-water mark) while it runs.
  const started = process.hrtime.bigint();
  const child = spawn('bash', ['-c', `cat ${q(file)} | exec ${q(process.execPath)} ${q(RUNNER)} classify --json - >${q(expectedOut)}`], { env: ENV, stdio: 'ignore' });
  let hwm = 0;
  const poll = setInterval(() => {
    const pids = spawnSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    for (const pid of pids) {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        if (!status.includes('node')) continue;
        hwm = Math.max(hwm, Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024);
      } catch {}
    }
  }, 20);
  const code = await new Promise((r) => child.on('close', r));
  clearInterval(poll);
  if (code !== 0) throw new Error(`classify of ${file} exited ${code}`);
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, peakRssBytes: hwm, rssSource: 'VmHWM polled every 20 ms (a lower bound)' };
}

async function benchSynthetic(mib) {
  const file = join(TMP, `plan-${mib}MiB.json`);
  log(`\n== synthetic plan of ${mib} MiB`);
  const gen = spawnSync(process.execPath, [GEN_PLAN, '--bytes', String(mib * 2 ** 20), '--out', file], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  if (gen.status !== 0) throw new Error(`gen-plan failed: ${gen.stderr}`);
  const expected = JSON.parse(gen.stderr.trim().split('\n').at(-1));
  const bytes = statSync(file).size;
  const runs = [];
  try {
    for (let k = 0; k < SYNTH_REPS; k++) {
      // Read the file once first so that both the baseline and the runner read it from the page cache.
      const catMs = timed('bash', ['-c', `cat '${file}' >/dev/null`]);
      const out = join(TMP, 'classify.json');
      const m = await measureRss(file, out);
      const got = JSON.parse(readFileSync(out, 'utf8'));
      // `classify` skips the runner's own update of its inputs-hash resource, as the generator's counts do.
      const want = expected.counts;
      const ok =
        JSON.stringify(got.counts) === JSON.stringify(want) &&
        got.destructiveTotal === expected.destructiveTotal &&
        JSON.stringify(got.outputChanges) === JSON.stringify(expected.outputChanges) &&
        JSON.stringify(got.sensitiveVariables) === JSON.stringify(expected.sensitiveVariables) &&
        got.failClosed.length === 0;
      runs.push({ ...m, catMs, countsMatch: ok });
      log(`  #${k + 1}: ${fmt(m.ms)} (${(bytes / 2 ** 20 / (m.ms / 1000)).toFixed(0)} MiB/s), peak RSS ${(m.peakRssBytes / 2 ** 20).toFixed(1)} MiB, counts ${ok ? 'match' : `DIFFER: ${JSON.stringify(got.counts)} vs ${JSON.stringify(want)}`}; cat alone ${fmt(catMs)}`);
    }
  } finally {
    rmSync(file, { force: true });
  }
  results.synthetic.push({
    mib,
    bytes,
    resources: expected.resources,
    medianMs: median(runs.map((r) => r.ms)),
    peakRssBytes: Math.max(...runs.map((r) => r.peakRssBytes)),
    rssSource: runs[0].rssSource,
    countsMatch: runs.every((r) => r.countsMatch),
    runs,
  });
}

// ---------------------------------------------------------------------------------------------
// 4. Cold start: `node -e 0`, `captf-runner --version`, and the time until the runner spawns
// terraform (a stand-in that records $EPOCHREALTIME as it starts, then fails). All timed in one
// bash loop with $EPOCHREALTIME (µs, no fork), the three interleaved. CPU time too, steadier on a
// loaded machine: each node's own (a --require'd exit hook), and for the first spawn the runner's
// CPU so far (its threads' /proc schedstat, read by the stand-in).

function benchCold() {
  log(`\n== cold start, ${COLD_REPS} interleaved rounds`);
  const dir = join(TMP, 'cold');
  mkdirSync(join(dir, 'module'), { recursive: true });
  mkdirSync(join(dir, 'inputs'), { recursive: true });
  mkdirSync(join(dir, 'out'), { recursive: true });
  writeFileSync(join(dir, 'module/main.tf'), 'resource "terraform_data" "x" {}\n');
  const stamp = join(dir, 'stamp');
  const cpu = join(dir, 'cpu');
  const standin = join(dir, 'terraform');
  // The first spawn's line: its start time (µs) and the runner's CPU so far (ns, every thread).
  writeFileSync(
    standin,
    `#!/bin/bash\nt=\${EPOCHREALTIME/./}\nc=0\nfor f in /proc/$PPID/task/*/schedstat; do read -r n _ <"$f" && c=$((c + n)); done 2>/dev/null\necho "$t $c" >>'${stamp}'\nexit 1\n`,
  );
  chmodSync(standin, 0o755);
  const pre = `--require '${SELF_CPU_PRELOAD}'`;
  const node = `'${process.execPath}'`;
  // The image's V8 compile cache (NODE_COMPILE_CACHE, Node >= 22.1; Node 20 ignores it): "cached"
  // runs read a cache that one run of each command filled first, as the image build fills it.
  const cached = `NODE_COMPILE_CACHE='${dir}/compile-cache'`;
  const apply = `'${RUNNER}' apply --module '${dir}/module' --inputs '${dir}/inputs' --state '${dir}/state.tfstate' --out '${dir}/out' --termination-log '${dir}/termination-log' --log-format json --terraform '${standin}' >/dev/null 2>&1`;
  const script = `
set -u
export BENCH_SELF_CPU_FILE='${cpu}'
spawned() { read -r f c < <(sort -n '${stamp}' | head -1); echo "$1 $((f - s)) $((c / 1000))"; rm -f '${stamp}'; }
${cached} ${node} '${RUNNER}' --version >/dev/null; ${cached} ${node} ${apply}; rm -f '${stamp}'
for k in $(seq ${COLD_REPS}); do
  s=\${EPOCHREALTIME/./}; ${node} ${pre} -e 0; e=\${EPOCHREALTIME/./}; echo "node $((e - s)) $(<'${cpu}')"
  s=\${EPOCHREALTIME/./}; ${node} ${pre} '${RUNNER}' --version >/dev/null; e=\${EPOCHREALTIME/./}; echo "version $((e - s)) $(<'${cpu}')"
  s=\${EPOCHREALTIME/./}; ${cached} ${node} ${pre} '${RUNNER}' --version >/dev/null; e=\${EPOCHREALTIME/./}; echo "versionCached $((e - s)) $(<'${cpu}')"
  s=\${EPOCHREALTIME/./}; ${node} ${apply}; spawned spawn
  s=\${EPOCHREALTIME/./}; ${cached} ${node} ${apply}; spawned spawnCached
  s=\${EPOCHREALTIME/./}; '${standin}' version; spawned standin
done`;
  const r = spawnSync('bash', ['-c', script], { env: ENV, encoding: 'utf8', cwd: dir });
  const wall = {};
  const cpuMs = {};
  for (const line of r.stdout.split('\n').filter(Boolean)) {
    const [k, w, c] = line.split(' ');
    (wall[k] ??= []).push(Number(w) / 1000);
    (cpuMs[k] ??= []).push(k.startsWith('spawn') ? Number(c) / 1000 : Number(c));
  }
  if (!wall.spawn || wall.spawn.length !== COLD_REPS) throw new Error(`the cold-start loop failed:\n${r.stdout}\n${r.stderr}`);
  const m = (series, k) => median(series[k]);
  const pairRatio = (series, k) => median(series[k].map((v, i) => v / series.node[i]));
  results.cold = {
    rounds: COLD_REPS,
    nodeMedianMs: m(wall, 'node'),
    versionMedianMs: m(wall, 'version'),
    firstSpawnMedianMs: m(wall, 'spawn'),
    standinStartMedianMs: m(wall, 'standin'),
    versionRatio: pairRatio(wall, 'version'),
    firstSpawnRatio: pairRatio(wall, 'spawn'),
    nodeCpuMedianMs: m(cpuMs, 'node'),
    versionCpuMedianMs: m(cpuMs, 'version'),
    firstSpawnCpuMedianMs: m(cpuMs, 'spawn'),
    versionCpuRatio: pairRatio(cpuMs, 'version'),
    firstSpawnCpuRatio: pairRatio(cpuMs, 'spawn'),
    compileCache: {
      versionMedianMs: m(wall, 'versionCached'),
      firstSpawnMedianMs: m(wall, 'spawnCached'),
      versionRatio: pairRatio(wall, 'versionCached'),
      firstSpawnRatio: pairRatio(wall, 'spawnCached'),
      versionCpuMedianMs: m(cpuMs, 'versionCached'),
      firstSpawnCpuMedianMs: m(cpuMs, 'spawnCached'),
      versionCpuRatio: pairRatio(cpuMs, 'versionCached'),
      firstSpawnCpuRatio: pairRatio(cpuMs, 'spawnCached'),
    },
    wall,
    cpu: cpuMs,
  };
  const c = results.cold;
  log(`  wall: node -e 0 ${fmt(c.nodeMedianMs)}; --version ${fmt(c.versionMedianMs)} (×${c.versionRatio.toFixed(2)}); first spawn ${fmt(c.firstSpawnMedianMs)} (×${c.firstSpawnRatio.toFixed(2)}; the stand-in's own start, ${fmt(c.standinStartMedianMs)}, included)`);
  log(`  CPU:  node -e 0 ${fmt(c.nodeCpuMedianMs)}; --version ${fmt(c.versionCpuMedianMs)} (×${c.versionCpuRatio.toFixed(2)}); until the first spawn ${fmt(c.firstSpawnCpuMedianMs)} (×${c.firstSpawnCpuRatio.toFixed(2)})`);
  const cc = c.compileCache;
  log(`  with the compile cache: wall --version ×${cc.versionRatio.toFixed(2)}, first spawn ×${cc.firstSpawnRatio.toFixed(2)}; CPU --version ×${cc.versionCpuRatio.toFixed(2)}, first spawn ×${cc.firstSpawnCpuRatio.toFixed(2)}`);
}

// ---------------------------------------------------------------------------------------------

const TARGETS = { apply: 1.03, show: 1.05, rssBytes: 150 * 1e6, cold: 1.3 };

function summary() {
  const verdict = (ok) => (ok ? 'met' : 'MISSED');
  const lines = ['', '== summary (ratios: median of interleaved pairs; target in brackets)'];
  lines.push(`machine: ${results.machine.nproc} CPU (${results.machine.cpu}), ${results.machine.memory}, ${results.machine.node}, ${results.machine.terraform}, load at start ${results.machine.loadavgAtStart}`);
  for (const a of results.apply) {
    for (const [label, r] of [['no changes', a.noChanges], [`changes (${a.updatesPerChange} updates)`, a.changes]]) {
      lines.push(`apply ${a.size.padEnd(7)} ${label.padEnd(22)} runner ${fmt(r.runnerMedianMs).padStart(9)}  bare ${fmt(r.baselineMedianMs).padStart(9)}  wall ×${r.medianPairRatio.toFixed(3)} [≤ ${TARGETS.apply}] ${verdict(r.medianPairRatio <= TARGETS.apply)}`);
      if (r.cpuMedianPairRatio !== undefined)
        lines.push(`${''.padEnd(37)}CPU runner ${fmt(r.runnerCpuMedianMs).padStart(9)}  bare ${fmt(r.baselineCpuMedianMs).padStart(9)}  CPU ×${r.cpuMedianPairRatio.toFixed(3)} [≤ ${TARGETS.apply}] ${verdict(r.cpuMedianPairRatio <= TARGETS.apply)}; node's own CPU ${fmt(r.runnerSelfCpuMedianMs)}`);
    }
  }
  if (results.show) {
    const s = results.show;
    lines.push(`show -json ${s.size} (${(s.documentBytes / 2 ** 20).toFixed(1)} MiB): | classify ${fmt(s.runnerMedianMs)}  > /dev/null ${fmt(s.baselineMedianMs)}  wall ×${s.medianPairRatio.toFixed(3)} [≤ ${TARGETS.show}] ${verdict(s.medianPairRatio <= TARGETS.show)}${s.cpuMedianPairRatio === undefined ? '' : `; CPU ${fmt(s.runnerCpuMedianMs)} vs ${fmt(s.baselineCpuMedianMs)} ×${s.cpuMedianPairRatio.toFixed(3)}`}`);
  }
  for (const s of results.synthetic) {
    lines.push(`synthetic ${String(s.mib).padStart(5)} MiB: ${fmt(s.medianMs).padStart(8)} (${(s.bytes / 2 ** 20 / (s.medianMs / 1000)).toFixed(0)} MiB/s)  peak RSS ${(s.peakRssBytes / 1e6).toFixed(1)} MB [≤ 150 MB] ${verdict(s.peakRssBytes <= TARGETS.rssBytes)}  counts ${s.countsMatch ? 'match' : 'DIFFER'}`);
  }
  if (results.cold) {
    const c = results.cold;
    lines.push(`cold start, wall: node -e 0 ${fmt(c.nodeMedianMs)}; --version ${fmt(c.versionMedianMs)} ×${c.versionRatio.toFixed(2)} [≤ ${TARGETS.cold}] ${verdict(c.versionRatio <= TARGETS.cold)}; first spawn ${fmt(c.firstSpawnMedianMs)} ×${c.firstSpawnRatio.toFixed(2)} [≤ ${TARGETS.cold}] ${verdict(c.firstSpawnRatio <= TARGETS.cold)}`);
    lines.push(`cold start, CPU:  node -e 0 ${fmt(c.nodeCpuMedianMs)}; --version ${fmt(c.versionCpuMedianMs)} ×${c.versionCpuRatio.toFixed(2)} [≤ ${TARGETS.cold}] ${verdict(c.versionCpuRatio <= TARGETS.cold)}; first spawn ${fmt(c.firstSpawnCpuMedianMs)} ×${c.firstSpawnCpuRatio.toFixed(2)} [≤ ${TARGETS.cold}] ${verdict(c.firstSpawnCpuRatio <= TARGETS.cold)}`);
    const cc = c.compileCache;
    const [major, minor] = process.versions.node.split('.').map(Number);
    const cacheNote = major > 22 || (major === 22 && minor >= 1) ? results.machine.node : `${results.machine.node} ignores NODE_COMPILE_CACHE: the same runs again`;
    lines.push(`cold start with the image's compile cache (${cacheNote}): wall --version ×${cc.versionRatio.toFixed(2)} ${verdict(cc.versionRatio <= TARGETS.cold)}, first spawn ×${cc.firstSpawnRatio.toFixed(2)} ${verdict(cc.firstSpawnRatio <= TARGETS.cold)}; CPU --version ×${cc.versionCpuRatio.toFixed(2)} ${verdict(cc.versionCpuRatio <= TARGETS.cold)}, first spawn ×${cc.firstSpawnCpuRatio.toFixed(2)} ${verdict(cc.firstSpawnCpuRatio <= TARGETS.cold)}`);
  }
  lines.push(`load at end ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  log(lines.join('\n'));
}

log(`captf-runner benchmark: ${opts.runner} (${results.machine.bundleBytes} bytes), ${TERRAFORM}; temp dir ${TMP}`);
log(`${results.machine.nproc} CPU, ${results.machine.cpu}, ${results.machine.memory}, node ${process.version}, ${results.machine.terraform}, load ${results.machine.loadavgAtStart}`);
try {
  if (ONLY.has('cold')) benchCold();
  if (ONLY.has('apply')) for (const size of SIZES) benchApply(size);
  if (ONLY.has('show')) benchShow(SIZES.at(-1));
  if (ONLY.has('synthetic')) for (const mib of SYNTH_MIB) await benchSynthetic(mib);
} catch (error) {
  summary();
  process.stderr.write(`bench: ${error.stack ?? error}\n(temp dir kept: ${TMP})\n`);
  exiting = true;
  process.exit(1);
}
results.machine.loadavgAtEnd = readFileSync('/proc/loadavg', 'utf8').trim();
summary();
if (opts['json-out']) writeFileSync(opts['json-out'], JSON.stringify(results, null, 2) + '\n');
