// A guarded apply and a plan read the state before from the saved plan (src/steps/state-planned.ts): no
// `terraform state pull` before the plan. What that must not lose: the masker still learns the state's
// secrets before anything of a plan is printed (a failed plan's diagnostics included), the result
// still names the state before, and an apply still backs up and replaces exactly the state its plan
// was made against (a write by another run after the plan is refused before anything is backed up).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { explain, scenario, type RunnerRun } from '../support/runner.ts';
import { readLocalState } from '../support/tf-modules.ts';
import { unpackArtifactDir } from '../support/artifacts.ts';

/** The token before its rotation: afterwards only the state holds it (ignore_changes keeps it there). */
const OLD_TOKEN = 'CANARY-old-token-Qz7Wp';
const NEW_TOKEN = 'CANARY-new-token-Hv3Kd';
const OTHER_LINEAGE = '0badc0de-0000-4000-8000-000000000000';

const MODULE = {
  'main.tf': `variable "admin_token" {
  type      = string
  sensitive = true
}

variable "refuse" {
  type    = bool
  default = false
}

resource "terraform_data" "credentials" {
  input = var.admin_token

  lifecycle {
    ignore_changes = [input]
  }
}

# terraform_data.output copies the sensitive input and loses the mark: a condition's message prints it.
resource "terraform_data" "client" {
  input = "client"

  lifecycle {
    precondition {
      condition     = !var.refuse
      error_message = "The client refuses the token \${terraform_data.credentials.output}."
    }
  }
}
`,
};

function assertNotWritten(run: RunnerRun, secret: string, what: string): void {
  const at = run.allBytes.indexOf(secret);
  assert.equal(at, -1, `${what}: ${run.allBytes.slice(Math.max(0, at - 200), at + 60)}`);
}

describe('the state before, read from the saved plan', () => {
  for (const op of ['apply', 'plan'] as const)
    it(`${op}: a plan that fails quoting a secret only the state holds: the diagnostic is printed masked, and the result names the state`, async (t) => {
      const s = await scenario(t, MODULE, { 'terraform.tfvars.json': { admin_token: OLD_TOKEN } });
      const first = await s.run('apply', ['--kind', 'machine', '--guard', 'off']);
      assert.equal(first.exitCode, 0, explain(first));
      const held = await readLocalState(s.state);

      // Rotated: the old token is in no input now, only in the state; the condition fails and prints it.
      await s.setInputs({ 'terraform.tfvars.json': { admin_token: NEW_TOKEN, refuse: true } });
      const args = op === 'apply' ? ['--kind', 'machine', '--guard', 'off'] : ['--kind', 'machine'];
      const failed = await s.run(op, args);
      assert.equal(failed.exitCode, 2, explain(failed));
      assert.equal(failed.result!.reason, 'InputsInvalid');
      assert.match(failed.allBytes, /The client refuses the token/, "terraform's diagnostic is there");
      assertNotWritten(failed, OLD_TOKEN, 'the failed plan');
      assertNotWritten(failed, NEW_TOKEN, 'the failed plan');
      assert.deepEqual(failed.result!.state, {
        serialBefore: held.serial,
        serialAfter: held.serial,
        lineage: held.lineage,
      });
      // Pulled once terraform had ended, inside the step plan: no step state before ran before it.
      const failedSteps: string[] = failed.result!.steps.map((step) => step.name);
      assert.ok(!failedSteps.includes('state before'), failedSteps.join(', '));

      // The same failed plan told to expect another lineage: the state pulled after it is not the object's, so
      // the result names no state (a controller takes the next lineage from it), and a warning says what it found.
      const other = await s.run(op, [...args, '--expect-lineage', OTHER_LINEAGE]);
      assert.equal(other.exitCode, 2, explain(other));
      assert.equal(other.result!.reason, 'InputsInvalid', 'the plan failed before anything was checked');
      assert.equal(other.result!.state, undefined);
      assert.ok(
        other.result!.warnings.includes(
          `the backend holds serial ${held.serial} of lineage ${held.lineage}, not the object's state (lineage ${OTHER_LINEAGE}, --expect-lineage): the next run refuses it`,
        ),
        JSON.stringify(other.result!.warnings),
      );
      // The state's secrets were learned all the same: the diagnostic is printed, masked.
      assert.match(other.allBytes, /The client refuses the token/);
      assertNotWritten(other, OLD_TOKEN, 'the failed plan against another lineage');

      // The plan that succeeds prints the token's old value (the output "known after apply" beside it): masked.
      await s.setInputs({ 'terraform.tfvars.json': { admin_token: NEW_TOKEN } });
      const passed = await s.run(op, args);
      assert.equal(passed.exitCode, 0, explain(passed));
      assertNotWritten(passed, OLD_TOKEN, `the ${op} after the rotation`);
      const steps: string[] = passed.result!.steps.map((step) => step.name);
      assert.ok(steps.indexOf('state before') > steps.indexOf('plan hash'), `from the saved plan: ${steps.join(', ')}`);
      assert.equal(passed.result!.state!.serialBefore, held.serial);
    });

  it('a plan file whose state cannot be read: PlanUnreadable, nothing applied or printed, and a warning says why (plan, apply); the next run applies', async (t) => {
    const s = await scenario(t, MODULE, { 'terraform.tfvars.json': { admin_token: OLD_TOKEN } });
    const first = await s.run('apply', ['--kind', 'machine', '--guard', 'off']);
    assert.equal(first.exitCode, 0, explain(first));
    const held = await readLocalState(s.state);
    await s.useModule({ 'main.tf': MODULE['main.tf'].replace('input = "client"', 'input = "client-2"') });
    const wrapper = join(s.dir, 'no-state-entry-terraform.sh');
    await writeFile(wrapper, NO_STATE_ENTRY_AFTER_PLAN, { mode: 0o755 });
    const garbled = join(s.dir, 'garbled-previous-state-terraform.sh');
    await writeFile(garbled, PREVIOUS_STATE_GARBLED_AFTER_PLAN, { mode: 0o755 });
    const unread = await s.run('plan', ['--kind', 'machine', '--terraform', garbled]);
    assert.equal(unread.result!.reason, 'PlanUnreadable', explain(unread));
    assert.match(
      unread.result!.message,
      /holds no state the runner can read: its tfstate-prev entry is no state document \(/,
    );
    assert.doesNotMatch(
      unread.allBytes,
      /will be updated|Plan: \d+ to add|client-2/,
      "terraform's plan is not printed",
    );
    for (const op of ['plan', 'apply'] as const) {
      const guard = op === 'apply' ? ['--guard', 'off'] : [];
      const run = await s.run(op, ['--kind', 'machine', ...guard, '--terraform', wrapper]);
      assert.equal(run.exitCode, 1, explain(run));
      assert.equal(run.result!.reason, 'PlanUnreadable', explain(run));
      assert.deepEqual([run.result!.error!.kind, run.result!.error!.step], ['plan', 'state before']);
      assert.match(
        run.result!.message,
        /^the saved plan file holds no state the runner can read: it holds no tfstate entry\. Nothing was applied/,
      );
      assert.match(run.result!.message, /run the image's terraform, or report it/, 'it names the fix');
      assert.doesNotMatch(
        run.allBytes,
        /will be updated|Plan: \d+ to add|client-2/,
        `${op}: terraform's plan is not printed`,
      );
      assert.ok(
        run.result!.warnings.includes(
          "terraform's output during the plan was not printed: the state the plan was made against could not be read (it holds no tfstate entry): terraform may print the state's secrets, which the runner masks only once it has read that state",
        ),
        JSON.stringify(run.result!.warnings),
      );
      assert.equal(run.result!.applied, false);
      assert.equal(run.result!.planArtifact, undefined, 'nothing packed');
      const after = await readLocalState(s.state);
      assert.deepEqual([after.serial, after.lineage], [held.serial, held.lineage], `${op}: the state is as it was`);
    }
    // The next run, with the image's terraform, finds nothing left in its way (no lock, no marker) and applies.
    const next = await s.run('apply', ['--kind', 'machine', '--guard', 'off']);
    assert.equal(next.exitCode, 0, explain(next));
    assert.equal(next.result!.reason, 'ApplySucceeded');
    const client = (await readLocalState(s.state)).resources.find((r) => r.name === 'client');
    assert.deepEqual(client?.instances[0]?.attributes.input, { value: 'client-2', type: 'string' });
  });

  it('another run writes the state after the plan: the apply is refused before any backup, the state is the other run’s, and the next apply plans against it and applies', async (t) => {
    const s = await scenario(t, MODULE, { 'terraform.tfvars.json': { admin_token: OLD_TOKEN } });
    const first = await s.run('apply', ['--kind', 'machine', '--guard', 'off']);
    assert.equal(first.exitCode, 0, explain(first));
    // The real terraform, but before the first `state pull` (the one once the decision is to apply) another
    // writer pushes the current state one serial up, with an output added.
    const wrapper = join(s.dir, 'other-writer-terraform.sh');
    await writeFile(wrapper, OTHER_WRITER_BEFORE_PULL, { mode: 0o755 });
    await s.useModule({ 'main.tf': MODULE['main.tf'].replace('input = "client"', 'input = "client-2"') });
    const backups = join(s.out, 'backups');
    const before = existsSync(backups) ? readdirSync(backups) : [];
    const run = await s.run('apply', ['--kind', 'machine', '--guard', 'off', '--terraform', wrapper]);
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.reason, 'ApplyFailed');
    assert.equal(run.result!.error!.step, 'state before');
    assert.match(run.result!.message, /the state changed after the plan was made .*Nothing was backed up or applied/);
    assert.equal(run.result!.applied, false);
    const steps: string[] = run.result!.steps.map((step) => step.name);
    assert.ok(!steps.includes('backup') && !steps.includes('apply'), steps.join(', '));
    assert.deepEqual(existsSync(backups) ? readdirSync(backups) : [], before, 'no backup was written');
    const state = await readLocalState(s.state);
    assert.deepEqual(state.outputs?.other_writer, { value: 'was here', type: 'string' }, 'the other write stands');
    const client = state.resources.find((r) => r.name === 'client');
    assert.deepEqual(client?.instances[0]?.attributes.input, { value: 'client', type: 'string' }, 'nothing applied');

    // The next apply (no other writer now) plans against the state the other run wrote, backs it up and applies.
    const rerun = await s.run('apply', ['--kind', 'machine', '--guard', 'off']);
    assert.equal(rerun.exitCode, 0, explain(rerun));
    assert.equal(rerun.result!.reason, 'ApplySucceeded');
    assert.equal(rerun.result!.state!.serialBefore, state.serial, "planned against the other run's state");
    assert.equal(rerun.result!.state!.lineage, state.lineage);
    const backedUp = await unpackArtifactDir(rerun.result!.backup!.ref);
    const backupState = JSON.parse(backedUp.files['terraform.tfstate']!.toString('utf8')) as typeof state;
    assert.equal(backupState.serial, state.serial, "the backup is the other run's state, the one the apply replaced");
    assert.deepEqual(backupState.outputs?.other_writer, { value: 'was here', type: 'string' });
    const after = await readLocalState(s.state);
    assert.equal(after.serial, rerun.result!.state!.serialAfter);
    assert.ok(after.serial > state.serial, `serial ${state.serial} → ${after.serial}`);
    const applied = after.resources.find((r) => r.name === 'client');
    assert.deepEqual(applied?.instances[0]?.attributes.input, { value: 'client-2', type: 'string' }, 'applied');
    // The module declares no such output: the apply of a plan made against the other run's state removed it.
    assert.equal(after.outputs?.other_writer, undefined);
  });
});

/** The real terraform; after a plan, the names of its plan file's `tfstate` entries changed (`tfstatX`, `tfstatX-prev`). */
const NO_STATE_ENTRY_AFTER_PLAN = `#!/bin/sh
fd3=
for arg in "$@"; do [ "$arg" = /dev/fd/3 ] && fd3=1; done
[ -n "$fd3" ] || exec 3>&-
[ "$1" = plan ] || exec terraform "$@"
out=
for arg in "$@"; do case "$arg" in -out=*) out="\${arg#-out=}" ;; esac; done
terraform "$@"
code=$?
if [ -f "$out" ]; then
  node -e 'const fs = require("fs"); const b = fs.readFileSync(process.argv[1]); const from = Buffer.from("tfstate"); for (let i = b.indexOf(from); i !== -1; i = b.indexOf(from, i + 1)) b.write("tfstatX", i); fs.writeFileSync(process.argv[1], b);' "$out" || exit 1
fi
exit $code
`;

/**
 * The real terraform, but its plan file's tfstate-prev entry is marked stored instead of deflated: the entry's
 * bytes, read as they are, are no state document.
 */
const PREVIOUS_STATE_GARBLED_AFTER_PLAN = NO_STATE_ENTRY_AFTER_PLAN.replace(
  /node -e '.*' "\$out"/,
  `node -e 'const fs = require("fs"); const b = fs.readFileSync(process.argv[1]);
for (let at = b.lastIndexOf(Buffer.from([0x50, 0x4b, 5, 6])), i = b.readUInt32LE(at + 16); b.readUInt32LE(i) === 0x02014b50; ) {
  const n = b.readUInt16LE(i + 28);
  if (b.toString("utf8", i + 46, i + 46 + n) === "tfstate-prev") { b.writeUInt16LE(0, i + 10); b.writeUInt16LE(0, b.readUInt32LE(i + 42) + 8); }
  i += 46 + n + b.readUInt16LE(i + 30) + b.readUInt16LE(i + 32);
}
fs.writeFileSync(process.argv[1], b);' "$out"`,
);

/** The real terraform; before its first `state pull`, another writer pushes the current state one serial up, with an output added. */
const OTHER_WRITER_BEFORE_PULL = `#!/bin/sh
fd3=
for arg in "$@"; do [ "$arg" = /dev/fd/3 ] && fd3=1; done
[ -n "$fd3" ] || exec 3>&-
if [ "$1" = state ] && [ "$2" = pull ] && [ ! -e other-writer.json ]; then
  terraform state pull > other-writer.json &&
    node -e 'const fs = require("fs"); const s = JSON.parse(fs.readFileSync("other-writer.json", "utf8")); s.serial += 1; s.outputs.other_writer = { value: "was here", type: "string" }; fs.writeFileSync("other-writer.json", JSON.stringify(s));' &&
    terraform state push other-writer.json || exit 1
fi
exec terraform "$@"
`;
