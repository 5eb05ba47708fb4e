// A stop during the policy's evaluation (contract/sections/policy.md §5, *Stopping*): SIGTERM and
// --deadline end the run within --stop-grace, `interrupted`, the policy evaluation named, nothing
// applied. Each stop is timed by the runner's own line that the evaluation began, not by a guess at
// how long it takes: on a fast machine the whole plan's budget is spent in seconds. Timing-sensitive:
// scripts/test.sh runs this file in its serial phase.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { startInBackground } from '../support/exec.ts';
import { testTerraformEnv } from '../support/tf-modules.ts';
import { POLICY_HEADER } from '../policy/policies.support.ts';
import { RUNNER, scenario, type Scenario } from '../support/runner.ts';
import type { Result } from '../../src/schemas/result.ts';

const IMAGE = 'registry.example/captf-module:1.0.0';

/** 40 terraform_data with 6,000-character keys under three rules that each spend their whole budget on every one: the plan's whole budget, seconds at least. */
async function longEvaluation(s: Scenario): Promise<string[]> {
  await s.useModule({
    'main.tf':
      'variable "keys" {\n  type = list(string)\n}\n\nresource "terraform_data" "db" {\n  for_each = toset(var.keys)\n  input    = "x"\n}\n',
  });
  await s.setInputs({
    'terraform.tfvars.json': { keys: Array.from({ length: 40 }, (_, i) => `${i}-${'k'.repeat(6000)}`) },
  });
  const dir = join(s.dir, 'policy');
  await mkdir(dir);
  const rule = (name: string) =>
    `- name: ${name}\n  match: change.address.split("").exists(c, change.address.contains(c + "#"))\n  effect: deny\n`;
  await writeFile(
    join(dir, 'policy.yaml'),
    `${POLICY_HEADER}rules:\n${rule('slow-1')}${rule('slow-2')}${rule('slow-3')}`,
  );
  return s.runArgs('apply', ['--image', IMAGE, '--policy', dir]);
}

const EVALUATION_STARTED = '"msg":"policy: judging the plan';

/** 15 rules whose checks over the synthetic views each spend millions of units: a compile check of seconds (it passes). */
async function longCompileCheck(s: Scenario): Promise<string[]> {
  await s.useModule({ 'main.tf': 'resource "terraform_data" "db" {\n  input = "x"\n}\n' });
  const dir = join(s.dir, 'policy');
  await mkdir(dir);
  const list = `[${Array.from({ length: 100 }, (_, i) => i).join(', ')}]`;
  const rule = (i: number) =>
    `- name: heavy-${i}\n  match: ${JSON.stringify(`${list}.all(i, ${list}.all(j, i + j >= 0)) && change.kind == "nope"`)}\n  effect: deny\n`;
  await writeFile(
    join(dir, 'policy.yaml'),
    `${POLICY_HEADER}rules:\n${Array.from({ length: 15 }, (_, i) => rule(i)).join('')}`,
  );
  return s.runArgs('apply', ['--image', IMAGE, '--policy', dir]);
}

const COMPILE_STARTED = '"msg":"policy: started"';

/** The runner on `args` with --stop-grace `stopGrace`, sent `signal` once it prints `mark`: its exit, and how long after the signal it came. */
async function signalledAt(args: string[], mark: string, signal: NodeJS.Signals, stopGrace: string) {
  const { child, exited } = await startInBackground(process.execPath, [RUNNER, ...args, '--stop-grace', stopGrace], {
    env: testTerraformEnv(),
    mark,
    killAfterMs: 120_000,
  });
  const signalled = Date.now();
  child.kill(signal);
  const run = await exited;
  return { run, took: Date.now() - signalled };
}

const readResult = async (s: Scenario) => JSON.parse(await readFile(join(s.out, 'result.json'), 'utf8')) as Result;

describe('policy: a stop during the evaluation', () => {
  it('SIGTERM: exit 143 within --stop-grace, interrupted, the policy evaluation named, nothing applied', async (t) => {
    const s = await scenario(t, {});
    const args = await longEvaluation(s);
    const { run, took } = await signalledAt(args, EVALUATION_STARTED, 'SIGTERM', '3s');
    assert.equal(run.exitCode, 143, run.stderr.slice(-3000));
    assert.ok(took < 3000 + 5000, `stopped ${took} ms after the signal (--stop-grace 3s)`);
    const r = await readResult(s);
    assert.equal(r.outcome, 'interrupted');
    assert.equal(r.reason, 'Interrupted');
    assert.equal(r.error!.step, 'show');
    assert.match(
      r.message,
      /during show: the policy evaluation was stopped after \d+ rule evaluations, before it judged the whole plan: no verdict, nothing applied/,
    );
    assert.equal(r.applied, false);
    assert.equal(existsSync(s.state), false, 'nothing applied');
  });

  it('SIGINT during one long evaluation: exit 130 within --stop-grace, interrupted, nothing applied', async (t) => {
    const s = await scenario(t, {});
    const args = await longEvaluation(s);
    const { run, took } = await signalledAt(args, EVALUATION_STARTED, 'SIGINT', '2s');
    assert.equal(run.exitCode, 130, run.stderr.slice(-3000));
    assert.ok(took < 2000 + 5000, `stopped ${took} ms after the signal (--stop-grace 2s)`);
    const r = await readResult(s);
    assert.equal(r.outcome, 'interrupted');
    assert.match(r.message, /the policy evaluation was stopped after [1-9]\d* rule evaluations/);
    assert.equal(existsSync(s.state), false, 'nothing applied');
  });

  it('SIGTERM during the compile check in step policy: exit 143 within --stop-grace, a well-formed result, nothing planned', async (t) => {
    const s = await scenario(t, {});
    const args = await longCompileCheck(s);
    const { run, took } = await signalledAt(args, COMPILE_STARTED, 'SIGTERM', '2s');
    assert.equal(run.exitCode, 143, run.stderr.slice(-3000));
    assert.ok(took < 2000, `stopped ${took} ms after the signal (--stop-grace 2s)`);
    const r = await readResult(s);
    assert.equal(r.outcome, 'interrupted');
    assert.equal(r.reason, 'Interrupted');
    assert.equal(r.error!.step, 'policy');
    assert.match(
      r.message,
      /the policy's compile check \(.*\) was stopped before it finished: nothing was planned or applied/,
    );
    assert.equal(r.applied, false);
    assert.equal(existsSync(s.state), false, 'nothing applied');
  });

  it('--deadline holds through it: JobDeadlineExceeded, exit 124, before the deadline', async (t) => {
    const s = await scenario(t, {});
    const args = await longEvaluation(s);
    const started = Date.now();
    // The run stops itself at the deadline - stop grace - 5 s: at 24 s. The runner is frozen as its
    // evaluation begins and thawed after that moment, so its deadline falls in the evaluation on any machine.
    const { child, exited } = await startInBackground(
      process.execPath,
      [RUNNER, ...args, '--deadline', '30s', '--stop-grace', '1s'],
      { env: testTerraformEnv(), mark: EVALUATION_STARTED, killAfterMs: 120_000 },
    );
    child.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 25_000 - Date.now())));
    child.kill('SIGCONT');
    const run = await exited;
    assert.equal(run.exitCode, 124, run.stderr.slice(-3000));
    assert.ok(Date.now() - started < 30_000, `done before the deadline (${Date.now() - started} ms)`);
    const r = await readResult(s);
    assert.equal(r.reason, 'JobDeadlineExceeded');
    assert.match(r.message, /the policy evaluation was stopped after \d+ rule evaluations/);
    assert.equal(existsSync(s.state), false);
  });
});
