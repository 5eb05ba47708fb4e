// Signals and deadlines with the real terraform: one interrupt reaches terraform, the result is
// written, leftovers of local-exec are ended, the state stays consistent and usable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { slowApply, testTerraformEnv, taintedAddresses } from '../support/tf-modules.ts';
import { runProcess, startInBackground, until } from '../support/exec.ts';
import { FakeS3 } from '../support/fake-s3.ts';
import { explain, RUNNER, scenario, type Scenario } from '../support/runner.ts';

/** Starts an apply in the background (a process group of its own) and resolves once the step `step` has started. */
const startSlowApply = (s: Scenario, extraArgs: string[] = [], step = 'apply') =>
  startInBackground(process.execPath, [RUNNER, ...s.runArgs('apply', extraArgs)], {
    env: testTerraformEnv(),
    mark: `"msg":"${step}: started"`,
    killAfterMs: 120_000,
  });

/**
 * A sleep length no other run on this machine uses (a fraction of a second added at random), so
 * that its `sleep` processes can be told from those of tests running beside this one.
 */
const uniqueSeconds = (whole: number) => whole + Math.floor(Math.random() * 9000 + 1000) / 10000;

/** The processes running `sleep <seconds>`. */
async function leftovers(seconds: number): Promise<string[]> {
  const { stdout } = await runProcess('ps', ['-eo', 'pid,args'], { env: testTerraformEnv() });
  return stdout.split('\n').filter((line) => line.trim().endsWith(`sleep ${seconds}`));
}

/** Waits until terraform's local-exec provisioners run `sleep <seconds>`: terraform is inside the apply. */
async function provisionersSleeping(seconds: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await leftovers(seconds)).length === 0) {
    if (Date.now() > deadline) throw new Error(`no provisioner ran sleep ${seconds} within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('signals', () => {
  it('SIGTERM during apply: one interrupt to terraform, result interrupted, exit 143, state usable', async (t) => {
    const seconds = uniqueSeconds(31);
    const s = await scenario(t, slowApply({ resources: 6, seconds }));
    const { child, exited } = await startSlowApply(s);
    await provisionersSleeping(seconds);
    child.kill('SIGTERM');
    const run = await exited;
    assert.equal(run.exitCode, 143, String(run.stderr).slice(-3000));
    const result = JSON.parse(await readFile(join(s.out, 'result.json'), 'utf8'));
    assert.equal(result.outcome, 'interrupted');
    assert.equal(result.reason, 'Interrupted');
    assert.equal(result.error.step, 'apply');
    assert.equal(result.mayHaveChanged, true);
    const termination = JSON.parse(await readFile(s.termination, 'utf8'));
    assert.equal(termination.outcome, 'interrupted');
    // terraform saved the state: the interrupted objects are tainted; the lock is gone.
    const state = await s.readState();
    assert.ok(
      taintedAddresses(state).some((a) => a.startsWith('terraform_data.slow')),
      JSON.stringify(taintedAddresses(state)),
    );
    assert.ok(!existsSync(join(s.dir, 'state', '.terraform.tfstate.lock.info')));
    assert.deepEqual(await leftovers(seconds), [], 'local-exec children must be ended');
    // The next run continues from there: a guarded one is blocked, and says why the objects are replaced.
    await s.useModule(slowApply({ resources: 6, seconds: 0 }));
    const blocked = await s.run('apply');
    assert.equal(blocked.exitCode, 3, explain(blocked));
    assert.match(
      blocked.stdout,
      /^ {2}terraform_data\.slow\[\d+\] \(replace\): tainted, an apply that did not finish \(interrupted, or failed\) left it half made/m,
    );
    const next = await s.run('apply', ['--kind', 'machine', '--guard', 'off']);
    assert.equal(next.exitCode, 0, explain(next));
  });

  it('the deadline stops the run itself before it is killed: exit 124, JobDeadlineExceeded', async (t) => {
    const seconds = uniqueSeconds(67);
    const s = await scenario(t, slowApply({ resources: 2, seconds }));
    // Stopped at deadline - 2 - 5 s (5 s for 12 s), in the apply's sleeping provisioners: what the stop
    // must end. A run a busy machine had not brought to the apply by then tested nothing: again with twice
    // the deadline (at most twice more), every check made on a run stopped in the apply.
    const runWithDeadline = async (deadlineSeconds: number) => {
      const started = Date.now();
      const run = await s.run('apply', ['--deadline', `${deadlineSeconds}s`, '--stop-grace', '2s']);
      return { run, took: Date.now() - started };
    };
    let deadline = 12;
    let { run, took } = await runWithDeadline(deadline);
    while (run.exitCode === 124 && run.result?.error?.step !== 'apply' && deadline < 48) {
      t.diagnostic(
        `stopped in ${run.result?.error?.step} before the apply (a busy machine): again with ${deadline * 2} s`,
      );
      deadline *= 2;
      ({ run, took } = await runWithDeadline(deadline));
    }
    assert.equal(run.exitCode, 124, explain(run));
    assert.ok(took < deadline * 1000, `it must stop before the ${deadline} s deadline (${took} ms)`);
    assert.equal(run.result!.outcome, 'interrupted');
    assert.equal(run.result!.reason, 'JobDeadlineExceeded');
    assert.equal(run.result!.error?.step, 'apply', explain(run));
    assert.deepEqual(await leftovers(seconds), []);
  });

  it('SIGTERM during backup: error.step names backup (the step the run was in), nothing applied', async (t) => {
    // About 640 KB of state that barely compresses, backed up in 1 KiB chunks each written durably: a backup of a second or more.
    const big = {
      'main.tf':
        'resource "terraform_data" "big" {\n  count = 5\n  input = join("", [for i in range(1000) : sha256("${count.index}-${i}")])\n}\n',
    };
    const s = await scenario(t, big);
    const first = await s.run('apply', ['--image', 'registry.example/m:1']);
    assert.equal(first.exitCode, 0, explain(first));
    const stateBefore = await readFile(s.state);

    const { child, exited } = await startSlowApply(
      s,
      ['--image', 'registry.example/m:2', '--chunk-bytes', '1024'],
      'backup',
    );
    child.kill('SIGTERM');
    const run = await exited;
    assert.equal(run.exitCode, 143, String(run.stderr).slice(-3000));
    const result = JSON.parse(await readFile(join(s.out, 'result.json'), 'utf8'));
    assert.equal(result.outcome, 'interrupted');
    assert.equal(result.error.step, 'backup', result.message);
    const steps = result.steps.map((step: { name: string }) => step.name);
    assert.equal(steps.at(-1), 'backup', steps.join(', '));
    assert.ok(!steps.includes('apply'), steps.join(', '));
    assert.equal(result.applied, false);
    assert.equal(result.mayHaveChanged, false);
    assert.deepEqual(await readFile(s.state), stateBefore, 'nothing was applied');
  });

  it('SIGTERM while the store does not answer: the step is given up after the grace, not the 7 s of escalation', async (t) => {
    const s3 = await FakeS3.start({ buckets: ['captf-e2e'] });
    t.after(() => s3.stop());
    const s = await scenario(t, { 'main.tf': 'resource "terraform_data" "x" {\n  input = "a"\n}\n' });
    // Every listing of the store is taken and never answered (the client waits 30 s per attempt).
    s3.injectFaults({ method: 'GET' }, ...Array.from({ length: 8 }, () => ({ hang: true }) as const));
    const { child, exited } = await startInBackground(
      process.execPath,
      [RUNNER, ...s.runArgs('apply', ['--object', 'demo', '--namespace', 'team-a', '--stop-grace', '1s'])],
      {
        env: { ...testTerraformEnv(), CAPTF_STORE: 's3://captf-e2e/fleet', ...s3.env() },
        mark: '"msg":"backup store: started"',
        killAfterMs: 120_000,
      },
    );
    // The step waits on the listing alone (a guarded apply lists the store before its plan, and pulls no
    // state before it: no terraform runs under the runner) and the store has taken the listing's request.
    await until('no terraform runs and the listing hangs', () => {
      const terraformRuns = readdirSync('/proc').some((entry) => {
        try {
          const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === child.pid;
        } catch {
          return false; // not a process, or gone
        }
      });
      return !terraformRuns && s3.requests.some((request) => request.status === -2);
    });
    const signalled = Date.now();
    child.kill('SIGTERM');
    const run = await exited;
    const took = Date.now() - signalled;
    assert.equal(run.exitCode, 143, String(run.stderr).slice(-3000));
    const result = JSON.parse(await readFile(join(s.out, 'result.json'), 'utf8'));
    assert.equal(result.outcome, 'interrupted');
    assert.equal(result.error.step, 'backup store', result.message);
    assert.match(result.message, /did not end within the stop grace/);
    assert.equal(result.mayHaveChanged, false);
    assert.ok(!existsSync(s.state), 'nothing was applied');
    // The grace (1 s) and the result; the escalation's 7 s more (second interrupt at 1 s, kill at 6 s,
    // give up at 8 s) are for a terraform, and none ran.
    assert.ok(took < 5_000, `the run ended ${took} ms after SIGTERM`);
  });

  it('a second signal escalates at once', async (t) => {
    const seconds = uniqueSeconds(71);
    const s = await scenario(t, slowApply({ resources: 2, seconds }));
    const { child, exited } = await startSlowApply(s, ['--stop-grace', '60s']);
    // Inside the apply. terraform may end its provisioners and stop within the 200 ms; then the second
    // signal lands as the runner ends, and must not change its exit code either.
    await provisionersSleeping(seconds);
    const started = Date.now();
    child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGINT');
    const run = await exited;
    assert.equal(run.exitCode, 130, String(run.stderr).slice(-2000));
    assert.ok(Date.now() - started < 30_000, 'the second signal must not wait for the grace period');
    assert.deepEqual(await leftovers(seconds), []);
  });
});
