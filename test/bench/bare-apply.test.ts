// The benchmark's baseline (bench/bare-apply.sh) must run exactly the terraform steps a person runs by
// hand (init, validate, plan -detailed-exitcode -out, show -json, and apply PLANFILE when the plan has
// changes), and nothing the runner adds: otherwise BENCHMARKS.md compares the runner with itself.
// Run against a stand-in terraform that records its arguments and answers plan with a chosen code.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const script = new URL('../../bench/bare-apply.sh', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'captf-bare-apply-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const standin = join(dir, 'terraform');
writeFileSync(
  standin,
  '#!/bin/bash\nprintf "%s|%s\\n" "$PWD" "$*" >>"$BARE_LOG"\n[ "$1" = plan ] && exit "$PLAN_EXIT"\necho "stdout of $1"\nexit 0\n',
);
chmodSync(standin, 0o755);

function bare(planExit: number) {
  const log = join(dir, `log-${planExit}`);
  const r = spawnSync('bash', [script, standin, dir], {
    env: { ...process.env, BARE_LOG: log, PLAN_EXIT: String(planExit) },
    encoding: 'utf8',
  });
  const lines = readFileSync(log, 'utf8').trim().split('\n');
  // Every command runs in the checkout the script was given.
  for (const line of lines) assert.equal(line.split('|')[0], dir);
  return { status: r.status, stdout: r.stdout, commands: lines.map((line) => line.split('|')[1]) };
}

const PERSON = [
  'init -input=false',
  'validate',
  'plan -input=false -detailed-exitcode -out=tfplan',
  'show -json tfplan',
];

test('no changes (plan exits 0): init, validate, plan, show -json, and no apply', () => {
  const r = bare(0);
  assert.equal(r.status, 0);
  assert.deepEqual(r.commands, PERSON);
  assert.equal(r.stdout, '', "terraform's output goes nowhere, as the runner's does in the benchmark");
});

test('changes (plan exits 2): the same steps, then apply of the saved plan', () => {
  const r = bare(2);
  assert.equal(r.status, 0);
  assert.deepEqual(r.commands, [...PERSON, 'apply -input=false tfplan']);
});

test('a failed plan (exit 1) stops the baseline with its code: nothing shown, nothing applied', () => {
  const r = bare(1);
  assert.equal(r.status, 1);
  assert.deepEqual(r.commands, PERSON.slice(0, 3));
});
