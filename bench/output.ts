// Part 4 of `npm run bench` (bench/run.ts): terraform printing hundreds of MiB (the test suite's fake terraform,
// test/support/fake-terraform.mjs) streams through the runner's masker to its stdout and stderr, read by a pipe,
// once by a reader that stalls for 5 s first (a kubelet under pressure: the runner must stop reading terraform,
// not buffer). Peak RSS of the runner process, and the bytes that came through. With --snapshot the runner starts
// through the startup snapshot, as the image's command starts it (runner/captf-runner.sh).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Bench, fmt, log, mb, now, q, REPO, readSelfUsage, SELF_USAGE } from './lib/harness.ts';

/** The test suite's fake terraform, which prints enormous output on request. */
const FAKE_TERRAFORM = join(REPO, 'test/support/fake-terraform.mjs');

export interface OutputRow {
  case: string;
  mib: number;
  ms: number;
  bytesThrough: number;
  peakRssBytes: number;
}

interface OutputCase {
  step: string;
  fault: string;
  /** The output comes through to the runner's stdout and stderr (a plan document does not). */
  streamed: boolean;
  stallMs?: number;
}

const OUTPUT_CASES: OutputCase[] = [
  { step: 'init', fault: 'huge-stdout', streamed: true },
  { step: 'plan', fault: 'huge-stdout', streamed: true },
  { step: 'plan', fault: 'huge-stderr', streamed: true },
  { step: 'apply', fault: 'huge-stdout', streamed: true },
  { step: 'apply', fault: 'huge-stdout', streamed: true, stallMs: 5000 },
  { step: 'show', fault: 'huge-plan', streamed: false },
];

export function benchOutput(b: Bench, mib: number): OutputRow[] {
  log(`\n== terraform printing ${mib} MiB through the runner (the test suite's fake terraform)`);
  const rows: OutputRow[] = [];
  for (const c of OUTPUT_CASES) {
    const dir = join(b.tmp, `output-${c.step}-${c.fault}${c.stallMs ? '-stalled' : ''}`);
    for (const sub of ['module', 'inputs', 'out', 'state']) mkdirSync(join(dir, sub), { recursive: true });
    writeFileSync(join(dir, 'module/main.tf'), 'resource "terraform_data" "fake" {}\n');
    const usageFile = join(dir, 'usage.json');
    const count = join(dir, 'bytes');
    const reader = c.stallMs ? `{ sleep ${c.stallMs / 1000}; wc -c; }` : 'wc -c';
    const apply = `${[b.node, ...b.applyLaunch, '--require', SELF_USAGE, b.runner].map(q).join(' ')} apply --kind cluster --terraform ${q(FAKE_TERRAFORM)} --module ${q(`${dir}/module`)} --inputs ${q(`${dir}/inputs`)} --state ${q(`${dir}/state/terraform.tfstate`)} --new-state --out ${q(`${dir}/out`)} --termination-log ${q(`${dir}/termination-log`)} --log-format json`;
    const env = {
      ...b.env,
      ...b.applyEnv,
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
    const { maxRssBytes } = readSelfUsage(usageFile);
    const label = `${c.step} ${c.fault}${c.stallMs ? `, reader stalled ${c.stallMs / 1000} s` : ''}`;
    rows.push({ case: label, mib, ms, bytesThrough: bytes, peakRssBytes: maxRssBytes });
    log(
      `  ${label.padEnd(40)} ${fmt(ms).padStart(8)}, ${(bytes / 2 ** 20).toFixed(0)} MiB through, peak RSS ${mb(maxRssBytes)}`,
    );
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
