// Part 1 of `npm run bench` (bench/run.ts): `captf-runner apply --kind cluster` ÷ the steps a person runs by hand
// on the same module (bench/bare-apply.sh: init, validate, plan -detailed-exitcode -out, show -json, apply PLANFILE
// when there are changes), each side on its own copy of the module and its own state, no changes and changes,
// wall and CPU (user + system of the whole process tree) ratios, the median of interleaved pairs whose order
// alternates; and the runner node's own peak RSS.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Bench, interleave, log, type Pairs, type SizeWithPairs } from './lib/harness.ts';
import { bareApply, runnerApply, setUpSides } from './lib/sides.ts';

export interface ApplyRow {
  size: string;
  resources: number;
  instancesEach: number;
  instances: number;
  /** The updates of one run with changes (r0's instances and the runner's record of its inputs). */
  updatesPerChange: number | undefined;
  noChanges: Pairs;
  /** Undefined with --no-change-only. */
  changes: Pairs | undefined;
}

export function benchApply(b: Bench, size: SizeWithPairs): ApplyRow {
  const name = `${size.resources}x${size.instances}`;
  const instances = size.resources * size.instances;
  log(
    `\n== apply, ${size.resources} resources × ${size.instances} instances (${instances} instances), ${size.pairs} pairs each`,
  );
  const dir = join(b.tmp, `apply-${name}`);
  setUpSides(b, dir, size);
  const noChanges = interleave(
    size.pairs,
    () => runnerApply(b, dir, 'g0', { terraform: b.terraform, expect: 'noChanges' }),
    () => bareApply(b, dir, 'g0', { terraform: b.terraform, expectChanges: false }),
    'no changes',
  );
  // Changes: every run gives r0 a new value, so each side updates r0's instances (the runner also its own record).
  let updates: number | undefined;
  const changes = b.opts.noChangeOnly
    ? undefined
    : interleave(
        size.pairs,
        (k) => {
          const r = runnerApply(b, dir, `runner-${k}`, { terraform: b.terraform, expect: 'succeeded' });
          updates = r.result.plan?.counts.update;
          return r;
        },
        (k) => bareApply(b, dir, `bare-${k}`, { terraform: b.terraform, expectChanges: true }),
        `${size.instances} updates`,
      );
  rmSync(dir, { recursive: true, force: true });
  return {
    size: name,
    resources: size.resources,
    instancesEach: size.instances,
    instances,
    updatesPerChange: updates,
    noChanges,
    changes,
  };
}
