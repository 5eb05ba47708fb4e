// The module cannot point the run at another state: a backend or cloud block in an override file is
// refused before terraform runs, and after init the runner checks the backend terraform recorded
// (exactly the local state --state names, or the type the module declares) before any state is read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modules, withPgBackend } from '../support/tf-modules.ts';
import { explain, scenario, type RunnerRun, type Scenario } from '../support/runner.ts';

const IMAGE = 'registry.example/m:1';
/** In the other state's path: a config value that must never be shown. */
const OTHER = 'CANARY-other-state-Qz7';

const otherState = (s: Scenario) => join(s.dir, `${OTHER}.tfstate`);

function assertNothingElsewhere(s: Scenario, run: RunnerRun): void {
  assert.ok(!existsSync(otherState(s)), 'the other state was written');
  assert.ok(!run.allBytes.includes(OTHER), 'a backend config value appears in what the runner wrote');
}

describe('a backend in an override file of the module', () => {
  it("zz_override.tf (which terraform merges after the runner's own override): refused, file and line named, no state anywhere", async (t) => {
    const s = await scenario(t, modules.base);
    await writeFile(
      join(s.module, 'zz_override.tf'),
      `terraform {\n  backend "local" {\n    path = "${otherState(s)}"\n  }\n}\n`,
    );
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 4, explain(run));
    assert.equal(run.result!.reason, 'ImageInvalid');
    assert.equal(run.result!.error!.step, 'workspace');
    assert.ok(
      run.result!.message.includes(`${join(s.module, 'zz_override.tf')}:2: backend "local"`),
      run.result!.message,
    );
    assert.ok(!existsSync(s.state), 'nothing was applied to --state either');
    assertNothingElsewhere(s, run);
  });

  it('override.tf.json with a cloud block, and in a destroy: refused too; the state stays as it was', async (t) => {
    const s = await scenario(t, modules.base);
    const first = await s.run('apply', ['--image', IMAGE]);
    assert.equal(first.exitCode, 0, explain(first));
    const stateBefore = await readFile(s.state);
    await writeFile(
      join(s.module, 'override.tf.json'),
      '{\n  "terraform": {\n    "cloud": {"organization": "x"}\n  }\n}\n',
    );
    for (const op of ['apply', 'destroy']) {
      const run = await s.run(op, ['--image', IMAGE]);
      assert.equal(run.exitCode, 4, explain(run));
      assert.ok(run.result!.message.includes(`${join(s.module, 'override.tf.json')}:3: cloud`), run.result!.message);
      assert.deepEqual(await readFile(s.state), stateBefore, op);
    }
  });
});

describe("OpenTofu's spellings", () => {
  // terraform 1.11 ignores .tofu files; OpenTofu prefers them: the runner refuses what either tool would load.
  for (const name of ['zz_override.tofu', 'override.tofu.json']) {
    it(`a backend in ${name}: refused (exit 4), file and line named, nothing applied`, async (t) => {
      const s = await scenario(t, modules.base);
      const text = name.endsWith('.json')
        ? `{\n  "terraform": {\n    "backend": {"local": {"path": ${JSON.stringify(otherState(s))}}}\n  }\n}\n`
        : `terraform {\n  backend "local" {\n    path = "${otherState(s)}"\n  }\n}\n`;
      await writeFile(join(s.module, name), text);
      const run = await s.run('apply', ['--image', IMAGE]);
      assert.equal(run.exitCode, 4, explain(run));
      assert.equal(run.result!.reason, 'ImageInvalid');
      assert.ok(
        run.result!.message.includes(`${join(s.module, name)}:${name.endsWith('.json') ? 3 : 2}: backend "local"`),
        run.result!.message,
      );
      assert.ok(!existsSync(s.state), 'nothing was applied');
      assertNothingElsewhere(s, run);
    });
  }

  it("the only backend block in backend.tofu, run by terraform (which never reads it): refused as the module's problem (exit 4) with the fix, before init", async (t) => {
    const s = await scenario(t, { ...modules.base, 'backend.tofu': 'terraform {\n  backend "pg" {}\n}\n' });
    // A Job's run, the module's own backend (--state would replace it).
    const run = await s.runOwnBackend('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 4, explain(run));
    assert.equal(run.result!.outcome, 'invalid');
    assert.equal(run.result!.reason, 'ImageInvalid');
    assert.equal(run.result!.error!.step, 'workspace');
    assert.ok(
      run.result!.message.includes(
        `does not read the backend block in ${join(s.module, 'backend.tofu')}:2: backend "pg" (terraform reads only .tf and .tf.json files`,
      ),
      run.result!.message,
    );
    assert.match(
      run.result!.message,
      /Nothing was planned or applied; put the module's backend alone in backend\.tf, which terraform and OpenTofu both read/,
    );
    assert.ok(!run.result!.steps.some((step) => step.name === 'init'), 'terraform never ran init');
  });

  it('backend.tofu beside backend.tf: refused by apply and by restore alike (exit 4), nothing read or changed', async (t) => {
    const s = await scenario(t, {
      ...withPgBackend(modules.base),
      'backend.tofu': 'terraform {\n  backend "local" {}\n}\n',
    });
    // Not s.run: it passes --state, which replaces the module's backend.
    const run = (op: string, args: string[]) => s.runOwnBackend(op, ['--image', IMAGE, ...args]);
    for (const [op, args] of [
      ['apply', []],
      ['restore', ['--backup', join(s.dir, 'no-backup')]],
    ] as const) {
      const refused = await run(op, [...args]);
      assert.equal(refused.exitCode, 4, `${op}: ${explain(refused)}`);
      assert.equal(refused.result!.reason, 'ImageInvalid');
      assert.match(
        refused.result!.message,
        /backend\.tofu beside .*backend\.tf: OpenTofu reads the first and terraform the second/,
      );
      assert.ok(!refused.result!.steps.some((step) => step.name === 'init'), `${op}: terraform never ran init`);
    }
  });
});

/** Forwards to terraform (with the plan file the runner passes as descriptor 3); before `init` it adds an override file setting a local backend at $OTHER_STATE: what a scan that missed a backend would let through. */
const INJECTING_TERRAFORM = `#!${process.execPath}
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const args = process.argv.slice(2);
if (args[0] === 'init') writeFileSync('zzz_override.tf', 'terraform {\\n  backend "local" {\\n    path = ' + JSON.stringify(process.env.OTHER_STATE) + '\\n  }\\n}\\n');
const stdio = args.includes('/dev/fd/3') ? ['inherit', 'inherit', 'inherit', 3] : 'inherit';
process.exit(spawnSync('terraform', args, { stdio }).status ?? 1);
`;

async function injecting(s: Scenario): Promise<string> {
  const wrapper = join(s.dir, 'injecting-terraform.mjs');
  await writeFile(wrapper, INJECTING_TERRAFORM);
  await chmod(wrapper, 0o755);
  return wrapper;
}

function assertMismatch(run: RunnerRun, found: RegExp): void {
  assert.equal(run.exitCode, 4, explain(run));
  assert.equal(run.result!.reason, 'BackendMismatch');
  assert.equal(run.result!.error!.step, 'init');
  assert.match(run.result!.message, found);
  assert.match(run.result!.message, /recorded in .*\/\.terraform\/terraform\.tfstate/);
  assert.match(run.result!.message, /Nothing was read or applied/);
  const steps = run.result!.steps.map((step) => step.name);
  assert.ok(!steps.includes('state before') && !steps.includes('plan'), steps.join(', '));
  assert.equal(run.result!.applied, false);
}

describe('the backend init recorded', () => {
  it('with --state: a local backend at another path is BackendMismatch before any state is read', async (t) => {
    const s = await scenario(t, modules.base);
    const run = await s.run('apply', ['--image', IMAGE, '--terraform', await injecting(s)], {
      OTHER_STATE: otherState(s),
    });
    assertMismatch(
      run,
      /a local backend that is not the local state --state names \(.*state\/terraform\.tfstate\): its path differs/,
    );
    assert.ok(!existsSync(s.state));
    assertNothingElsewhere(s, run);
  });

  it('without --state: another type than the module declares (local, not pg) is BackendMismatch; the message names the types and files', async (t) => {
    const s = await scenario(t, withPgBackend(modules.base));
    const wrapper = await injecting(s);
    // Not s.run: it passes --state.
    const run = await s.runOwnBackend('apply', ['--image', IMAGE, '--terraform', wrapper], {
      OTHER_STATE: otherState(s),
    });
    assertMismatch(run, /the backend "local", not the "pg" backend the module declares/);
    assert.ok(run.result!.message.includes(join(s.module, 'backend.tf')), run.result!.message);
    assertNothingElsewhere(s, run);
  });
});
