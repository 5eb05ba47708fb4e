// Part 7 of `npm run bench` (bench/run.ts): the streaming JSON reader (src/json/select-json.ts) on the first
// document of a fresh process (its code cold, as in a run: each document is read once), through the runner's own
// selectors (bench/json-reader-cold.ts), against JSON.parse of the same bytes in a fresh process of its own: a
// `state pull` of 500 instances (≈ 230 KB), `show -json` documents of ≈ 530 KB and 4 MiB. Rounds interleaved, the
// order alternating. The time is the read's own, not the process start; MB/s are of its CPU time. With
// --snapshot, also through startup snapshots of the worker, with and without the reader's warm-up in their build.
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  APPLY_ENV_SNAPSHOT,
  type Bench,
  fmt,
  GEN_PLAN,
  IMAGE_V8_FLAGS,
  loadavg,
  log,
  mb,
  medianOf,
  REPO,
} from './lib/harness.ts';
import { stateText } from './lib/module.ts';

/** Through a startup snapshot of the worker: CPU of the read, and ÷ JSON.parse's. */
interface SnapshotFigures {
  cpuMs: number[];
  cpuMedianMs: number;
  MBps: number;
  ratio: number;
}

export interface ReaderRow {
  document: string;
  bytes: number;
  rounds: number;
  loadavg: string;
  readerWallMs: number[];
  jsonParseWallMs: number[];
  readerCpuMs: number[];
  jsonParseCpuMs: number[];
  readerWallMedianMs: number;
  readerCpuMedianMs: number;
  jsonParseCpuMedianMs: number;
  readerMBps: number;
  jsonParseMBps: number;
  /** The reader's CPU ÷ JSON.parse's, the median of the rounds. */
  ratio: number;
  snapshot?: SnapshotFigures;
  snapshotWarmed?: SnapshotFigures;
  warmedOverSnapshot?: number;
  /** Through the warmed snapshot, as the runner reads, ÷ the plain bundle. */
  runnerOverPlain?: number;
}

/** The blobs' sizes, with --snapshot. */
type BlobBytes = { snapshot: number; snapshotWarmed: number };

interface Document {
  name: string;
  mode: 'state' | 'plan';
  file: string;
}

/** How a round reads a document: the worker's bundle, or a blob of it, or JSON.parse. */
interface Variant {
  name: 'reader' | 'snapshot' | 'snapshotWarmed' | 'jsonParse';
  launch: string[];
  env: NodeJS.ProcessEnv;
  mode?: 'json-parse';
}

/** What bench/json-reader-cold.ts prints. */
interface Read {
  ms: number;
  cpuMs: number;
}

/** The reader's documents: a `state pull` of the 500-instance module, and plans from gen-plan.mjs. */
function readerDocuments(dir: string): Document[] {
  const state = join(dir, 'state-20x25.json');
  // terraform prints a pulled state indented by two spaces.
  writeFileSync(state, JSON.stringify(JSON.parse(stateText({ resources: 20, instances: 25 }, 'g1')), null, 2));
  const documents: Document[] = [{ name: 'state pull, 500 instances', mode: 'state', file: state }];
  for (const [label, bytes] of [
    ['530 KB', 530_000],
    ['4 MiB', 4 * 2 ** 20],
  ] as const) {
    const file = join(dir, `plan-${bytes}.json`);
    const gen = spawnSync(process.execPath, [GEN_PLAN, '--bytes', String(bytes), '--out', file], { stdio: 'ignore' });
    if (gen.status !== 0) throw new Error(`gen-plan --bytes ${bytes} failed`);
    documents.push({ name: `show -json, ${label}`, mode: 'plan', file });
  }
  return documents;
}

/** bench/json-reader-cold.ts bundled with esbuild, as ESM (the plain worker) or CommonJS (a snapshot's entry). */
function bundle(format: 'esm' | 'cjs', outfile: string): string {
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
}

export function benchReader(b: Bench): { rows: ReaderRow[]; snapshotBlobBytes: BlobBytes | undefined } {
  const rounds = b.opts.readerRounds;
  log(
    `\n== the JSON reader, cold (the first document of a fresh process), ${rounds} interleaved rounds, ${b.nodeVersion}${b.opts.snapshot ? ', and through startup snapshots, warmed and not' : ''}`,
  );
  const dir = join(b.tmp, 'reader');
  mkdirSync(dir, { recursive: true });
  const worker = bundle('esm', join(dir, 'json-reader-cold.mjs'));
  // With --snapshot: the same read from a blob of the worker as the runner starts from its own (its modules
  // evaluated in the build), without and with the reader's warm-up in the build (src/warm-reader.ts).
  const variants: Variant[] = [{ name: 'reader', launch: [worker], env: b.env }];
  let blobBytes: BlobBytes | undefined;
  if (b.opts.snapshot) {
    const entry = bundle('cjs', join(dir, 'json-reader-cold.cjs'));
    const made = (name: 'snapshot' | 'snapshotWarmed', warm: '0' | '1'): number => {
      const blob = join(dir, `${name}.blob`);
      // The flags of scripts/image/snapshot-blob.sh; WARM_READER chooses the warm-up (the script would clear it).
      const built = spawnSync(
        b.node,
        ['--predictable', ...IMAGE_V8_FLAGS, '--no-warnings', '--snapshot-blob', blob, '--build-snapshot', entry],
        {
          env: { ...b.env, WARM_READER: warm },
          stdio: ['ignore', 'inherit', 'inherit'],
        },
      );
      if (built.status !== 0) throw new Error(`building ${blob} failed`);
      variants.push({
        name,
        launch: [...IMAGE_V8_FLAGS, '--snapshot-blob', blob, entry],
        env: { ...b.env, ...APPLY_ENV_SNAPSHOT },
      });
      return statSync(blob).size;
    };
    blobBytes = { snapshot: made('snapshot', '0'), snapshotWarmed: made('snapshotWarmed', '1') };
    log(`  blobs: ${mb(blobBytes.snapshot)} without the warm-up, ${mb(blobBytes.snapshotWarmed)} with it`);
  }
  variants.push({ name: 'jsonParse', launch: [worker], env: b.env, mode: 'json-parse' });
  const once = (variant: Variant, mode: Document['mode'], file: string): Read => {
    const r = spawnSync(b.node, [...variant.launch, variant.mode ?? mode, file], {
      env: variant.env,
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`${variant.name} ${mode} ${file} exited ${r.status}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  const rows: ReaderRow[] = [];
  for (const doc of readerDocuments(dir)) {
    const bytes = statSync(doc.file).size;
    const runs: Record<Variant['name'], Read[]> = { reader: [], snapshot: [], snapshotWarmed: [], jsonParse: [] };
    for (let k = 0; k < rounds; k++) {
      // Each round runs every variant once, starting one further along each round.
      for (let j = 0; j < variants.length; j++) {
        const variant = variants[(k + j) % variants.length];
        runs[variant.name].push(once(variant, doc.mode, doc.file));
      }
    }
    // MB/s of CPU time: on a shared machine the wall time mostly measures the other processes.
    const mbps = (ms: number) => bytes / 1e6 / (ms / 1000);
    const cpu = (name: Variant['name']) => runs[name].map((x) => x.cpuMs);
    const reader = runs.reader;
    const parse = runs.jsonParse;
    const row: ReaderRow = {
      document: doc.name,
      bytes,
      rounds,
      loadavg: loadavg(),
      readerWallMs: reader.map((x) => x.ms),
      jsonParseWallMs: parse.map((x) => x.ms),
      readerCpuMs: cpu('reader'),
      jsonParseCpuMs: cpu('jsonParse'),
      readerWallMedianMs: medianOf(reader.map((x) => x.ms)),
      readerCpuMedianMs: medianOf(cpu('reader')),
      jsonParseCpuMedianMs: medianOf(cpu('jsonParse')),
      readerMBps: mbps(medianOf(cpu('reader'))),
      jsonParseMBps: mbps(medianOf(cpu('jsonParse'))),
      ratio: medianOf(reader.map((x, k) => x.cpuMs / parse[k].cpuMs)),
    };
    const over = (top: Variant['name'], bottom: Variant['name']) =>
      medianOf(runs[top].map((x, k) => x.cpuMs / runs[bottom][k].cpuMs));
    if (b.opts.snapshot) {
      const figures = (name: 'snapshot' | 'snapshotWarmed'): SnapshotFigures => ({
        cpuMs: cpu(name),
        cpuMedianMs: medianOf(cpu(name)),
        MBps: mbps(medianOf(cpu(name))),
        ratio: over(name, 'jsonParse'),
      });
      row.snapshot = figures('snapshot');
      row.snapshotWarmed = figures('snapshotWarmed');
      row.warmedOverSnapshot = over('snapshotWarmed', 'snapshot');
      row.runnerOverPlain = over('snapshotWarmed', 'reader');
    }
    rows.push(row);
    log(
      `  ${doc.name} (${mb(bytes)}): CPU of the read ${fmt(row.readerCpuMedianMs)} (${row.readerMBps.toFixed(1)} MB/s; wall ${fmt(row.readerWallMedianMs)}), JSON.parse ${fmt(row.jsonParseCpuMedianMs)} (${row.jsonParseMBps.toFixed(1)} MB/s), reader ÷ JSON.parse ×${row.ratio.toFixed(2)}; load ${row.loadavg}`,
    );
    if (row.snapshot && row.snapshotWarmed)
      log(
        `    through the snapshot ${fmt(row.snapshot.cpuMedianMs)} (${row.snapshot.MBps.toFixed(1)} MB/s, ×${row.snapshot.ratio.toFixed(2)} JSON.parse), warmed ${fmt(row.snapshotWarmed.cpuMedianMs)} (${row.snapshotWarmed.MBps.toFixed(1)} MB/s, ×${row.snapshotWarmed.ratio.toFixed(2)}); ` +
          `warmed ÷ not ×${row.warmedOverSnapshot?.toFixed(2)}, as the runner (warmed) ÷ the plain bundle ×${row.runnerOverPlain?.toFixed(2)}`,
      );
  }
  return { rows, snapshotBlobBytes: blobBytes };
}
