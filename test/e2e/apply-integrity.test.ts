// The apply runs exactly the plan that was classified (a saved plan file that changes between show
// and apply, here swapped for a destroy plan by a terraform wrapper, is never applied), and only
// state terraform wrote in this run is ever saved as its unsaved state.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modules, resourceIds } from '../support/tf-modules.ts';
import { explain, scenario } from './runner.ts';

/**
 * Forwards to the real terraform. After each `plan -out=F` it also saves a destroy plan as F.swap,
 * and after `show F` it moves F.swap over F: what is applied then is not what was shown.
 */
const SWAPPING_TERRAFORM = `#!${process.execPath}
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync } from 'node:fs';
const args = process.argv.slice(2);
const run = (list, stdio) => spawnSync('terraform', list, { stdio }).status ?? 1;
const status = run(args, 'inherit');
if (args[0] === 'plan') {
  const out = args.find((a) => a.startsWith('-out=')).slice('-out='.length);
  const rest = args.filter((a) => !a.startsWith('-out=') && a !== '-detailed-exitcode');
  if (run([...rest, '-destroy', '-out=' + out + '.swap'], 'ignore') !== 0) process.exit(99);
}
if (args[0] === 'show' && existsSync(args.at(-1) + '.swap')) renameSync(args.at(-1) + '.swap', args.at(-1));
process.exit(status);
`;

describe('the saved plan file', () => {
  it('changed after it was classified: PlanFileChanged, nothing applied, the state untouched', async (t) => {
    const s = await scenario(t, modules.base);
    const first = await s.run('apply', ['--image', 'registry.example/m:1']);
    assert.equal(first.exitCode, 0, explain(first));
    const stateBefore = await readFile(s.state);
    const ids = resourceIds(await s.readState());
    assert.ok(Object.keys(ids).length > 1, 'the module has resources a destroy would delete');

    const wrapper = join(s.dir, 'swapping-terraform.mjs');
    await writeFile(wrapper, SWAPPING_TERRAFORM);
    await chmod(wrapper, 0o755);
    // A new image: the classified plan only records the new inputs hash (not destructive, no approval needed).
    const run = await s.run('apply', ['--image', 'registry.example/m:2', '--terraform', wrapper]);

    assert.equal(run.exitCode, 1, explain(run));
    const r = run.result!;
    assert.equal(r.outcome, 'failed');
    assert.equal(r.reason, 'PlanFileChanged');
    assert.equal(r.error!.step, 'plan check');
    assert.match(r.message, /Nothing was applied/);
    assert.deepEqual(r.plan!.destructive, [], 'the classified plan destroys nothing');
    assert.equal(r.applied, false);
    assert.equal(r.mayHaveChanged, false);
    assert.deepEqual(r.error!.detail!.classified, r.planHash);
    assert.deepEqual(await readFile(s.state), stateBefore, 'the swapped-in destroy plan was not applied');
    assert.deepEqual(resourceIds(await s.readState()), ids);
  });

  it('unchanged: the apply reports the hash of the plan it classified and applied', async (t) => {
    const s = await scenario(t, modules.base);
    const run = await s.run('apply', ['--image', 'registry.example/m:1']);
    assert.equal(run.exitCode, 0, explain(run));
    assert.match(run.result!.planHash!, /^[0-9a-f]{64}$/);
    const names = run.result!.steps.map((step) => step.name);
    assert.ok(names.indexOf('plan hash') < names.indexOf('show') && names.indexOf('plan check') < names.indexOf('apply'), names.join(', '));
  });
});

/** Forwards to the real terraform; after `show` it leaves the file $FORGED_ERRORED_STATE as errored.tfstate in its working dir. */
const PLANTING_TERRAFORM = `#!${process.execPath}
import { spawnSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
const args = process.argv.slice(2);
const status = spawnSync('terraform', args, { stdio: 'inherit' }).status ?? 1;
if (args[0] === 'show') copyFileSync(process.env.FORGED_ERRORED_STATE, 'errored.tfstate');
process.exit(status);
`;

describe('errored.tfstate', () => {
  it('one that appears in the workdir before the apply (code run at plan time) is removed, never pushed', async (t) => {
    const s = await scenario(t, modules.base);
    const first = await s.run('apply', ['--image', 'registry.example/m:1']);
    assert.equal(first.exitCode, 0, explain(first));
    const forged = join(s.dir, 'forged.tfstate');
    await writeFile(forged, JSON.stringify({ ...(await s.readState()), serial: 1000, resources: [] }));
    const wrapper = join(s.dir, 'planting-terraform.mjs');
    await writeFile(wrapper, PLANTING_TERRAFORM);
    await chmod(wrapper, 0o755);
    await s.useModule(modules.failingApply);

    const run = await s.run('apply', ['--image', 'registry.example/m:1', '--terraform', wrapper], { FORGED_ERRORED_STATE: forged });
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.reason, 'ApplyFailed');
    assert.equal(run.result!.erroredState, undefined, JSON.stringify(run.result!.erroredState));
    const after = await s.readState();
    assert.ok(after.serial < 1000, `the planted state was pushed (serial ${after.serial})`);
    assert.ok(Object.keys(resourceIds(after)).includes('terraform_data.cluster'));
  });

  it('one the module ships is neither copied nor pushed nor kept when an apply fails', async (t) => {
    const s = await scenario(t, modules.base);
    const first = await s.run('apply', ['--image', 'registry.example/m:1']);
    assert.equal(first.exitCode, 0, explain(first));
    // A forged state that would wipe every resource if it were pushed.
    const forged = { ...(await s.readState()), serial: 1000, resources: [] };
    await s.useModule({ ...modules.failingApply, 'errored.tfstate': JSON.stringify(forged) });

    const run = await s.run('apply', ['--image', 'registry.example/m:1']);
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.reason, 'ApplyFailed');
    assert.equal(run.result!.erroredState, undefined, 'terraform saved its state: there was nothing of its own to rescue');
    assert.ok(!run.result!.warnings.some((w) => w.includes('errored.tfstate')), run.result!.warnings.join('\n'));
    const after = await s.readState();
    assert.ok(after.serial < 1000, `the forged state was pushed (serial ${after.serial})`);
    assert.ok(Object.keys(resourceIds(after)).includes('terraform_data.cluster'), 'the resources are still in the state');
  });
});
