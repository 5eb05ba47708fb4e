// The apply runs exactly the plan that was classified: terraform reads the saved plan through the
// runner's open file (a destroy plan a terraform wrapper renames over the path is never read; one
// written into the file itself is caught by the plan check), and only state terraform wrote in this
// run is ever saved as its unsaved state.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modules, resourceIds } from '../support/tf-modules.ts';
import { explain, recordedInputsHash } from '../support/runner.ts';
import { firstApplyOnce } from './first-apply.support.ts';

// Every test starts from the base module applied by the runner (the test of an unchanged plan asserts
// on that apply itself): once per file, each test on a copy of that state.
const base = firstApplyOnce(modules.base, {}, ['--image', 'registry.example/m:1']);

/**
 * Forwards to the real terraform (and the plan file the runner passes as descriptor 3, when it
 * does). After each `plan -out=F` it also saves a destroy plan as F.swap; then, as $SWAP_AT says
 * (after `show`, or just before `apply`: after the runner's last check), it puts that destroy plan
 * at F, as $SWAP_HOW says: `rename` over the path, or `in-place` into the same file. It records
 * what it did in $SWAP_RECORD.done. A shell script: the runner starts terraform about seven times a
 * run, and a node process would cost ~0.1 s of CPU each time.
 */
const SWAPPING_TERRAFORM = `#!/bin/sh
fd3=
for arg in "$@"; do [ "$arg" = /dev/fd/3 ] && fd3=1; done
[ -n "$fd3" ] || exec 3>&-
swap() {
  out=$(cat "$SWAP_RECORD")
  [ -e "$out.swap" ] || return 0
  if [ "$SWAP_HOW" = rename ]; then mv -f "$out.swap" "$out"; else cat "$out.swap" >"$out"; fi
  printf '%s at %s' "$SWAP_HOW" "$SWAP_AT" >"$SWAP_RECORD.done"
}
if [ "$1" = apply ] && [ "$SWAP_AT" = apply ]; then swap; fi
terraform "$@"
status=$?
if [ "$1" = plan ]; then
  out=
  for arg in "$@"; do case $arg in -out=*) [ -n "$out" ] || out=\${arg#-out=} ;; esac; done
  printf '%s' "$out" >"$SWAP_RECORD"
  for arg in "$@"; do
    shift
    case $arg in -out=* | -detailed-exitcode) ;; *) set -- "$@" "$arg" ;; esac
  done
  terraform "$@" -destroy "-out=$out.swap" </dev/null >/dev/null 2>&1 || exit 99
fi
if [ "$1" = show ] && [ "$SWAP_AT" = show ]; then swap; fi
exit "$status"
`;

/** An applied base module, and a wrapper that swaps a destroy plan in as `at` and `how` say; the next apply only records a new image. */
async function swapScenario(t: TestContext, at: 'show' | 'apply', how: 'rename' | 'in-place') {
  const s = await base.applied(t);
  const ids = resourceIds(await s.readState());
  assert.ok(Object.keys(ids).length > 1, 'the module has resources a destroy would delete');
  const wrapper = join(s.dir, 'swapping-terraform.sh');
  await writeFile(wrapper, SWAPPING_TERRAFORM);
  await chmod(wrapper, 0o755);
  const record = join(s.dir, 'swap-record');
  // A new image: the classified plan only records the new inputs hash (not destructive, no approval needed).
  const run = await s.run('apply', ['--image', 'registry.example/m:2', '--terraform', wrapper], {
    SWAP_AT: at,
    SWAP_HOW: how,
    SWAP_RECORD: record,
  });
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
    for (const [address, id] of Object.entries(ids))
      if (address !== 'terraform_data.captf_inputs_hash')
        assert.equal(after[address], id, `${address} was destroyed or replaced`);
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

  it('unchanged: the apply reports the hash of the plan it classified and applied', async () => {
    const { run } = await base.first();
    assert.equal(run.exitCode, 0, explain(run));
    assert.match(run.result!.planHash!, /^[0-9a-f]{64}$/);
    const names = run.result!.steps.map((step) => step.name);
    assert.ok(
      names.indexOf('plan hash') < names.indexOf('show') && names.indexOf('plan check') < names.indexOf('apply'),
      names.join(', '),
    );
  });
});

/** Forwards to the real terraform (the plan file of descriptor 3 too); after `show` it leaves the file $FORGED_ERRORED_STATE as errored.tfstate in its working dir. */
const PLANTING_TERRAFORM = `#!/bin/sh
fd3=
for arg in "$@"; do [ "$arg" = /dev/fd/3 ] && fd3=1; done
[ -n "$fd3" ] || exec 3>&-
terraform "$@"
status=$?
if [ "$1" = show ]; then cp "$FORGED_ERRORED_STATE" errored.tfstate || exit 1; fi
exit "$status"
`;

describe('errored.tfstate', () => {
  it('one that appears in the workdir before the apply (code run at plan time) is removed, never pushed', async (t) => {
    const s = await base.applied(t);
    const forged = join(s.dir, 'forged.tfstate');
    await writeFile(forged, JSON.stringify({ ...(await s.readState()), serial: 1000, resources: [] }));
    const wrapper = join(s.dir, 'planting-terraform.sh');
    await writeFile(wrapper, PLANTING_TERRAFORM);
    await chmod(wrapper, 0o755);
    await s.useModule(modules.failingApply);

    const run = await s.run('apply', ['--image', 'registry.example/m:1', '--terraform', wrapper], {
      FORGED_ERRORED_STATE: forged,
    });
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.reason, 'ApplyFailed');
    assert.equal(run.result!.erroredState, undefined, JSON.stringify(run.result!.erroredState));
    const after = await s.readState();
    assert.ok(after.serial < 1000, `the planted state was pushed (serial ${after.serial})`);
    assert.ok(Object.keys(resourceIds(after)).includes('terraform_data.cluster'));
  });

  it('one the module ships is neither copied nor pushed nor kept when an apply fails', async (t) => {
    const s = await base.applied(t);
    // A forged state that would wipe every resource if it were pushed.
    const forged = { ...(await s.readState()), serial: 1000, resources: [] };
    await s.useModule({ ...modules.failingApply, 'errored.tfstate': JSON.stringify(forged) });

    const run = await s.run('apply', ['--image', 'registry.example/m:1']);
    assert.equal(run.exitCode, 1, explain(run));
    assert.equal(run.result!.reason, 'ApplyFailed');
    assert.equal(
      run.result!.erroredState,
      undefined,
      'terraform saved its state: there was nothing of its own to rescue',
    );
    assert.ok(!run.result!.warnings.some((w) => w.includes('errored.tfstate')), run.result!.warnings.join('\n'));
    const after = await s.readState();
    assert.ok(after.serial < 1000, `the forged state was pushed (serial ${after.serial})`);
    assert.ok(
      Object.keys(resourceIds(after)).includes('terraform_data.cluster'),
      'the resources are still in the state',
    );
  });
});
