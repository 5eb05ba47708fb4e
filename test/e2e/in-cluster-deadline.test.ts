// In-cluster mode against an API server that takes requests and never answers: the hand-back budget
// and --deadline still hold. Timing-sensitive: scripts/test.sh runs this file in its serial phase,
// one test at a time, where nothing runs beside it (under load, a 12 s deadline once took 16.4 s here).
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { FakeApiServer } from '../support/fake-apiserver.ts';
import { modules, slowApply } from '../support/tf-modules.ts';
import { explain, scenario } from '../support/runner.ts';

const NS = 'team-a';
const CANARY = 'CANARY-incluster-secret-77';

describe('in-cluster mode: an API server that takes requests and never answers', () => {
  /** A server of the test's own, which registers the Job and then goes silent. */
  const silentJob = async (t: TestContext, dir: string, job: string) => {
    const api = await FakeApiServer.start({ serviceAccount: { namespace: NS, name: 'captf-runner' } });
    t.after(() => api.stop());
    const run = await api.runAsJob(NS, job, dir);
    api.silent = true;
    return run;
  };
  const warned = (warnings: readonly string[] | undefined, what: RegExp) =>
    assert.ok(
      warnings?.some((w) => what.test(w)),
      JSON.stringify(warnings),
    );

  it('holds the Job no longer than the 15 s hand-back budget: the result and the termination message are written first, and say what failed', async (t) => {
    const s = await scenario(t, modules.base, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const job = await silentJob(t, s.dir, 'apply-silent');
    const started = Date.now();
    const run = await s.run('apply', [...job.args, '--deadline', '10m'], job.env);
    const took = Date.now() - started;
    // The object's store (Secrets) is read before anything plans (a kept errored state, a killed apply's
    // marker: faults §4; a guarded apply in its step backup store): an API server that never answers stops
    // the run there after one request's 30 s, nothing applied; then the hand-back is held to its 15 s budget.
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.reason, 'KubeUnreachable');
    assert.equal(run.result!.error?.step, 'backup store');
    assert.ok(took < 50_000, `the run took ${took} ms`);
    assert.ok(!run.result!.steps.some((step) => step.name === 'apply'), 'nothing applied');
    warned(
      run.result!.warnings,
      /could not write the result Secret: .*(no answer within|no time is left of the hand-back budget)/,
    );
    warned(run.result!.warnings, /could not annotate the Job: .*no time is left of the hand-back budget/);
    const termination = JSON.parse(await readFile(s.termination, 'utf8')) as { exitCode: number; warnings?: string[] };
    assert.equal(termination.exitCode, 1);
    warned(termination.warnings, /could not annotate the Job/);
  });

  it('never past --deadline: a stopped run hands back what time is left, then exits 124', async (t) => {
    // An apply that takes a minute, so the stop falls before terraform is done however fast the run
    // gets there (through the startup snapshot on a quiet machine, the base module's apply had ended
    // within the first second, and the run rightly reported it applied).
    const module = slowApply({ resources: 1, seconds: 60 });
    const s = await scenario(t, module, { 'terraform.tfvars.json': { admin_token: CANARY } });
    const job = await silentJob(t, s.dir, 'apply-silent-deadline');
    const started = Date.now();
    // In a cluster the stop comes 15 s earlier than locally: here 1 s after the start (22 − 1 − 5 − 15;
    // a deadline that leaves no time at all is refused before anything runs).
    const run = await s.run('apply', [...job.args, '--deadline', '22s', '--stop-grace', '1s'], job.env);
    const took = Date.now() - started;
    assert.equal(run.exitCode, 124, explain(run));
    assert.equal(run.result!.reason, 'JobDeadlineExceeded');
    assert.ok(took < 22_000, `the run took ${took} ms, past its 22 s deadline`);
    warned(run.result!.warnings, /could not (write the result Secret|annotate the Job)/);
  });
});
