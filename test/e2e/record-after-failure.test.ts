// The runner's record after an apply that did not succeed, end to end with the real terraform:
// terraform updates the dependents of a create_before_destroy object (the record among them) before
// that object's delete, so a delete that then fails (or is interrupted) leaves the new inputs hash in
// the state unless the runner sets it back (contract.md §2). Each test checks the state terraform
// left and the runner pushed, and that terraform did write the record first (its own log's order).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Result } from '../../src/schemas/result.ts';
import { modules, resourceIds, testTerraformEnv, type FileTree, type TerraformState } from '../support/tf-modules.ts';
import { startInBackground } from '../support/exec.ts';
import { CANARY, IMAGE } from './apply.support.ts';
import { firstApplyOnce } from './first-apply.support.ts';
import { explain, recordedInputsHash, RUNNER, type RunnerRun, type Scenario } from '../support/runner.ts';

interface Parts {
  /** terraform_data.old: create_before_destroy, or the removed block it leaves through. */
  old?: string;
  /** terraform_data.pool: create_before_destroy, its count and replace trigger. */
  pool?: { count: number; generation: number };
  /** terraform_data.a (create_before_destroy) and b, replaced with it; b's create-time provisioner. */
  replaced?: { generation: number; command: string };
}

const OLD = 'resource "terraform_data" "old" {\n  lifecycle {\n    create_before_destroy = true\n  }\n}\n';
/** terraform_data.old leaves the configuration; its destroy-time provisioner runs `command`. */
const oldRemoved = (command: string) =>
  `removed {\n  from = terraform_data.old\n  lifecycle {\n    destroy = true\n  }\n  provisioner "local-exec" {\n    when    = destroy\n    command = ${JSON.stringify(command)}\n  }\n}\n`;

function moduleWith({
  old = OLD,
  pool = { count: 2, generation: 1 },
  replaced = { generation: 1, command: 'true' },
}: Parts = {}): FileTree {
  const extra = `${old}
resource "terraform_data" "pool" {
  count            = ${pool.count}
  triggers_replace = "gen-${pool.generation}"
  lifecycle {
    create_before_destroy = true
  }
  provisioner "local-exec" {
    when    = destroy
    command = "echo the pool delete fails on purpose >&2; exit 1"
  }
}

resource "terraform_data" "a" {
  triggers_replace = "gen-${replaced.generation}"
  lifecycle {
    create_before_destroy = true
  }
}

resource "terraform_data" "b" {
  triggers_replace = terraform_data.a.id
  lifecycle {
    create_before_destroy = true
  }
  provisioner "local-exec" {
    command = ${JSON.stringify(replaced.command)}
  }
}
`;
  return { ...modules.base, 'main.tf': `${modules.base['main.tf']}\n${extra}` };
}

const { applied } = firstApplyOnce(moduleWith(), { 'terraform.tfvars.json': { admin_token: CANARY } }, [
  '--image',
  IMAGE,
]);
const unguarded = (image: string) => ['--image', image, '--kind', 'machine', '--guard', 'off'];
const FAILS_ON_PURPOSE = 'echo the delete fails on purpose >&2; exit 1';

/** Where terraform's log says it wrote the record (after its plan text, which names no progress). */
const recordWritten = (run: RunnerRun) =>
  run.stdout.indexOf('terraform_data.captf_inputs_hash: Modifications complete');

/** The record is the one before the apply, in the state and in the result, and terraform had written the new one before `failedLine`. */
function assertSetBack(run: RunnerRun, state: TerraformState, previous: string | undefined, failedLine: string) {
  assert.ok(previous, 'the state had a record before');
  assert.notEqual(run.result!.inputsHash, previous);
  const written = recordWritten(run);
  assert.ok(
    written >= 0 && written < run.stdout.indexOf(failedLine),
    `terraform wrote the record before ${failedLine}:\n${run.stdout.slice(-3000)}`,
  );
  assert.equal(recordedInputsHash(state), previous, 'the state holds the record as it was before the apply');
  assert.equal(run.result!.stateInputsHash, previous);
  assert.equal(run.result!.state!.serialAfter, state.serial, 'the result reports the state the runner left');
  assert.equal(
    run.result!.steps.find((step) => step.name === 'record set back')?.status,
    'ok',
    JSON.stringify(run.result!.steps),
  );
  assert.ok(
    run.result!.warnings.some(
      (w) => w.includes("terraform changed the runner's record (now ") && w.includes('set it back'),
    ),
    run.result!.warnings.join('\n'),
  );
}

/** terraform_data.old's delete did not finish (it is still in the state), and the record is set back. */
async function assertOldKeptAndSetBack(s: Scenario, run: RunnerRun, previous: string | undefined) {
  const state = await s.readState();
  assert.ok(resourceIds(state)['terraform_data.old'], 'the delete that did not finish left old in the state');
  assertSetBack(run, state, previous, 'terraform_data.old: Destroying...');
}

describe('the record after an apply that did not succeed', () => {
  it('removed with create_before_destroy: the delete fails after terraform wrote the record, and the record is set back', async (t) => {
    const s = await applied(t);
    const previous = recordedInputsHash(await s.readState());
    await s.useModule(moduleWith({ old: oldRemoved(FAILS_ON_PURPOSE) }));
    const run = await s.run('apply', unguarded('registry.example/captf-module:3.0.0'));
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.reason, 'ApplyFailed');
    await assertOldKeptAndSetBack(s, run, previous);
  });

  it('a create-before-destroy replace whose deletes fail: the record is set back', async (t) => {
    const s = await applied(t);
    const before = await s.readState();
    // pool[0] is replaced (its old object deposed, then deleted) and pool[1] dropped, whose delete fails.
    await s.useModule(moduleWith({ pool: { count: 1, generation: 2 } }));
    const run = await s.run('apply', unguarded('registry.example/captf-module:3.0.0'));
    assert.equal(run.exitCode, 1, explain(run));
    assert.ok(
      run.result!.plan!.destructive.some(
        (d) => d.address === 'terraform_data.pool[0]' && d.action === 'replace' && d.actions.join() === 'create,delete',
      ),
      JSON.stringify(run.result!.plan!.destructive),
    );
    const state = await s.readState();
    assert.notEqual(
      resourceIds(state)['terraform_data.pool[0]'],
      resourceIds(before)['terraform_data.pool[0]'],
      'the replace was applied',
    );
    assert.ok(resourceIds(state)['terraform_data.pool[1]'], 'the failed delete left pool[1]');
    assertSetBack(run, state, recordedInputsHash(before), 'terraform_data.pool[1]: Destroying...');
  });

  it('deposed objects: the apply that deletes them fails later, and the record is set back', async (t) => {
    const s = await applied(t);
    const previous = recordedInputsHash(await s.readState());
    // a is replaced before b, whose create fails: a's old object stays deposed. The record waited for b: nothing to set back.
    await s.useModule(moduleWith({ replaced: { generation: 2, command: 'exit 1' } }));
    const deposing = await s.run('apply', unguarded('registry.example/captf-module:2.0.0'));
    assert.equal(deposing.exitCode, 1, explain(deposing));
    assert.ok(
      (await s.readState()).resources.find((r) => r.name === 'a')!.instances.some((i) => i.deposed),
      'a deposed object is in the state',
    );
    assert.equal(deposing.result!.stateInputsHash, previous);
    assert.ok(
      !deposing.result!.steps.some((step) => step.name === 'record set back'),
      'terraform did not write the record',
    );

    // The next apply deletes the deposed objects after writing the record; old's delete then fails.
    await s.useModule(moduleWith({ replaced: { generation: 2, command: 'true' }, old: oldRemoved(FAILS_ON_PURPOSE) }));
    const run = await s.run('apply', unguarded('registry.example/captf-module:3.0.0'));
    assert.equal(run.exitCode, 1, explain(run));
    assert.ok(
      run.result!.plan!.destructive.some((d) => d.address === 'terraform_data.a' && d.deposed !== undefined),
      JSON.stringify(run.result!.plan!.destructive),
    );
    assert.ok(
      recordWritten(run) < run.stdout.search(/terraform_data\.a \(deposed object \w+\): Destroying/),
      `terraform writes the record before it deletes a deposed object:\n${run.stdout.slice(-3000)}`,
    );
    await assertOldKeptAndSetBack(s, run, previous);
  });

  it('an apply interrupted (SIGTERM) after terraform wrote the record: the record is set back', async (t) => {
    const s = await applied(t);
    const previous = recordedInputsHash(await s.readState());
    await s.useModule(moduleWith({ old: oldRemoved('sleep 120') }));
    const { child, exited } = await startInBackground(
      process.execPath,
      [RUNNER, ...s.runArgs('apply', unguarded('registry.example/captf-module:3.0.0'))],
      {
        env: testTerraformEnv(),
        mark: "terraform_data.old: Provisioning with 'local-exec'",
        killAfterMs: 120_000,
      },
    );
    child.kill('SIGTERM');
    const { exitCode, stdout, stderr } = await exited;
    const run: RunnerRun = {
      exitCode: exitCode ?? -1,
      stdout,
      stderr,
      result: JSON.parse(await readFile(join(s.out, 'result.json'), 'utf8')) as Result,
      allBytes: '',
    };
    assert.equal(run.exitCode, 143, explain(run));
    assert.equal(run.result!.outcome, 'interrupted');
    await assertOldKeptAndSetBack(s, run, previous);
  });

  it('a state written by someone else since the pull is never overwritten: the set back is refused, and the result says so', async (t) => {
    const s = await applied(t);
    const previous = recordedInputsHash(await s.readState());
    const wrapper = join(s.dir, 'other-writer-terraform.sh');
    await writeFile(wrapper, OTHER_WRITER_TERRAFORM, { mode: 0o755 });
    await s.useModule(moduleWith({ old: oldRemoved(FAILS_ON_PURPOSE) }));
    const run = await s.run('apply', [...unguarded('registry.example/captf-module:3.0.0'), '--terraform', wrapper]);
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.reason, 'ApplyFailed', "the outcome is the apply's");
    assert.equal(
      run.result!.steps.find((step) => step.name === 'record set back')?.status,
      'failed',
      JSON.stringify(run.result!.steps),
    );
    assert.ok(
      run.result!.warnings.some(
        (w) => w.includes('could not set it back') && w.includes('not what the last successful apply left'),
      ),
      run.result!.warnings.join('\n'),
    );
    const state = await s.readState();
    assert.deepEqual(state.outputs?.other_writer, { value: 'was here', type: 'string' }, 'the other write is kept');
    assert.equal(
      recordedInputsHash(state),
      run.result!.inputsHash,
      "terraform's early record stays: the state changed since it was pulled",
    );
    assert.notEqual(recordedInputsHash(state), previous);
    assert.equal(run.result!.stateInputsHash, run.result!.inputsHash, 'the result reports what the state holds');
  });
});

/** The real terraform, but before each `state push` another writer pushes the current state with an output added, one serial up. */
const OTHER_WRITER_TERRAFORM = `#!/bin/sh
fd3=
for arg in "$@"; do [ "$arg" = /dev/fd/3 ] && fd3=1; done
[ -n "$fd3" ] || exec 3>&-
if [ "$1" = state ] && [ "$2" = push ]; then
  terraform state pull > other-writer.json &&
    node -e 'const fs = require("fs"); const s = JSON.parse(fs.readFileSync("other-writer.json", "utf8")); s.serial += 1; s.outputs.other_writer = { value: "was here", type: "string" }; fs.writeFileSync("other-writer.json", JSON.stringify(s));' &&
    terraform state push other-writer.json || exit 1
fi
exec terraform "$@"
`;
