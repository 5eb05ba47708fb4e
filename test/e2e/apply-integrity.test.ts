// The apply runs exactly the plan that was classified: terraform reads the saved plan through the
// runner's open file (a destroy plan a terraform wrapper renames over the path is never read; one
// written into the file itself is caught by the plan check), and only state terraform wrote in this
// run is ever saved as its unsaved state.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modules, resourceIds } from '../support/tf-modules.ts';
import { explain, recordedInputsHash, scenario } from './runner.ts';

/**
 * Forwards to the real terraform (and the plan file the runner passes as descriptor 3, when it
 * does). After each `plan -out=F` it also saves a destroy plan as F.swap; then, as $SWAP_AT says
 * (after `show`, or just before `apply`: after the runner's last check), it puts that destroy plan
 * at F, as $SWAP_HOW says: `rename` over the path, or `in-place` into the same file. It records
 * what it did in $SWAP_RECORD.done.
 */
const SWAPPING_TERRAFORM = `#!${process.execPath}
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
const args = process.argv.slice(2);
const { SWAP_AT, SWAP_HOW, SWAP_RECORD } = process.env;
const stdio = args.includes('/dev/fd/3') ? ['inherit', 'inherit', 'inherit', 3] : 'inherit';
const run = (list, io) => spawnSync('terraform', list, { stdio: io }).status ?? 1;
const swap = () => {
  const out = readFileSync(SWAP_RECORD, 'utf8');
  if (!existsSync(out + '.swap')) return;
  if (SWAP_HOW === 'rename') renameSync(out + '.swap', out);
  else writeFileSync(out, readFileSync(out + '.swap'));
  writeFileSync(SWAP_RECORD + '.done', SWAP_HOW + ' at ' + SWAP_AT);
};
if (args[0] === 'apply' && SWAP_AT === 'apply') swap();
const status = run(args, stdio);
if (args[0] === 'plan') {
  const out = args.find((a) => a.startsWith('-out=')).slice('-out='.length);
  writeFileSync(SWAP_RECORD, out);
  const rest = args.filter((a) => !a.startsWith('-out=') && a !== '-detailed-exitcode');
  if (run([...rest, '-destroy', '-out=' + out + '.swap'], 'ignore') !== 0) process.exit(99);
}
if (args[0] === 'show' && SWAP_AT === 'show') swap();
process.exit(status);
`;

/** An applied base module, and a wrapper that swaps a destroy plan in as `at` and `how` say; the next apply only records a new image. */
async function swapScenario(t: TestContext, at: 'show' | 'apply', how: 'rename' | 'in-place') {
  const s = await scenario(t, modules.base);
  const first = await s.run('apply', ['--image', 'registry.example/m:1']);
  assert.equal(first.exitCode, 0, explain(first));
  const ids = resourceIds(await s.readState());
  assert.ok(Object.keys(ids).length > 1, 'the module has resources a destroy would delete');
  const wrapper = join(s.dir, 'swapping-terraform.mjs');
  await writeFile(wrapper, SWAPPING_TERRAFORM);
  await chmod(wrapper, 0o755);
  const record = join(s.dir, 'swap-record');
  // A new image: the classified plan only records the new inputs hash (not destructive, no approval needed).
  const run = await s.run('apply', ['--image', 'registry.example/m:2', '--terraform', wrapper], { SWAP_AT: at, SWAP_HOW: how, SWAP_RECORD: record });
  const swapped = await readFile(`${record}.done`, 'utf8').catch(() => undefined);
  assert.equal(swapped, `${how} at ${at}`, 'the wrapper swapped the destroy plan in');
  return { s, ids, run };
}

describe('the saved plan file', () => {
  it('renamed over after the plan check (the moment terraform opens it): terraform applies the file that was checked, nothing is destroyed', async (t) => {
    const { s, ids, run } = await swapScenario(t, 'apply', 'rename');
    assert.equal(run.exitCode, 0, explain(run));
    assert.equal(run.result!.reason, 'NoChanges', 'the classified plan only recorded the inputs hash');
    const after = resourceIds(await s.readState());
    for (const [address, id] of Object.entries(ids)) if (address !== 'terraform_data.captf_inputs_hash') assert.equal(after[address], id, `${address} was destroyed or replaced`);
    assert.equal(recordedInputsHash(await s.readState()), run.result!.inputsHash, 'the classified plan was applied');
  });

  it('renamed over after it was classified: the held file is checked and applied, the swapped one never read', async (t) => {
    const { s, ids, run } = await swapScenario(t, 'show', 'rename');
    assert.equal(run.exitCode, 0, explain(run));
    assert.deepEqual(Object.keys(resourceIds(await s.readState())).sort(), Object.keys(ids).sort());
    assert.deepEqual(run.result!.plan!.destructive, []);
  });

  it('written in place after it was classified: PlanFileChanged at the plan check, nothing applied, the state untouched', async (t) => {
    const { s, ids, run } = await swapScenario(t, 'show', 'in-place');
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
    assert.deepEqual(resourceIds(await s.readState()), ids, 'the destroy plan written in was not applied');
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
// The plan file the runner passes as descriptor 3 goes on to terraform.
const stdio = args.includes('/dev/fd/3') ? ['inherit', 'inherit', 'inherit', 3] : 'inherit';
const status = spawnSync('terraform', args, { stdio }).status ?? 1;
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
