// The hold's key against real runs (contract/sections/decide-op.md, "The hold's key"): a controller
// keys a held plan on the inputs hash it rendered, never on result.inputsHash, which a run refused
// before it read its inputs does not carry. Each held reason here is produced by the runner; where its
// result carries an inputsHash it is the hash the controller renders (`captf-runner hash`), and the
// model holds the plan on the rendered hash either way.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { handlingOf } from '../../src/controller-model/actions.ts';
import { decideOp } from '../../src/controller-model/decide-op.ts';
import { parseSnapshot } from '../../src/controller-model/snapshot.ts';
import { explain, runRunner, scenario, type RunnerRun } from '../support/runner.ts';
import { greetingPrecondition } from '../support/tf-modules.ts';

const IMAGE = 'registry.example/captf-module:1.0.0';

const module = greetingPrecondition('length(var.greeting) > 10');

/** A Manual cluster whose newest plan Job (built from `rendered`) ended with `runnerReason`: what DecideOp makes of it. */
function decideAfter(runnerReason: string, rendered: string, currentHash: string) {
  return decideOp(
    parseSnapshot({
      now: '2025-06-01T12:00:00Z',
      object: {
        uid: 'uid-1',
        kind: 'cluster',
        creationTimestamp: '2025-06-01T00:00:00Z',
        deleting: false,
        applyPolicy: 'Manual',
      },
      image: { pinnedDigest: 'sha256:0f0f' },
      inputs: { currentHash },
      state: { status: 'present', inputsHash: 'applied' },
      jobs: {
        active: false,
        finished: [
          {
            op: 'plan',
            outcome: 'failed',
            finishedAt: '2025-06-01T11:30:00Z',
            reason: 'InputsChanged',
            runnerReason,
            inputsHash: rendered,
          },
        ],
      },
      applies: {
        newest: { outcome: 'succeeded', finishedAt: '2025-06-01T11:00:00Z', outputReading: 'definite' },
        lastSucceededAt: '2025-06-01T11:00:00Z',
      },
      annotations: {},
      drift: { intervalSeconds: 3600, action: 'Report', remediationFailedLimit: 3 },
      refresh: { healthPendingReadings: 0 },
    }),
  );
}

describe("the hold's key is the hash the controller rendered", () => {
  it('held plans with and without result.inputsHash: present only as the rendered hash, held on the rendered hash alike, lifted by new inputs', async (t) => {
    const s = await scenario(t, module, { 'terraform.tfvars.json': { greeting: 'hello' } });
    const hashed = await runRunner(['hash', '--inputs', s.inputs, '--image', IMAGE, '--json']);
    const rendered = (JSON.parse(hashed.stdout) as { inputsHash: string }).inputsHash;
    const plan = (args: string[] = []) =>
      s.runOwnBackend('plan', ['--image', IMAGE, '--artifacts', join(s.dir, 'artifacts'), ...args], {
        CAPTF_STATE: s.state,
        CAPTF_NEW_STATE: '1',
      });
    const runs: [string, RunnerRun, boolean][] = [
      ['settings refused before the inputs were read', await plan(['--lock-timeout', 'soon']), false],
      ['terraform refused the inputs (a precondition that reads only them)', await plan(), true],
    ];
    await s.setInputs({ 'terraform.tfvars.json': '{"greeting": ' });
    runs.push(['inputs that are no JSON', await plan(), false]);
    for (const [what, run, carriesHash] of runs) {
      assert.equal(run.exitCode, 2, `${what}: ${explain(run)}`);
      const reason = run.result!.reason;
      assert.equal(handlingOf('plan', reason).action, 'hold', `${what}: ${reason}`);
      if (carriesHash) assert.equal(run.result!.inputsHash, rendered, `${what}: the runner's hash is the rendered one`);
      else assert.equal(run.result!.inputsHash, undefined, `${what}: no inputs were hashed`);
      assert.deepEqual(
        decideAfter(reason, rendered, rendered),
        {
          kind: 'wait',
          reason: 'HeldForChange',
          requeueAfterSeconds: 600,
          heldOp: { op: 'plan', reason: 'InputsChanged' },
        },
        what,
      );
      assert.equal(decideAfter(reason, rendered, 'new inputs').kind, 'op', `${what}: new inputs lift the hold`);
    }
  });
});
