// The unit group in a few processes (scripts/test.sh, test/README.md "Running them"): which test files share
// a process (a shard) and in which order they run there, and the shard's entry file. Pure but for the weights'
// file. A test process cost ≈ 0.3 s of CPU before its first test (node, its test runner, zod; the CEL library where
// loaded: bench/HISTORY.md, "The unit group in shards"), once for each of the group's 111 files.
//
// Files are dealt to the shards heaviest first, each to the lightest shard so far (their weights: WEIGHTS_FILE,
// each file's share of the group's test time as seconds of a 40 s whole, from bench/test-times.mjs; a file it
// does not name, a new one, counts as the median file). The seed deals
// files of the same weight class in another order, so other files share a process, and orders each shard's
// files: every order must pass (a file leaves the process as it found it), and a run in a new order each time
// proves it where a fixed order would let a leak between two neighbours go unseen.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEIGHTS_FILE = new URL('./test-weights.json', import.meta.url);
const SHARD_RUNTIME = fileURLToPath(new URL('../../test/support/shard.ts', import.meta.url));
/** The committed weights: test file → seconds. */
export function readWeights() {
  return JSON.parse(readFileSync(WEIGHTS_FILE, 'utf8'));
}

/** A small seeded generator (mulberry32): the same seed, the same numbers on every machine. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled(items, next) {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * `files` in at most `count` shards, each a list of files in the order they run: every file in exactly one.
 * The same files, weights and seed give the same shards.
 */
export function planShards(files, { count, seed, weights }) {
  const next = random(seed);
  const known = Object.values(weights).sort((a, b) => a - b);
  const median = known[Math.floor(known.length / 2)] ?? 1;
  const weight = (file) => weights[file] ?? median;
  // Weight classes of a factor of 2 (under 0.1 s, 0.1–0.2 s, 0.2–0.4 s, …): the heavy files are dealt first, so the shards
  // come out even; inside a class the seed's order.
  const weightClass = (file) => Math.floor(Math.log2(Math.max(weight(file), 0.05) / 0.05));
  const dealt = shuffled([...new Set(files)], next).sort((a, b) => weightClass(b) - weightClass(a));
  const shards = Array.from({ length: Math.min(count, dealt.length) }, () => ({ files: [], load: 0 }));
  for (const file of dealt) {
    const lightest = shards.reduce((min, shard) => (shard.load < min.load ? shard : min));
    lightest.files.push(file);
    lightest.load += weight(file);
  }
  return shards.map((shard) => shuffled(shard.files, next));
}

/**
 * The source of a shard's entry (bundled by build-tests.mjs; the files' paths from the working directory): each file a
 * suite named by its path, loaded when the one before it has ended (test/support/shard.ts).
 */
export function shardEntry(files, { index, count, seed }) {
  return [
    `// Shard ${index} of ${count}, seed ${seed} (scripts/build/test-shards.mjs): its files in the order they run.`,
    `import { testFile } from ${JSON.stringify(SHARD_RUNTIME)};`,
    ...files.map((file) => `testFile(${JSON.stringify(file)}, () => import(${JSON.stringify(resolve(file))}));`),
    '',
  ].join('\n');
}
