// The state is the object's, and it outlives the run: a local backend whose state file lands in the
// runner's workdir (the module copy, where terraform resolves a relative path) is refused after init,
// before any state is read; a local backend at an absolute path outside it is the object's state.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { modules, readLocalState, resourceIds, type FileTree } from '../support/tf-modules.ts';
import { explain, scenario } from '../support/runner.ts';

const withLocalBackend = (settings: string): FileTree => ({
  ...modules.base,
  'backend.tf': `terraform {\n  backend "local" {\n${settings}  }\n}\n`,
});

describe('a local backend that keeps the state in the workdir', () => {
  it('backend "local" {} (terraform.tfstate in the module copy): refused after init (exit 4, StateInWorkdir), naming the file and the fix; nothing planned or written', async (t) => {
    const s = await scenario(t, withLocalBackend(''));
    const workdir = join(s.dir, 'work');
    const run = await s.runOwnBackend('apply', ['--workdir', workdir]);
    assert.equal(run.exitCode, 4, explain(run));
    assert.equal(run.result!.outcome, 'invalid');
    assert.equal(run.result!.reason, 'StateInWorkdir');
    assert.equal(run.result!.error!.step, 'init');
    assert.deepEqual(
      run.result!.steps.map((step) => step.name),
      ['preflight', 'inputs', 'workspace', 'init'],
    );
    const stateFile = join(workdir, 'root', 'terraform.tfstate');
    assert.ok(
      run.result!.message.includes(
        `${join(s.module, 'backend.tf')}) keeps the state at ${stateFile} (no path: terraform's default terraform.tfstate in the module dir)`,
      ),
      run.result!.message,
    );
    assert.match(run.result!.message, /absolute path on a volume that outlives the pod .*or pass --state FILE/);
    assert.equal(run.result!.applied, false);
    assert.ok(!existsSync(stateFile), 'a state was written into the workdir');
  });

  it('a relative path (sub/state.tfstate), or one that climbs out of the module copy but stays in --workdir: refused alike, by every op (destroy too)', async (t) => {
    for (const [op, path] of [
      ['apply', 'sub/state.tfstate'],
      ['destroy', '../kept.tfstate'],
    ] as const) {
      const s = await scenario(t, withLocalBackend(`    path = "${path}"\n`));
      const workdir = join(s.dir, 'work');
      const run = await s.runOwnBackend(op, ['--workdir', workdir]);
      assert.equal(run.exitCode, 4, explain(run));
      assert.equal(run.result!.reason, 'StateInWorkdir');
      assert.ok(
        run.result!.message.includes(`keeps the state at ${join(workdir, 'root', path)} (path = "${path}")`),
        run.result!.message,
      );
      assert.ok(!existsSync(join(workdir, 'root', path)), 'nothing was applied');
    }
  });

  it("--state inside --workdir: refused as the caller's mistake (exit 2, StateFileInWorkdir)", async (t) => {
    const s = await scenario(t, modules.base);
    const workdir = join(s.dir, 'work');
    await mkdir(workdir);
    const run = await s.run('apply', [
      '--workdir',
      workdir,
      '--state',
      join(workdir, 'terraform.tfstate'),
      '--new-state',
    ]);
    assert.equal(run.exitCode, 2, explain(run));
    assert.equal(run.result!.reason, 'StateFileInWorkdir');
    assert.match(run.result!.message, /--state .* is inside the workdir/);
    assert.ok(!existsSync(join(workdir, 'terraform.tfstate')));
  });

  it("an absolute path outside the workdir is the object's state: applied, and the next run finds it (noChanges)", async (t) => {
    const s = await scenario(t, modules.base);
    const kept = join(s.dir, 'kept', 'terraform.tfstate');
    await s.useModule(withLocalBackend(`    path = "${kept}"\n`));
    await mkdir(join(s.dir, 'kept'));
    const first = await s.runOwnBackend('apply');
    assert.equal(first.exitCode, 0, explain(first));
    assert.ok(resourceIds(await readLocalState(kept))['terraform_data.cluster']);
    const again = await s.runOwnBackend('apply');
    assert.equal(again.exitCode, 0, explain(again));
    assert.equal(again.result!.outcome, 'noChanges', 'the second run read the state the first left');
    assert.equal(again.result!.state!.lineage, first.result!.state!.lineage);
  });
});
