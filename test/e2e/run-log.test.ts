// The runner's own log lines (stderr, JSON) of real runs: each names its op and the object it serves,
// and a long step says so while terraform's output is held or quiet.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { modules, slowApply } from '../support/tf-modules.ts';
import { TEST_INTERVAL_VARIABLE } from '../../src/output/progress.ts';
import { explain, type RunnerRun, scenario, terraformStdout } from '../support/runner.ts';

const IMAGE = 'registry.example/captf-module:1.0.0';
const SECRET = 'CANARY-run-log-5ecret-Kw3';

interface LogLine {
  msg: string;
  op?: unknown;
  object?: unknown;
  namespace?: unknown;
  step?: string;
  elapsedMs?: number;
  output?: string;
  reported?: Record<string, number>;
}

/** Every line of stderr, each of which must be one JSON object. */
function logLines(run: RunnerRun): LogLine[] {
  const lines = run.stderr.split('\n').filter(Boolean);
  assert.ok(lines.length > 0, 'the run logged');
  return lines.map((line) => {
    try {
      return JSON.parse(line) as LogLine;
    } catch {
      assert.fail(`a stderr line is not a JSON log line: ${line}`);
    }
  });
}

function assertEveryLineNames(
  run: RunnerRun,
  bindings: { op: string; object: string | null; namespace: string | null },
) {
  for (const line of logLines(run))
    assert.deepEqual({ op: line.op, object: line.object, namespace: line.namespace }, bindings, `line "${line.msg}"`);
}

describe('the run log', () => {
  it("every line of a real run carries op, object and namespace (null when not given), an invalid run's too", async (t) => {
    const s = await scenario(t, modules.base, { 'terraform.tfvars.json': { admin_token: SECRET } });
    const applied = await s.run('apply', ['--image', IMAGE, '--object', 'demo', '--namespace', 'team-a']);
    assert.equal(applied.exitCode, 0, explain(applied));
    assertEveryLineNames(applied, { op: 'apply', object: 'demo', namespace: 'team-a' });
    assert.ok(logLines(applied).some((line) => line.msg === 'run finished'));
    assert.ok(
      logLines(applied).some((line) => line.step === 'plan' && line.msg === 'plan: done (exitCode 2: changes present)'),
      "plan's exit 2 is no failure: its done line says what it means",
    );

    const drift = await s.run('drift', ['--image', IMAGE]);
    assert.equal(drift.exitCode, 0, explain(drift));
    assertEveryLineNames(drift, { op: 'drift', object: null, namespace: null });
    assert.ok(logLines(drift).some((line) => line.msg === 'plan: done (exitCode 0: no changes)'));

    const invalid = await s.run('destroy', ['--object', 'demo', '--namespace', 'team-a', '--deadline', 'soon']);
    assert.equal(invalid.exitCode, 2, explain(invalid));
    assertEveryLineNames(invalid, { op: 'destroy', object: 'demo', namespace: 'team-a' });
  });

  it('a long step logs its progress: the held plan, and an apply terraform is quiet in (the interval made small for the test)', async (t) => {
    const s = await scenario(t, slowApply({ resources: 2, seconds: 2 }), {
      'terraform.tfvars.json': { admin_token: SECRET },
    });
    const run = await s.run('apply', ['--image', IMAGE, '--object', 'demo', '--namespace', 'team-a'], {
      [TEST_INTERVAL_VARIABLE]: '100',
    });
    assert.equal(run.exitCode, 0, explain(run));
    const state = await s.readState();
    assert.equal(
      state.resources.filter((r) => r.type === 'terraform_data' && r.name === 'slow')[0]?.instances.length,
      2,
      'the slow resources were created',
    );
    assertEveryLineNames(run, { op: 'apply', object: 'demo', namespace: 'team-a' });
    const progress = logLines(run).filter((line) => line.elapsedMs !== undefined && line.output !== undefined);
    const applyLines = progress.filter((line) => line.step === 'apply');
    // What terraform reported created: every create of the plan, and the runner's record, which plan.counts
    // never counts. A line may come after the last of them (terraform writing the state on a busy machine).
    const createdLines = terraformStdout(run)
      .split('\n')
      .filter((line) => /^\S+: Creation complete after /.test(line));
    assert.equal(createdLines.length, run.result!.plan!.counts.create + 1, createdLines.join('\n'));
    assert.equal(createdLines.filter((line) => line.startsWith('terraform_data.captf_inputs_hash:')).length, 1);
    // Two sleeps of 2 s each, in parallel: terraform prints "Creating..." and is then quiet for 2 s.
    assert.ok(applyLines.length >= 1, JSON.stringify(progress));
    for (const line of applyLines) {
      assert.equal(line.output, 'quiet');
      assert.ok(line.elapsedMs! >= 100, JSON.stringify(line));
      assert.match(line.msg, /^apply: running for (\d+h)?(\d+m)?\d+(\.\d)?s; nothing printed for 0\.1s; /);
      assert.ok((line.reported!.created ?? 0) <= createdLines.length, JSON.stringify(line));
    }
    // While the sleeps run, the base's own resources are created already: counted from terraform's lines.
    assert.ok((applyLines.at(-1)!.reported!.created ?? 0) >= 1, JSON.stringify(applyLines));
    // The plan's output is held until classification: its lines are counted, never logged. (A
    // terraform plan takes longer than 100 ms: its provider alone starts as a process of its own.)
    const planLines = progress.filter((l) => l.step === 'plan');
    assert.ok(planLines.length >= 1, JSON.stringify(progress));
    for (const line of planLines) {
      assert.equal(line.output, 'held');
      assert.match(line.msg, /terraform's output is held until the plan is classified/);
    }
    assert.ok(
      !run.stderr.includes('Refreshing state') && !run.stderr.includes('Creation complete'),
      'no terraform line in the runner log',
    );
    assert.ok(!run.allBytes.includes(SECRET));
  });
});
