// Secret hygiene with the real terraform: canary values that must appear in no byte any op writes
// (stdout, stderr, the out dir, the termination message), across apply, plan, refresh, drift and
// destroy, including when terraform fails with a diagnostic that quotes the value; values too short
// to mask are reported; files that may hold secrets are 0600 in 0700 dirs.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { sharedSetup } from '../support/suite-setup.ts';
import { explain, scenario, type RunnerRun, type Scenario } from '../support/runner.ts';

/** (a) declared sensitive by the module, given in terraform.tfvars.json */
const DECLARED = 'CANARY-declared-7Hq2x';
/** (b) NOT declared sensitive, given in sensitive.tfvars.json (the contract's up-front secrets) */
const UPFRONT = 'CANARY-upfront-Pz81k';
/** (c) a sensitive output's value, in no input at all */
const OUTPUT = 'CANARY-output-Mw4Rt';
/** (a) again after a rotation: the old value is then only in the state */
const ROTATED = 'CANARY-rotated-Lk9Vd';
const ALL = [DECLARED, UPFRONT, OUTPUT, ROTATED];

const MODULE = {
  'main.tf': `variable "admin_token" {
  type      = string
  sensitive = true
}

variable "db_password" {
  type = string
}

variable "refuse" {
  type    = bool
  default = false
}

# (d) derived: terraform_data.output copies the sensitive input and loses the mark; the human plan prints it.
resource "terraform_data" "credentials" {
  input = var.admin_token
}

resource "terraform_data" "db" {
  input = var.db_password

  lifecycle {
    precondition {
      condition     = !var.refuse
      # Declassified: terraform hides a sensitive value in an error message itself; the masker must hold where a module shows one.
      error_message = "The database password \${nonsensitive(var.db_password)} is refused."
    }
  }
}

output "token_copy" {
  value     = terraform_data.credentials.output
  sensitive = true
}

output "generated" {
  value     = "${OUTPUT}"
  sensitive = true
}

output "db_id" {
  value = terraform_data.db.id
}
`,
};

function assertNoCanary(run: RunnerRun, what: string, canaries = ALL) {
  for (const canary of canaries) {
    const at = run.allBytes.indexOf(canary);
    assert.equal(
      at,
      -1,
      `${what}: ${canary} appears in what the runner wrote: …${run.allBytes.slice(Math.max(0, at - 200), at + 60)}…`,
    );
  }
}

/** Every file under dir is 0600 (no group/other bits) and every dir 0700. */
async function assertPrivate(dir: string): Promise<number> {
  let files = 0;
  const dirMode = (await stat(dir)).mode & 0o777;
  assert.equal(dirMode & 0o077, 0, `${dir} is ${dirMode.toString(8)}: group/other can read it`);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files += await assertPrivate(path);
    else {
      const mode = (await stat(path)).mode & 0o777;
      assert.equal(mode & 0o077, 0, `${path} is ${mode.toString(8)}: it may hold secrets`);
      files++;
    }
  }
  return files;
}

async function secretScenario(
  t: TestContext,
  inputs: { token?: string; password?: string; refuse?: boolean } = {},
): Promise<Scenario> {
  return scenario(t, MODULE, {
    'terraform.tfvars.json': { admin_token: inputs.token ?? DECLARED, refuse: inputs.refuse ?? false },
    'sensitive.tfvars.json': { db_password: inputs.password ?? UPFRONT },
  });
}

/**
 * An apply with secretScenario's defaults into no state (with --backups): made once. The first test
 * checks what it wrote; each test that starts from it gets a copy of its state.
 */
const applied = sharedSetup(async (suite) => {
  const s = await secretScenario(suite);
  const apply = await s.run('apply', ['--backups', join(s.dir, 'backups')]);
  assert.equal(apply.exitCode, 0, explain(apply));
  return { apply, stateDir: dirname(s.state) };
});

describe('secrets: canaries never reach a byte the runner writes', { concurrency: 2 }, () => {
  it('across apply, plan, refresh, drift, destroy (and 0600/0700 for backups and plan artifacts)', async (t) => {
    const s = await secretScenario(t);
    const backups = join(s.dir, 'backups');
    const artifacts = join(s.dir, 'artifacts');

    // The apply is the file's setup: what it wrote is checked here, and the other ops run on a copy of its state.
    const { apply, stateDir } = await applied();
    assertNoCanary(apply, 'apply');
    assert.equal(apply.result!.outputs!.generated!.sensitive, true);
    assert.equal(apply.result!.outputs!.generated!.value, undefined);
    await cp(stateDir, dirname(s.state), { recursive: true });

    const plan = await s.run('plan', ['--artifacts', artifacts]);
    assert.equal(plan.exitCode, 0, explain(plan));
    assertNoCanary(plan, 'plan');

    const refresh = await s.run('refresh');
    assert.equal(refresh.exitCode, 0, explain(refresh));
    assertNoCanary(refresh, 'refresh');

    const drift = await s.run('drift');
    assert.equal(drift.exitCode, 0, explain(drift));
    assertNoCanary(drift, 'drift');

    // A second apply takes a backup of a state that holds every canary.
    await s.setInputs({
      'terraform.tfvars.json': { admin_token: DECLARED, refuse: false },
      'sensitive.tfvars.json': { db_password: UPFRONT },
    });
    const destroy = await s.run('destroy', ['--backups', backups]);
    assert.equal(destroy.exitCode, 0, explain(destroy));
    assertNoCanary(destroy, 'destroy');

    assert.ok((await assertPrivate(backups)) > 0, 'the backups were written');
    assert.ok((await assertPrivate(artifacts)) > 0, 'the plan artifact was written');
  });

  it('a rotated secret: the old value (now only in the state) is masked where terraform prints it as a derived attribute', async (t) => {
    const s = await secretScenario(t);
    await cp((await applied()).stateDir, dirname(s.state), { recursive: true });
    await s.setInputs({
      'terraform.tfvars.json': { admin_token: ROTATED, refuse: false },
      'sensitive.tfvars.json': { db_password: UPFRONT },
    });
    for (const op of ['drift', 'plan', 'apply'] as const) {
      const run = await s.run(op, op === 'plan' ? ['--artifacts', join(s.dir, 'artifacts')] : []);
      assert.equal(run.exitCode, 0, `${op}: ${explain(run)}`);
      // terraform prints "~ output = "<old>" -> (known after apply)" for terraform_data.credentials.
      assertNoCanary(run, `${op} after rotation`);
    }
  });

  it('terraform failing with a diagnostic that quotes an up-front secret (precondition error_message)', async (t) => {
    const s = await secretScenario(t, { refuse: true });
    for (const op of ['apply', 'plan', 'drift'] as const) {
      const run = await s.run(op, op === 'plan' ? ['--artifacts', join(s.dir, 'artifacts')] : []);
      // The precondition reads only the variables: the inputs' problem, which no retry fixes (exit 2).
      assert.equal(run.exitCode, 2, `${op}: ${explain(run)}`);
      assert.equal(run.result!.reason, 'InputsInvalid');
      assert.match(
        run.allBytes,
        /The database password \(sensitive value\) is refused/,
        `${op}: terraform's diagnostic is there, masked`,
      );
      assertNoCanary(run, `failed ${op}`);
    }
    // refresh and destroy against a state (the defaults applied, without the refusal): a refresh-only
    // plan reports a failed condition as a warning, a destroy checks none; neither may leak the secret.
    await cp((await applied()).stateDir, dirname(s.state), { recursive: true });
    const refresh = await s.run('refresh');
    assert.equal(refresh.exitCode, 0, explain(refresh));
    assert.equal(refresh.result!.reason, 'RefreshSucceeded');
    assert.match(
      refresh.allBytes,
      /The database password \(sensitive value\) is refused/,
      'the warning is there, masked',
    );
    assertNoCanary(refresh, 'refresh with the refusal');
    const destroy = await s.run('destroy');
    assert.equal(destroy.exitCode, 0, explain(destroy));
    assert.equal(destroy.result!.reason, 'DestroySucceeded');
    assertNoCanary(destroy, 'destroy with the refusal');
  });

  it('values shorter than 4 characters are named in warnings (the variable), not masked', async (t) => {
    const s = await secretScenario(t, { password: 'ab7' });
    const run = await s.run('apply');
    assert.equal(run.exitCode, 0, explain(run));
    assert.ok(
      run.result!.warnings.some((w) => /^variable "db_password" in sensitive\.tfvars\.json .*shorter than 4/.test(w)),
      JSON.stringify(run.result!.warnings),
    );
    assert.ok(
      !run.result!.warnings.some((w) => w.includes('ab7')),
      'the warning names where the value is, never the value',
    );
    assertNoCanary(run, 'apply with a short secret');
  });
});
