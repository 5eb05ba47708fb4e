// A node:test reporter that measures the test suite (BENCHMARKS.md, "Test suite"): for each file,
// the time of its tests (the sum of its top-level tests and suites), when its process started and
// how many tests it ran; then the slowest tests. Times are as the suite ran them (with
// --test-concurrency, on a machine maybe shared), not each file alone.
//
//   npm run build && node --import tsx --test --test-timeout=900000 --test-concurrency=2 \
//     --test-reporter=spec --test-reporter-destination=stdout \
//     --test-reporter=./bench/test-times.mjs --test-reporter-destination=test-times.txt \
//     $(find test -name '*.test.ts' | sort)
// (scripts/test.sh's run, with this table written to test-times.txt as well); the unit group as it runs, in its
// shards: CAPTF_TEST_TIMES=test-times.txt npm run test:unit
import { relative } from 'node:path';

export default async function* testTimes(source) {
  const origin = Date.now();
  const files = new Map();
  const tests = [];
  const file = (name) => {
    if (!files.has(name)) files.set(name, { startedMs: undefined, busyMs: 0, tests: 0, failed: 0 });
    return files.get(name);
  };
  for await (const event of source) {
    const { data } = event;
    if (!data?.file) continue;
    // In the unit group's shards (scripts/test.sh) a file is a top-level suite named by its path.
    const fileSuite = data.nesting === 0 && data.name.endsWith('.test.ts') && data.name !== data.file;
    const f = file(fileSuite ? data.name : relative(process.cwd(), data.file));
    // A file's own entry (its name is the path) is dequeued when its process starts; a shard's file as it starts.
    if (event.type === 'test:dequeue' && data.nesting === 0 && (data.name === data.file || fileSuite))
      f.startedMs ??= Date.now() - origin;
    if (event.type === 'test:pass' || event.type === 'test:fail') {
      const ms = data.details?.duration_ms ?? 0;
      // A file's top-level tests and suites run one after the other: their sum is the file's time
      // (node reports a file's results in file order, so arrival times say nothing).
      if (data.nesting === 0) f.busyMs += ms;
      if (data.details?.type !== 'suite') f.tests++;
      if (event.type === 'test:fail') f.failed++;
      tests.push({ file: relative(process.cwd(), data.file), name: data.name, nesting: data.nesting, ms });
    }
  }
  const totalMs = Date.now() - origin;
  const s = (ms) => `${(ms / 1000).toFixed(1)} s`.padStart(8);
  const rows = [...files.entries()].map(([name, f]) => ({ name, ...f })).sort((a, b) => b.busyMs - a.busyMs);
  const busy = rows.reduce((n, r) => n + r.busyMs, 0);
  yield `\n== test suite: ${s(totalMs)} wall, ${rows.length} files, ${s(busy)} of tests in all (the rest: starting each file's process, and idle slots)\n`;
  yield `   tests  started  count  file\n`;
  for (const r of rows)
    yield `${s(r.busyMs)} ${s(r.startedMs ?? 0)}  ${String(r.tests).padStart(5)}  ${r.name}${r.failed ? ` (${r.failed} failed)` : ''}\n`;
  yield `\n== the slowest tests and suites\n`;
  for (const t of tests.sort((a, b) => b.ms - a.ms).slice(0, 40))
    yield `${s(t.ms)}  ${'  '.repeat(t.nesting)}${t.name.slice(0, 120)}  (${t.file})\n`;
  // What the unit group's shards are dealt by (scripts/build/test-shards.mjs): a run of `npm run test:unit` with
  // CAPTF_TEST_TIMES=FILE, this block copied into scripts/build/test-weights.json.
  const weights = rows
    .filter((r) => r.name.endsWith('.test.ts') && r.busyMs > 0)
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  yield `\n== the files' seconds, as scripts/build/test-weights.json holds them\n`;
  yield `${JSON.stringify(Object.fromEntries(weights.map((r) => [r.name, Number((r.busyMs / 1000).toFixed(2))])), null, 2)}\n`;
}
