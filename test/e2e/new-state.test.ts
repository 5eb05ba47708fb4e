// A local --state that does not exist (its directory, or the file in an existing directory) is a
// new, empty state: a typo there would create everything a second time, and a destroy would find
// nothing to destroy. It is refused unless the run is told to start the state (--new-state).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modules, readLocalState, resourceIds } from '../support/tf-modules.ts';
import { applied } from './apply.support.ts';
import { explain, scenario } from '../support/runner.ts';

describe('--state in a directory that does not exist', () => {
  it('is a usage error (exit 2, StateDirMissing) before anything runs; the directory is not created', async (t) => {
    const s = await scenario(t, modules.base);
    const typo = join(s.dir, 'stat', 'terraform.tfstate');
    for (const op of ['apply', 'drift', 'destroy']) {
      const run = await s.run(op, ['--state', typo]);
      assert.equal(run.exitCode, 2, explain(run));
      assert.equal(run.result!.reason, 'StateDirMissing');
      assert.equal(run.result!.error!.step, 'preflight');
      assert.match(run.result!.message, /stat\/terraform\.tfstate .*does not exist.*--new-state \(CAPTF_NEW_STATE=1\)/);
      assert.deepEqual(
        run.result!.steps.map((step) => step.name),
        ['preflight'],
        op,
      );
      assert.ok(!existsSync(join(s.dir, 'stat')), `${op} created the state dir`);
    }
  });

  it('with --new-state (or CAPTF_NEW_STATE=1) the first apply starts the state there', async (t) => {
    const s = await scenario(t, modules.base);
    const fresh = join(s.dir, 'new', 'dir', 'terraform.tfstate');
    const run = await s.run('apply', ['--state', fresh, '--new-state']);
    assert.equal(run.exitCode, 0, explain(run));
    assert.ok(resourceIds(await readLocalState(fresh))['terraform_data.cluster']);

    const other = join(s.dir, 'other', 'terraform.tfstate');
    const byEnv = await s.run('apply', ['--state', other], { CAPTF_NEW_STATE: '1' });
    assert.equal(byEnv.exitCode, 0, explain(byEnv));
    assert.ok(resourceIds(await readLocalState(other))['terraform_data.cluster']);
  });
});

describe('--state naming a file that does not exist, in a directory that does', () => {
  it("a typo in the file name: apply and destroy refused (exit 2, StateFileMissing) before anything runs; the object's state is untouched and no second one starts", async (t) => {
    const s = await applied(t);
    const stateBefore = await readLocalState(s.state);
    const typo = join(s.dir, 'state', 'terraform.tfstat');
    for (const op of ['apply', 'destroy']) {
      const run = await s.run(op, ['--state', typo]);
      assert.equal(run.exitCode, 2, explain(run));
      assert.equal(run.result!.outcome, 'invalid');
      assert.equal(run.result!.reason, 'StateFileMissing');
      assert.equal(run.result!.error!.step, 'preflight');
      assert.ok(run.result!.message.includes(`--state ${typo} does not exist`), run.result!.message);
      assert.match(run.result!.message, /Fix the file name, or pass --new-state \(CAPTF_NEW_STATE=1\)/);
      assert.deepEqual(
        run.result!.steps.map((step) => step.name),
        ['preflight'],
        op,
      );
      assert.ok(!existsSync(typo), `${op} started a second state`);
    }
    assert.deepEqual(await readLocalState(s.state), stateBefore);
  });
});

describe('--state naming an empty or whitespace-only file', () => {
  it('is refused as a missing one (exit 2, StateFileMissing, naming --new-state) before anything runs: the file is unchanged and nothing is applied', async (t) => {
    const s = await applied(t);
    for (const content of ['', ' \n\t\r\n']) {
      await writeFile(s.state, content);
      for (const op of ['apply', 'destroy']) {
        const run = await s.run(op, ['--state', s.state]);
        assert.equal(run.exitCode, 2, explain(run));
        assert.equal(run.result!.outcome, 'invalid');
        assert.equal(run.result!.reason, 'StateFileMissing');
        assert.equal(run.result!.error!.step, 'preflight');
        assert.equal(run.result!.applied, false);
        assert.ok(run.result!.message.includes(`--state ${s.state} is empty`), run.result!.message);
        assert.match(run.result!.message, /or pass --new-state \(CAPTF_NEW_STATE=1\)/);
        assert.deepEqual(
          run.result!.steps.map((step) => step.name),
          ['preflight'],
          op,
        );
        assert.equal(await readFile(s.state, 'utf8'), content, `${op} changed the state file`);
      }
    }
  });

  it('with --new-state the empty file is the state the first apply starts', async (t) => {
    const s = await scenario(t, modules.base);
    const fresh = join(s.dir, 'empty.tfstate');
    await writeFile(fresh, '');
    const run = await s.run('apply', ['--state', fresh, '--new-state']);
    assert.equal(run.exitCode, 0, explain(run));
    assert.ok(resourceIds(await readLocalState(fresh))['terraform_data.cluster']);
  });
});
