// Part 2 of `npm run bench` (bench/run.ts): `node -e 0` and the time from launching `captf-runner apply` until it
// spawns terraform (a stand-in that records $EPOCHREALTIME as it starts, then fails), in one bash loop with
// $EPOCHREALTIME (µs, no fork), interleaved rounds; also through the startup snapshot as the image starts it, and
// with a compile cache (NODE_COMPILE_CACHE) when the node (--node) has one. CPU too: node's own for `node -e 0` (a
// second run with the preload, so that the timed one is plain), and for the runner its threads' CPU so far
// (/proc/PPID/task/*/schedstat, read by the stand-in).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Bench, fmt, log, mb, medianOf, q, REPO, SELF_USAGE, TARGETS } from './lib/harness.ts';

/** The runner until its first spawn, against `node -e 0` of the same round. */
interface StartSide {
  wallMedianMs: number;
  cpuMedianMs: number;
  wallRatio: number;
  cpuRatio: number;
}

export interface StartResult {
  node: string;
  rounds: number;
  nodeE0: { wallMedianMs: number; cpuMedianMs: number };
  firstSpawn: StartSide;
  firstSpawnWithCompileCache: StartSide | undefined;
  firstSpawnThroughSnapshot: StartSide;
  snapshotBlobBytes: number;
  standinOwnStartMedianMs: number;
  /** Every round's figures, in ms, by series: node, spawn, spawnCached, spawnSnapshot, standin. */
  wall: Record<string, number[]>;
  cpu: Record<string, number[]>;
}

/** NODE_COMPILE_CACHE came with Node 22.1. */
function hasCompileCache(nodeVersion: string): boolean {
  const [major, minor] = nodeVersion.slice(1).split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 1);
}

export function benchStart(b: Bench): StartResult {
  const rounds = b.opts.startRounds;
  const compileCache = hasCompileCache(b.nodeVersion);
  log(
    `\n== start, ${rounds} interleaved rounds, ${b.nodeVersion}${compileCache ? ', with and without a compile cache' : ''}`,
  );
  const dir = join(b.tmp, 'start');
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
  const node = q(b.node);
  const apply = `${q(b.runner)} apply --kind cluster --module ${q(`${dir}/module`)} --inputs ${q(`${dir}/inputs`)} --state ${q(`${dir}/state.tfstate`)} --new-state --out ${q(`${dir}/out`)} --termination-log ${q(`${dir}/termination-log`)} --log-format json --terraform ${q(standin)} >/dev/null 2>&1`;
  // What a compile cache would save (the image carries none: it is not byte-identical build to build): one run fills it first.
  const cached = `NODE_COMPILE_CACHE=${q(`${dir}/compile-cache`)}`;
  const cachedRounds = compileCache ? `s=\${EPOCHREALTIME/./}; ${cached} ${node} ${apply}; spawned spawnCached` : '';
  // Through the startup snapshot, as the image starts it: its command (runner/captf-runner.sh) naming this node and
  // the runner here, and a blob made by this node.
  const launcher = join(dirname(b.runner), 'captf-runner.sh');
  writeFileSync(
    launcher,
    readFileSync(join(REPO, 'runner/captf-runner.sh'), 'utf8')
      .replace(/^lib=.*$/m, `lib=${q(dirname(b.runner))}`)
      .replace(/^node=.*$/m, `node=${q(b.node)}`),
    { mode: 0o755 },
  );
  const blob = b.snapshotBlob();
  const launched = `PATH=${q(dirname(b.node))}:"$PATH" ${q(launcher)} ${apply.slice(q(b.runner).length + 1)}`;
  const snapshotRounds = `s=\${EPOCHREALTIME/./}; ${launched}; spawned spawnSnapshot`;
  const script = `
set -u
export BENCH_SELF_USAGE_FILE=${q(usage)}
spawned() { read -r f c < <(sort -n ${q(stamp)} | head -1); echo "$1 $((f - s)) $((c / 1000))"; rm -f ${q(stamp)}; }
${compileCache ? `${cached} ${node} ${apply};` : ''} ${node} ${apply}; ${launched}; rm -f ${q(stamp)}
for k in $(seq ${rounds}); do
  s=\${EPOCHREALTIME/./}; ${node} -e 0; e=\${EPOCHREALTIME/./}; echo "node $((e - s))"
  ${node} --require ${q(SELF_USAGE)} -e 0
  s=\${EPOCHREALTIME/./}; ${node} ${apply}; spawned spawn
  ${cachedRounds}
  ${snapshotRounds}
  s=\${EPOCHREALTIME/./}; ${q(standin)} version; spawned standin
done`;
  const r = spawnSync('bash', ['-c', script], { env: b.env, encoding: 'utf8', cwd: dir });
  const wall: Record<string, number[]> = {};
  // `node -e 0`'s CPU: its own, one line per round from the preload (timed without it); the runner's: µs from the stand-in.
  const cpu: Record<string, number[]> = {
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
    wall.spawnSnapshot?.length !== rounds ||
    wall.spawn?.length !== rounds ||
    wall.node?.length !== rounds ||
    cpu.node.length !== rounds
  )
    throw new Error(`the start loop failed:\n${r.stdout}\n${r.stderr}`);
  const ratio = (series: Record<string, number[]>, k: string) => medianOf(series[k].map((v, i) => v / series.node[i]));
  const side = (k: string): StartSide => ({
    wallMedianMs: medianOf(wall[k]),
    cpuMedianMs: medianOf(cpu[k]),
    wallRatio: ratio(wall, k),
    cpuRatio: ratio(cpu, k),
  });
  const s: StartResult = {
    node: b.nodeVersion,
    rounds,
    nodeE0: { wallMedianMs: medianOf(wall.node), cpuMedianMs: medianOf(cpu.node) },
    firstSpawn: side('spawn'),
    firstSpawnWithCompileCache: compileCache ? side('spawnCached') : undefined,
    firstSpawnThroughSnapshot: side('spawnSnapshot'),
    snapshotBlobBytes: statSync(blob).size,
    standinOwnStartMedianMs: medianOf(wall.standin ?? []),
    wall,
    cpu,
  };
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
  return s;
}
