// Run inside the image by scripts/image/image-check.sh (node is the image's own), in interleaved rounds:
//   - the start of `captf-runner --version` against `node -e 0`, wall time and CPU (the children's,
//     from /proc/self/stat: 10 ms ticks), and what V8's compile cache would save on it (the image has
//     none: it cannot be built byte for byte the same twice);
//   - an apply from launch to its first terraform spawn, through the image's command (its startup
//     snapshot) and as the plain bundle, against `node -e 0`: CPU from /proc/PID/task/*/schedstat (ns),
//     read by a stand-in terraform as it starts (then it fails), and for `node -e 0` as it exits;
//   - whether the image's command started node through the snapshot (the runner's command line).
// Prints one JSON line of medians, in ms.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROUNDS = Number(process.argv[2] ?? 15);
const TICK_MS = 10; // USER_HZ is 100 on Linux
const childCpuMs = () => {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS; // cutime + cstime
};
const runner = '/usr/local/bin/captf-runner';
const bundle = '/usr/local/lib/captf-runner/captf-runner.mjs';
const dir = mkdtempSync(join(process.env.TMPDIR ?? '/tmp', 'start-figures-'));
const cached = { ...process.env, NODE_COMPILE_CACHE: join(dir, 'compile-cache') };

// The stand-in terraform: the runner's CPU so far (its threads' schedstat, ns) and its command line.
const cpuFile = join(dir, 'cpu');
const cmdlineFile = join(dir, 'cmdline');
const standin = join(dir, 'terraform');
writeFileSync(
  standin,
  `#!/bin/sh\nc=0\nfor f in /proc/$PPID/task/*/schedstat; do read -r n _ <"$f" && c=$((c + n)); done\necho "$c" >'${cpuFile}'\ntr '\\0' ' ' </proc/$PPID/cmdline >'${cmdlineFile}'\nexit 1\n`,
  { mode: 0o755 },
);
const atExit = join(dir, 'at-exit.cjs');
writeFileSync(
  atExit,
  `process.on('exit', () => { let c = 0; for (const t of require('fs').readdirSync('/proc/self/task')) c += Number(require('fs').readFileSync('/proc/self/task/' + t + '/schedstat', 'utf8').split(' ')[0]); require('fs').writeFileSync(${JSON.stringify(cpuFile)}, String(c)); });\n`,
);
for (const sub of ['module', 'inputs']) mkdirSync(join(dir, sub));
writeFileSync(join(dir, 'module/main.tf'), 'resource "terraform_data" "x" {}\n');
const apply = [
  'apply',
  ...['--module', join(dir, 'module'), '--inputs', join(dir, 'inputs'), '--out', join(dir, 'out')],
  ...['--state', join(dir, 'state/terraform.tfstate'), '--new-state', '--terraform', standin],
];

const cases = {
  version: [runner, ['--version'], process.env],
  node: [process.execPath, ['-e', '0'], process.env],
  versionCompileCache: [runner, ['--version'], cached],
};
/** Cases whose CPU is read from schedstat (ns), at the first spawn or at exit. */
const spawnCases = {
  applySnapshot: [runner, apply],
  applyPlain: [process.execPath, [bundle, ...apply]],
  nodeAtExit: [process.execPath, ['--require', atExit, '-e', '0']],
};
const samples = Object.fromEntries(
  [...Object.keys(cases), ...Object.keys(spawnCases)].map((name) => [name, { wall: [], cpu: [] }]),
);
spawnSync(runner, ['--version'], { stdio: 'ignore', env: cached }); // fills the cache
spawnSync(runner, apply, { stdio: 'ignore' }); // the first run of each reads its files from disk
const throughSnapshot = readFileSync(cmdlineFile, 'utf8').includes('--snapshot-blob');
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, [file, args, env]] of Object.entries(cases)) {
    const cpu = childCpuMs();
    const start = process.hrtime.bigint();
    const run = spawnSync(file, args, { stdio: 'ignore', env });
    if (run.status !== 0) throw new Error(`${file} ${args.join(' ')} exited ${run.status}`);
    samples[name].wall.push(Number(process.hrtime.bigint() - start) / 1e6);
    samples[name].cpu.push(childCpuMs() - cpu);
  }
  for (const [name, [file, args]] of Object.entries(spawnCases)) {
    rmSync(cpuFile, { force: true });
    spawnSync(file, args, { stdio: 'ignore' });
    samples[name].cpu.push(Number(readFileSync(cpuFile, 'utf8')) / 1e6);
  }
}
rmSync(dir, { recursive: true, force: true });
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const figures = Object.fromEntries(
  Object.entries(samples).map(([name, s]) => [
    name,
    s.wall.length
      ? { wallMs: Math.round(median(s.wall) * 10) / 10, cpuMs: median(s.cpu) }
      : { cpuMs: Math.round(median(s.cpu) * 10) / 10 },
  ]),
);
/** The median of the rounds' ratios of a case's CPU to `node -e 0`'s. */
const ratio = (name) =>
  Math.round(median(samples[name].cpu.map((cpu, i) => cpu / samples.nodeAtExit.cpu[i])) * 100) / 100;
console.log(
  JSON.stringify({
    rounds: ROUNDS,
    throughSnapshot,
    ...figures,
    firstSpawnCpuRatio: { snapshot: ratio('applySnapshot'), plain: ratio('applyPlain') },
  }),
);
