// Run inside the image by scripts/image-check.sh (node is the image's own): the start of
// `captf-runner --version` against `node -e 0`, in interleaved rounds, wall time and CPU (the
// children's, from /proc/self/stat), and what V8's compile cache would save on it (the image has
// none: it cannot be built byte for byte the same twice). Prints one JSON line of medians, in ms.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const ROUNDS = Number(process.argv[2] ?? 15);
const TICK_MS = 10; // USER_HZ is 100 on Linux
const childCpuMs = () => {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS; // cutime + cstime
};
const runner = '/usr/local/bin/captf-runner';
const cached = { ...process.env, NODE_COMPILE_CACHE: `${process.env.TMPDIR ?? '/tmp'}/compile-cache` };
const cases = {
  version: [runner, ['--version'], process.env],
  node: [process.execPath, ['-e', '0'], process.env],
  versionCompileCache: [runner, ['--version'], cached],
};
const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, { wall: [], cpu: [] }]));
spawnSync(runner, ['--version'], { stdio: 'ignore', env: cached }); // fills the cache
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, [file, args, env]] of Object.entries(cases)) {
    const cpu = childCpuMs();
    const start = process.hrtime.bigint();
    const run = spawnSync(file, args, { stdio: 'ignore', env });
    if (run.status !== 0) throw new Error(`${file} ${args.join(' ')} exited ${run.status}`);
    samples[name].wall.push(Number(process.hrtime.bigint() - start) / 1e6);
    samples[name].cpu.push(childCpuMs() - cpu);
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const figures = Object.fromEntries(
  Object.entries(samples).map(([name, s]) => [
    name,
    { wallMs: Math.round(median(s.wall) * 10) / 10, cpuMs: median(s.cpu) },
  ]),
);
console.log(JSON.stringify({ rounds: ROUNDS, ...figures }));
