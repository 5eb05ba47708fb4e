// One cold read in a fresh process, for bench/reader.ts (bundled by it with esbuild):
// the first document this process reads, in 64 KiB chunks as a pipe or a file stream hands them over,
// through the runner's own readers (summarizeState for a `state pull`, classifyPlanStream for a
// `show -json` with the before and after of changed values built, as an apply does), or through
// JSON.parse of the same bytes (decoded first, as a reader of them would). Prints {"ms", "cpuMs"}:
// the read's wall time and its CPU time (user + system: a shared machine's load falls less on it).
//
//   node json-reader-cold.mjs state|plan|json-parse FILE
//
// Also a startup snapshot's entry (bundled as CommonJS): built, it reads nothing, and the read runs
// when node restores it (`node --snapshot-blob BLOB json-reader-cold.cjs MODE FILE`), as the runner
// starts from its blob; with WARM_READER=1 in the build's environment the build first runs the
// runner's warm-up of the reader (src/warm-reader.ts, as src/startup-snapshot.ts does).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startupSnapshot } from 'node:v8';
import { summarizeState } from '../src/state/summary.ts';
import { classifyPlanStream } from '../src/plan/stream.ts';
import { warmReader } from '../src/warm-reader.ts';

async function main(): Promise<void> {
  const [mode, file] = process.argv.slice(2);
  if (mode === undefined || file === undefined || !['state', 'plan', 'json-parse'].includes(mode)) {
    process.stderr.write('usage: json-reader-cold.mjs state|plan|json-parse FILE\n');
    process.exit(2);
  }
  const bytes = readFileSync(file);
  const CHUNK = 64 * 1024;
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += CHUNK) chunks.push(bytes.subarray(at, at + CHUNK));
  async function* source() {
    yield* chunks;
  }

  let changedValues = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  if (mode === 'state') await summarizeState(source(), { outputs: true });
  else if (mode === 'plan') await classifyPlanStream(source(), { onChangedValues: () => void changedValues++ });
  else JSON.parse(bytes.toString('utf8'));
  const ms = performance.now() - started;
  const { user, system } = process.cpuUsage(cpuBefore);
  process.stdout.write(JSON.stringify({ ms, cpuMs: (user + system) / 1000 }) + '\n');
}

if (startupSnapshot.isBuildingSnapshot()) {
  if (process.env.WARM_READER === '1') void warmReader();
  startupSnapshot.setDeserializeMainFunction(() => void main());
} else void main();
