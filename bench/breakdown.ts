// Part 5 of `npm run bench` (bench/run.ts): where the runner's extra time goes, from traced runs of both sides of
// the apply part: every terraform launch (start, end, CPU), the runner's result.json steps[], and the node
// process's own start and exit. Both sides run a tracing terraform, a bash wrapper that notes when each launch
// starts and ends (µs), its CPU (bash's `times`: ms) and its arguments. The wrapper costs each launch a bash start
// (a few ms, on both sides): these runs are not the apply part's ratios.
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Bench, fmt, log, median, q, type SelfUsage, type Timed } from './lib/harness.ts';
import type { ModuleSize } from './lib/module.ts';
import { bareApply, type RunnerResult, runnerApply, setUpSides } from './lib/sides.ts';

/** A stretch of one run's timeline: a terraform launch (concurrent ones merged), a gap between two, or an end. */
interface Segment {
  key: string;
  ms: number | undefined;
  cpuMs?: number | undefined;
  terraform?: boolean;
}

/** One traced run of a side. */
interface Timeline {
  segments: Segment[];
  total: number;
  cpuMs: number;
  selfCpuMs: number | undefined;
  nodeStartMs: number | undefined;
  firstStepMs: number | undefined;
  nodeExitToReapedMs: number | undefined;
  steps: { name: string; status: string; ms: number }[] | undefined;
}

/** The medians of a side's traced runs. */
interface MedianTimeline {
  segments: Segment[];
  totalMs: number | undefined;
  cpuMs: number | undefined;
  selfCpuMs: number | undefined;
  nodeStartMs: number | undefined;
  firstStepMs: number | undefined;
  nodeExitToReapedMs: number | undefined;
  steps: { name: string; ms: number | undefined }[] | undefined;
}

/** The runner's time and CPU beyond the bare steps', by cause. */
interface ExtraTime {
  totalMs: number;
  cpuMs: number;
  beforeFirstSpawnMs: number;
  extraLaunches: { key: string; ms: number | undefined; cpuMs: number | undefined }[];
  extraLaunchesMs: number;
  extraLaunchesCpuMs: number;
  personStepsMs: number;
  personStepsCpuMs: number;
  gapsMs: number;
  tailMs: number;
  runnerNodeCpuMs: number | undefined;
}

interface BreakdownCase {
  runner: MedianTimeline;
  bare: MedianTimeline;
  runs: { runner: Timeline[]; bare: Timeline[] };
  extra: ExtraTime;
}

export interface BreakdownResult {
  size: string;
  instances: number;
  runs: number;
  noChanges: BreakdownCase;
  changes: BreakdownCase;
}

function tracingTerraform(b: Bench, dir: string): { wrapper: string; trace: string } {
  const wrapper = join(dir, 'terraform');
  const trace = join(dir, 'trace.tsv');
  writeFileSync(
    wrapper,
    `#!/bin/bash
s=\${EPOCHREALTIME/./}
${q(b.terraform)} "$@"
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
function timesMs(text: string): number {
  const m = /^(\d+)m([\d.]+)s$/.exec(text);
  if (!m) throw new Error(`"${text}" is not bash's \`times\` format`);
  return (Number(m[1]) * 60 + Number(m[2])) * 1000;
}

/** A launch's name in the timeline: the command and its first flag that tells it apart. */
function launchName(argv: string): string {
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
function timeline(run: Timed & { self?: SelfUsage; result?: RunnerResult }, traceFile: string): Timeline {
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
  const groups: typeof launches = [];
  for (const l of launches) {
    const last = groups.at(-1);
    if (last && l.startMs < last.endMs) {
      last.name += ` ∥ ${l.name}`;
      last.endMs = Math.max(last.endMs, l.endMs);
      last.cpuMs += l.cpuMs;
    } else groups.push({ ...l });
  }
  const first = groups[0];
  const last = groups.at(-1);
  if (!first || !last) throw new Error(`${traceFile}: no terraform launch`);
  const seen: Record<string, number> = {};
  const segments: Segment[] = [{ key: 'launch → first terraform start', ms: first.startMs - run.launchedAtMs }];
  groups.forEach((g, i) => {
    seen[g.name] = (seen[g.name] ?? 0) + 1;
    const n = seen[g.name];
    const key = n > 1 ? `${g.name} (${n})` : g.name;
    if (i > 0) segments.push({ key: `gap before ${key}`, ms: g.startMs - groups[i - 1].endMs });
    segments.push({ key, ms: g.endMs - g.startMs, cpuMs: g.cpuMs, terraform: true });
  });
  segments.push({ key: 'last terraform exit → exit', ms: run.endedAtMs - last.endMs });
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
function medianTimeline(runs: Timeline[]): MedianTimeline {
  const keys: string[] = [];
  for (const r of runs) for (const s of r.segments) if (!keys.includes(s.key)) keys.push(s.key);
  const segment = (r: Timeline, key: string) => r.segments.find((s) => s.key === key);
  const stepNames: string[] = [];
  for (const r of runs) for (const s of r.steps ?? []) if (!stepNames.includes(s.name)) stepNames.push(s.name);
  return {
    segments: keys.map((key) => ({
      key,
      ms: median(runs.map((r) => segment(r, key)?.ms)),
      cpuMs: median(runs.map((r) => segment(r, key)?.cpuMs)),
      terraform: runs.some((r) => segment(r, key)?.terraform),
    })),
    totalMs: median(runs.map((r) => r.total)),
    cpuMs: median(runs.map((r) => r.cpuMs)),
    selfCpuMs: median(runs.map((r) => r.selfCpuMs)),
    nodeStartMs: median(runs.map((r) => r.nodeStartMs)),
    firstStepMs: median(runs.map((r) => r.firstStepMs)),
    nodeExitToReapedMs: median(runs.map((r) => r.nodeExitToReapedMs)),
    steps: runs[0].steps
      ? stepNames.map((name) => ({ name, ms: median(runs.map((r) => r.steps?.find((s) => s.name === name)?.ms)) }))
      : undefined,
  };
}

const PERSON_STEPS = ['init', 'validate', 'plan', 'show -json', 'apply'];

/**
 * The runner's time and CPU beyond the bare steps', by cause: node before its first terraform, the
 * launches a person does not make, the person's own steps run by the runner, the gaps between
 * launches (node's work between steps), and from the last exit until the process is reaped.
 */
function extraTime(runner: MedianTimeline, bare: MedianTimeline): ExtraTime {
  const sum = (t: MedianTimeline, pick: (x: Segment) => boolean, field: 'ms' | 'cpuMs' = 'ms') =>
    t.segments.filter(pick).reduce((n, x) => n + (x[field] ?? 0), 0);
  const isGap = (x: Segment) => x.key.startsWith('gap before');
  const isPerson = (x: Segment) => !isGap(x) && PERSON_STEPS.includes(x.key);
  const isExtraLaunch = (x: Segment) => x.terraform === true && !PERSON_STEPS.includes(x.key);
  const first = (t: MedianTimeline) => t.segments[0].ms ?? 0;
  const tail = (t: MedianTimeline) => t.segments.at(-1)?.ms ?? 0;
  const launches = runner.segments.filter(isExtraLaunch).map((x) => ({ key: x.key, ms: x.ms, cpuMs: x.cpuMs }));
  return {
    totalMs: (runner.totalMs ?? 0) - (bare.totalMs ?? 0),
    cpuMs: (runner.cpuMs ?? 0) - (bare.cpuMs ?? 0),
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

function printTimeline(label: string, { runner, bare, extra }: BreakdownCase): void {
  log(`  ${label}: medians, runner | bare`);
  const bareOf = (key: string) => bare.segments.find((s) => s.key === key);
  for (const s of runner.segments) {
    const b = bareOf(s.key);
    const cpu = s.terraform ? `  CPU ${fmt(s.cpuMs)}${b ? ` | ${fmt(b.cpuMs)}` : ''}` : '';
    log(`    ${s.key.padEnd(40)} ${fmt(s.ms).padStart(9)} | ${(b ? fmt(b.ms) : '').padStart(9)}${cpu}`);
  }
  log(
    `    ${'total'.padEnd(40)} ${fmt(runner.totalMs).padStart(9)} | ${fmt(bare.totalMs).padStart(9)}  CPU ${fmt(runner.cpuMs)} | ${fmt(bare.cpuMs)} (node's own ${fmt(runner.selfCpuMs)})`,
  );
  const steps = runner.steps ?? [];
  log(
    `    the runner's node: started ${fmt(runner.nodeStartMs)} after launch, began its first step (${steps[0]?.name}) ${fmt(runner.firstStepMs)} after launch, was reaped ${fmt(runner.nodeExitToReapedMs)} after its exit`,
  );
  log(`    result.json steps[]: ${steps.map((s) => `${s.name} ${fmt(s.ms)}`).join(', ')}`);
  log(
    `    the runner's extra ${fmt(extra.totalMs)} (CPU ${fmt(extra.cpuMs)}): before its first terraform ${fmt(extra.beforeFirstSpawnMs)}; ` +
      `launches a person does not make ${fmt(extra.extraLaunchesMs)} (CPU ${fmt(extra.extraLaunchesCpuMs)}: ${extra.extraLaunches.map((l) => `${l.key} ${fmt(l.ms)}/${fmt(l.cpuMs)}`).join(', ')}); ` +
      `the person's steps ${fmt(extra.personStepsMs)} (CPU ${fmt(extra.personStepsCpuMs)}); gaps ${fmt(extra.gapsMs)}; exit ${fmt(extra.tailMs)}; node's own CPU ${fmt(extra.runnerNodeCpuMs)}`,
  );
}

export function benchBreakdown(b: Bench, size: ModuleSize, runs: number): BreakdownResult {
  const name = `${size.resources}x${size.instances}`;
  log(
    `\n== breakdown, ${name} (${size.resources * size.instances} instances), ${runs} traced runs of each side per case, interleaved`,
  );
  const dir = join(b.tmp, `breakdown-${name}`);
  setUpSides(b, dir, size);
  const { wrapper, trace } = tracingTerraform(b, dir);
  const traced = (changes: boolean): BreakdownCase => {
    const runner: Timeline[] = [];
    const bare: Timeline[] = [];
    for (let k = 0; k < runs; k++) {
      const sides = [
        () =>
          runner.push(
            timeline(
              runnerApply(b, dir, changes ? `runner-${k}` : 'g0', {
                terraform: wrapper,
                expect: changes ? 'succeeded' : 'noChanges',
              }),
              trace,
            ),
          ),
        () =>
          bare.push(
            timeline(
              bareApply(b, dir, changes ? `bare-${k}` : 'g0', { terraform: wrapper, expectChanges: changes }),
              trace,
            ),
          ),
      ];
      if (k % 2) sides.reverse();
      for (const side of sides) side();
    }
    const runnerMedians = medianTimeline(runner);
    const bareMedians = medianTimeline(bare);
    const entry: BreakdownCase = {
      runner: runnerMedians,
      bare: bareMedians,
      runs: { runner, bare },
      extra: extraTime(runnerMedians, bareMedians),
    };
    printTimeline(changes ? `${size.instances} updates` : 'no changes', entry);
    return entry;
  };
  const noChanges = traced(false);
  const changes = traced(true);
  rmSync(dir, { recursive: true, force: true });
  return { size: name, instances: size.resources * size.instances, runs, noChanges, changes };
}
