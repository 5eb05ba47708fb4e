// The two sides the apply and breakdown parts of `npm run bench` compare: the runner's apply, and the terraform
// steps a person runs by hand (bench/bare-apply.sh), each on its own copy of one module and its own state.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Bench, REPO, readSelfUsage, SELF_USAGE, type SelfUsage, type Timed, timed } from './harness.ts';
import { type ModuleSize, moduleText, stateText } from './module.ts';

const BARE = join(REPO, 'bench/bare-apply.sh');

/** What the runner's result.json holds that the benchmark reads. */
export interface RunnerResult {
  outcome: string;
  reason?: string;
  message?: string;
  plan?: { counts: Record<string, number> };
  steps: { name: string; status: string; startedAt: string; durationMs: number }[];
}

/** One timed run of the runner's apply: its process tree's times, its node's own, and its result. */
export interface RunnerRun extends Timed {
  self: SelfUsage;
  result: RunnerResult;
}

/**
 * Two sides of one module, each with its own copy of it and its own state, equal at the start:
 *   runner/  module/ (what --module names), inputs/terraform.tfvars.json, runner.tfstate (--state),
 *            out/ (result.json, the backups); the runner copies the module into a fresh workdir
 *            of its own each run, as in a Job.
 *   bare/    the person's checkout: main.tf, terraform.tfvars.json, terraform.tfstate; its
 *            .terraform/ and plan file are removed before each run (untimed), so that init starts
 *            from nothing as in the runner's fresh workdir.
 * The runner's first apply (untimed) records its inputs hash: from then on its state holds one more
 * resource than the person's, the runner's own record of its inputs.
 */
export function setUpSides(b: Bench, dir: string, size: ModuleSize): void {
  const tf = moduleText(size);
  const state = stateText(size, 'g0');
  mkdirSync(join(dir, 'runner/module'), { recursive: true });
  mkdirSync(join(dir, 'runner/inputs'), { recursive: true });
  mkdirSync(join(dir, 'runner/out'), { recursive: true });
  mkdirSync(join(dir, 'bare'), { recursive: true });
  writeFileSync(join(dir, 'runner/module/main.tf'), tf);
  writeFileSync(join(dir, 'bare/main.tf'), tf);
  writeFileSync(join(dir, 'runner/runner.tfstate'), state);
  writeFileSync(join(dir, 'bare/terraform.tfstate'), state);
  // Only the runner's record of its inputs changes: the outcome is noChanges.
  const first = runnerApply(b, dir, 'g0', { terraform: b.terraform, expect: 'noChanges' });
  // The record is taken, as in the image, or the figures would not be the image's.
  if (b.terraformRecord && !first.stderr.includes('answered from its record (no version launch)'))
    throw new Error(`--verified-terraform: the runner did not take the record ${b.terraformRecord}`);
  const counts = first.result.plan?.counts ?? {};
  if (counts.create !== 0 || counts.noop !== size.resources * size.instances)
    throw new Error(`the first apply did not see the synthetic state as up to date: ${JSON.stringify(counts)}`);
  bareApply(b, dir, 'g0', { terraform: b.terraform, expectChanges: false });
}

/** The runner's apply of the side's module with var.gen = gen; throws unless it ends `expect`. */
export function runnerApply(
  b: Bench,
  dir: string,
  gen: string,
  { terraform, expect }: { terraform: string; expect: 'noChanges' | 'succeeded' },
): RunnerRun {
  writeFileSync(join(dir, 'runner/inputs/terraform.tfvars.json'), JSON.stringify({ gen }));
  const resultFile = join(dir, 'runner/out/result.json');
  rmSync(resultFile, { force: true });
  const usageFile = join(b.tmp, 'self-usage.json');
  rmSync(usageFile, { force: true });
  const d = join(dir, 'runner');
  const args = [
    ...b.applyLaunch,
    '--require',
    SELF_USAGE,
    b.runner,
    'apply',
    '--kind',
    'cluster',
    '--module',
    join(d, 'module'),
    '--inputs',
    join(d, 'inputs'),
    '--state',
    join(d, 'runner.tfstate'),
    '--new-state',
    '--out',
    join(d, 'out'),
    '--termination-log',
    join(d, 'termination-log'),
    '--log-format',
    'json',
    '--terraform',
    terraform,
    '--image',
    'bench',
  ];
  const t = timed(b, b.node, args, { ...b.env, ...b.applyEnv, BENCH_SELF_USAGE_FILE: usageFile });
  const result: RunnerResult = JSON.parse(readFileSync(resultFile, 'utf8'));
  if (result.outcome !== expect)
    throw new Error(
      `the runner's apply ended ${result.outcome} (${result.reason}: ${result.message}), expected ${expect}`,
    );
  return { ...t, self: readSelfUsage(usageFile), result };
}

const serialOf = (file: string): number => JSON.parse(readFileSync(file, 'utf8')).serial;

/** The person's steps on the side's checkout with var.gen = gen; throws unless they applied exactly when expected. */
export function bareApply(
  b: Bench,
  dir: string,
  gen: string,
  { terraform, expectChanges }: { terraform: string; expectChanges: boolean },
): Timed {
  const d = join(dir, 'bare');
  writeFileSync(join(d, 'terraform.tfvars.json'), JSON.stringify({ gen }));
  rmSync(join(d, '.terraform'), { recursive: true, force: true });
  rmSync(join(d, 'tfplan'), { force: true });
  const serial = serialOf(join(d, 'terraform.tfstate'));
  const t = timed(b, 'bash', [BARE, terraform, d]);
  // The baseline did what it was measured for: applied exactly when there were changes.
  const applied = serialOf(join(d, 'terraform.tfstate')) !== serial;
  if (applied !== expectChanges)
    throw new Error(`the bare steps ${applied ? 'applied' : 'did not apply'} with var.gen = ${gen}`);
  return t;
}
