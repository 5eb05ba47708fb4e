// The benchmark's baseline (bench/bare-apply.sh) must run the terraform commands the runner runs,
// with the same arguments: otherwise BENCHMARKS.md compares the runner with something else.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { applyArgs } from '../../src/terraform/apply.ts';
import { initArgs } from '../../src/terraform/init.ts';
import { outputArgs } from '../../src/terraform/output.ts';
import { planArgs } from '../../src/terraform/plan.ts';
import { showPlanArgs } from '../../src/terraform/show.ts';
import { statePullArgs } from '../../src/terraform/state.ts';
import { validateArgs } from '../../src/terraform/validate.ts';

const script = readFileSync(new URL('../../bench/bare-apply.sh', import.meta.url), 'utf8');
/** The arguments of each `"$tf" …` line, continuation lines joined, redirections and `|| …` dropped. */
const commands = script
  .replace(/\\\n\s*/g, '')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line.startsWith('"$tf" '))
  .map((line) => line.slice('"$tf" '.length).replace(/\s*(>|&|\|\|).*$/, ''));

const PLAN = '"$private/plan.tfplan"';

test('bare-apply.sh runs the runner\'s terraform commands, in its order, with its arguments', () => {
  const expected = [
    'version -json',
    'version',
    initArgs({ lockfileReadonly: true }).join(' '),
    validateArgs().join(' '),
    statePullArgs().join(' '),
    planArgs({ out: PLAN, varFiles: ['"$private/terraform.tfvars.json"'], vars: { captf_inputs_hash: '$hash' } })
      .join(' ')
      .replace('-var captf_inputs_hash=$hash', '-var "captf_inputs_hash=$hash"')
      .replace(/-out="\$private\/plan\.tfplan"/, `-out=${PLAN}`),
    showPlanArgs(PLAN).join(' '),
    applyArgs({ planFile: PLAN }).join(' '),
    outputArgs().join(' '),
    statePullArgs().join(' '),
  ];
  assert.deepEqual(commands, expected);
});
