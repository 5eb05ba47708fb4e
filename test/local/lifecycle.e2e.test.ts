// The local lifecycle end to end, as the README (A module's lifecycle on your laptop) walks it: the built runner
// (dist/captf-runner.mjs), the real terraform, a module of terraform_data in a temp dir. Each stage
// checks the state file, not only what the commands print.
import { after, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { access, cp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  modules,
  readLocalState,
  resourceIds,
  tempDir,
  writeTree,
  type TerraformState,
} from '../support/tf-modules.ts';
import { recordedInputsHash } from '../support/runner.ts';
import { assertPrinted, explainPrinted, local, localWithInput } from './local.support.ts';

/** The module releases the README's walk-through copies: examples/local in the repository. */
const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples', 'local');

/** A working dir where `local init` made an object of modules.base and its first reconcile applied it: made once per file. */
let firstApplied: Promise<string> | undefined;
after(async () => {
  if (firstApplied) await rm(await firstApplied, { recursive: true, force: true });
});
/**
 * A copy of that working dir (the same start as an init and a first apply in each test, one real
 * apply instead of one per test). The object records its module's absolute path, so the copy's
 * object is pointed at the copy's module (`local set --module`, as a person moving the dir would).
 */
async function initAndApplied(t: TestContext): Promise<string> {
  firstApplied ??= (async () => {
    const cwd = await tempDir(undefined, 'captf-local-');
    await writeTree(join(cwd, 'module'), modules.base);
    assertPrinted(await local(cwd, 'init', '--module', 'module', '--image', 'example/demo:1.0.0'));
    await assert.rejects(
      access(join(cwd, '.captf-local', 'state')),
      'local init makes no state dir: the first apply starts it',
    );
    assertPrinted(await local(cwd, 'reconcile'), /^run 0001-apply: succeeded \(ApplySucceeded\)$/m);
    return cwd;
  })();
  const cwd = await tempDir(t, 'captf-local-');
  await cp(await firstApplied, cwd, { recursive: true });
  assertPrinted(await local(cwd, 'set', '--module', 'module'), /^inputs hash unchanged: /m);
  return cwd;
}

describe('local: a module lifecycle on a laptop', () => {
  it('first apply, a blocked destructive change, approval, drift found and remediated, delete', async (t) => {
    const cwd = await tempDir(t, 'captf-local-');
    const moduleDir = join(cwd, 'module');
    const objectDir = join(cwd, '.captf-local');
    const stateFile = join(objectDir, 'state', 'terraform.tfstate');
    const readState = () => readLocalState(stateFile);
    const runIds = () => readdir(join(objectDir, 'runs'));
    const annotations = async () =>
      JSON.parse(await readFile(join(objectDir, 'object.json'), 'utf8')).metadata.annotations as Record<string, string>;
    // The README's module releases, as the repository ships them.
    await cp(join(EXAMPLES, 'module-1.0.0'), moduleDir, { recursive: true });

    // Create the object and set an input.
    assertPrinted(
      await local(cwd, 'init', '--module', 'module', '--image', 'example/demo:1.0.0', '--drift-action', 'Remediate'),
      /^created cluster module in \.captf-local/m,
    );
    assertPrinted(await local(cwd, 'set', 'cluster_name=demo'), /^inputs hash: [0-9a-f]{64} \(was [0-9a-f]{64}\)$/m);
    // A negative zero is refused: terraform would render it apart from 0 under one inputs hash.
    const negativeZero = await local(cwd, 'set', 'generation=-0.0');
    assert.equal(negativeZero.exitCode, 2, explainPrinted(negativeZero));
    assert.match(negativeZero.stderr, /generation=-0\.0 holds a negative zero \(-0\.0\).*write 0/);
    await assert.rejects(access(stateFile), 'no state before the first reconcile');

    // First apply.
    const first = await local(cwd, 'reconcile');
    assertPrinted(
      first,
      /^decision: apply \(NoState\), current inputs, spec image$/m,
      /^run 0001-apply: succeeded \(ApplySucceeded\)$/m,
      /durable inputs and module pinned/,
    );
    const applied = await readState();
    const firstResult = JSON.parse(await readFile(join(objectDir, 'runs', '0001-apply', 'result.json'), 'utf8'));
    assert.equal(recordedInputsHash(applied), firstResult.inputsHash);
    assert.ok(resourceIds(applied)['terraform_data.cluster']);
    assert.deepEqual(JSON.parse(await readFile(join(objectDir, 'durable-inputs', 'terraform.tfvars.json'), 'utf8')), {
      cluster_name: 'demo',
    });
    assertPrinted(await local(cwd, 'reconcile'), /^decision: wait \(UpToDate\), requeue in \d+s$/m);

    // A new module release replaces terraform_data.cluster: blocked, nothing applied.
    await cp(join(EXAMPLES, 'module-1.1.0'), moduleDir, { recursive: true, force: true });
    assertPrinted(await local(cwd, 'set', '--image', 'example/demo:1.1.0'), /^inputs hash: /m);
    const blocked = await local(cwd, 'reconcile');
    assert.equal(blocked.exitCode, 3, `a blocked reconcile exits 3\n${explainPrinted(blocked)}`);
    for (const pattern of [
      /^decision: apply \(InputsChanged\)/m,
      /^run 0002-apply: blocked \(DestructivePlanBlocked\)$/m,
      /^ {2}destructive: terraform_data\.cluster \(replace\)$/m,
    ])
      assert.match(blocked.stdout, pattern, explainPrinted(blocked));
    assert.match(blocked.stderr, /run 0002-apply \(apply\) is blocked: it applies nothing until approved/);
    const afterBlock = await readState();
    assert.equal(afterBlock.serial, applied.serial, 'a blocked apply leaves the state untouched');
    assert.deepEqual(resourceIds(afterBlock), resourceIds(applied));
    const blockedHash = JSON.parse(await readFile(join(objectDir, 'runs', '0002-apply', 'result.json'), 'utf8'))
      .approvalHash as string;

    // Until approved, the apply waits and no run starts.
    assertPrinted(
      await local(cwd, 'reconcile'),
      /^decision: wait \(DestructivePlanApprovalPending\), requeue in 600s; holds back apply \(InputsChanged\)$/m,
    );
    assert.deepEqual(await runIds(), ['0001-apply', '0002-apply']);

    // Approve; the next reconcile applies the replace and consumes the approval.
    assertPrinted(
      await local(cwd, 'approve'),
      new RegExp(
        `^approved: captf.io/approve-destructive-plan=${blockedHash} \\(the apply blocked in run 0002-apply\\)$`,
        'm',
      ),
      /^it approves what the blocked run showed:\n {2}plan: 0 to create, 0 to update, 1 to replace.*\n {2}destructive: terraform_data\.cluster \(replace\)$/m,
      new RegExp(
        `^ {2}the approval names approval hash ${blockedHash} \\(these inputs and image\\), not this plan`,
        'm',
      ),
    );
    assert.equal((await annotations())['captf.io/approve-destructive-plan'], blockedHash);
    assertPrinted(
      await local(cwd, 'reconcile'),
      new RegExp(`^ {2}approved: inputs hash ${blockedHash}$`, 'm'),
      /^run 0003-apply: succeeded \(ApplySucceeded\)$/m,
      /approval consumed/,
    );
    const replaced = await readState();
    assert.notEqual(resourceIds(replaced)['terraform_data.cluster'], resourceIds(applied)['terraform_data.cluster']);
    assert.equal(resourceIds(replaced)['terraform_data.network'], resourceIds(applied)['terraform_data.network']);
    assert.equal(recordedInputsHash(replaced), blockedHash);
    assert.deepEqual(await annotations(), {});

    // Drift: the network changed behind terraform's back. A drift check made due finds it.
    await writeFile(stateFile, JSON.stringify(withNetworkInput(replaced, '10.9.0.0/16'), null, 2));
    const drift = await local(cwd, 'reconcile', '--now', '+2h');
    assertPrinted(
      drift,
      /^decision: drift \(DriftDue\), current inputs, pinned image$/m,
      /^run 0004-drift: succeeded \(DriftFound\)$/m,
      /a remediation apply would do: 0 to create, 1 to update/,
      /Drift found: nothing was reported changed outside terraform; the inputs differ from the state \(1: [^)]*\): terraform_data\.network \(update\)/,
    );
    assert.equal(networkInput(await readState()), '10.9.0.0/16', 'a drift check changes nothing');

    // Remediate: the next reconcile applies the inputs again.
    assertPrinted(
      await local(cwd, 'reconcile'),
      /^decision: apply \(DriftRemediation\)/m,
      /^run 0005-apply: succeeded \(ApplySucceeded\)$/m,
    );
    const remediated = await readState();
    assert.equal(networkInput(remediated), '10.0.0.0/16');
    assert.equal(recordedInputsHash(remediated), blockedHash);
    assertPrinted(await local(cwd, 'reconcile'), /^decision: wait \(UpToDate\)/m);

    const status = await local(cwd, 'status');
    assertPrinted(
      status,
      /^state: present, inputs hash /m,
      /^ {2}last drift check: drift found at /m,
      /^ {2}0005-apply {2}DriftRemediation {2}succeeded \(ApplySucceeded\)$/m,
      /^next decision: wait \(UpToDate\)/m,
    );

    // Delete: destroy with the durable inputs and the pinned module, then drop the finalizer.
    assertPrinted(await local(cwd, 'delete'), /^deletion requested at /m);
    assertPrinted(
      await local(cwd, 'reconcile'),
      /^decision: destroy \(Deleting\), durable inputs, pinned image$/m,
      /^run 0006-destroy: succeeded \(DestroySucceeded\)$/m,
    );
    assert.deepEqual((await readState()).resources, [], 'the destroy leaves an empty state');
    assertPrinted(
      await local(cwd, 'reconcile'),
      /^decision: drop the finalizer \(DeletingWithoutState\)$/m,
      /^the finalizer is dropped: the local object is gone \(\.captf-local removed but its state backups, kept in \S+\/\.captf-local\/backups\)$/m,
    );
    assert.deepEqual(
      await readdir(objectDir),
      ['backups'],
      'dropping the finalizer removes the object, not its state backups',
    );
    assert.ok((await readdir(join(objectDir, 'backups'))).length > 0);
  });

  it("the repository's examples/module: a missing secret fails with exit 2, set --sensitive from stdin fixes it, and the changed inputs apply at once (no backoff)", async (t) => {
    const cwd = await tempDir(t, 'captf-local-');
    const example = join(import.meta.dirname, '..', '..', 'examples', 'module');
    assertPrinted(await local(cwd, 'init', '--module', example, '--image', 'example/demo:1.0.0'));
    assertPrinted(await local(cwd, 'set', 'cluster_name=demo'));
    const missing = await local(cwd, 'reconcile');
    assert.equal(missing.exitCode, 2, `the pass exits with its run's code (InputsInvalid): ${explainPrinted(missing)}`);
    assert.match(missing.stdout, /^run 0001-apply: invalid \(InputsInvalid\)$/m, explainPrinted(missing));
    const secret = 'tok-7f3a9c1e5b2d4806';
    const refused = await local(cwd, 'set', '--sensitive', 'admin_token');
    assert.equal(refused.exitCode, 2, explainPrinted(refused));
    assert.match(refused.stderr, /no value for admin_token on stdin/);
    assertPrinted(
      await localWithInput(cwd, `${secret}\n`, 'set', '--sensitive', 'admin_token'),
      /^inputs hash: \S+ \(was /m,
    );
    const sensitive = join(cwd, '.captf-local', 'inputs', 'sensitive.tfvars.json');
    assert.deepEqual(JSON.parse(await readFile(sensitive, 'utf8')), { admin_token: secret });
    const fixed = await local(cwd, 'reconcile');
    assertPrinted(fixed, /^decision: apply \(NoState\)/m, /^run 0002-apply: succeeded \(ApplySucceeded\)$/m);
    assert.ok(!fixed.stdout.includes(secret) && !fixed.stderr.includes(secret), 'the secret is never printed');
    assert.ok(
      resourceIds(await readLocalState(join(cwd, '.captf-local', 'state', 'terraform.tfstate')))[
        'terraform_data.control_plane'
      ],
    );
  });

  it('only the first apply starts the state (--new-state): a state dir lost later is refused, not started afresh', async (t) => {
    const cwd = await initAndApplied(t);
    const stateDir = join(cwd, '.captf-local', 'state');
    assert.ok(resourceIds(await readLocalState(join(stateDir, 'terraform.tfstate')))['terraform_data.cluster']);

    await rm(stateDir, { recursive: true });
    const lost = await local(cwd, 'reconcile');
    assert.equal(lost.exitCode, 2, `the pass exits with its run's exit code: ${explainPrinted(lost)}`);
    assert.match(lost.stdout, /^run 0002-apply: invalid \(StateDirMissing\)$/m, explainPrinted(lost));
    await assert.rejects(access(stateDir), 'no second, empty state was started');
  });

  it("once a result named the state's lineage, every run passes it (--expect-lineage): a state of another lineage in its place is refused (exit 7), never applied over", async (t) => {
    const cwd = await initAndApplied(t);
    const stateFile = join(cwd, '.captf-local', 'state', 'terraform.tfstate');
    const other = JSON.stringify({
      ...(await readLocalState(stateFile)),
      lineage: '0badc0de-0000-4000-8000-000000000000',
    });
    await writeFile(stateFile, other);
    assertPrinted(await local(cwd, 'set', '--image', 'example/demo:1.1.0'));
    const refused = await local(cwd, 'reconcile');
    assert.notEqual(refused.exitCode, 0, explainPrinted(refused));
    assert.match(refused.stdout, /^run 0002-apply: failed \(StateLineageMismatch\)$/m, explainPrinted(refused));
    assert.equal(await readFile(stateFile, 'utf8'), other, 'the other state was not applied over');
  });

  it('an approval given for another state is spent by the block that says so (ApprovalOfOtherState), never passed again: approved anew, it applies', async (t) => {
    const cwd = await tempDir(t, 'captf-local-');
    const moduleDir = join(cwd, 'module');
    const objectDir = join(cwd, '.captf-local');
    const stateFile = join(objectDir, 'state', 'terraform.tfstate');
    const approval = async () =>
      JSON.parse(await readFile(join(objectDir, 'object.json'), 'utf8')).metadata.annotations[
        'captf.io/approve-destructive-plan'
      ] as string | undefined;
    await cp(join(EXAMPLES, 'module-1.0.0'), moduleDir, { recursive: true });
    assertPrinted(await local(cwd, 'init', '--module', 'module', '--image', 'example/demo:1.0.0'));
    assertPrinted(await local(cwd, 'set', 'cluster_name=demo'));
    assertPrinted(await local(cwd, 'reconcile'), /^run 0001-apply: succeeded \(ApplySucceeded\)$/m);
    await cp(join(EXAMPLES, 'module-1.1.0'), moduleDir, { recursive: true, force: true });
    assertPrinted(await local(cwd, 'set', '--image', 'example/demo:1.1.0'));
    const blocked = await local(cwd, 'reconcile');
    assert.match(blocked.stdout, /^run 0002-apply: blocked \(DestructivePlanBlocked\)$/m, explainPrinted(blocked));

    // Another object's state in its place, and the history naming its lineage, as a restore of the wrong
    // backup leaves them: the blocked run planned against the first state, not this one.
    const other = '0badc0de-0000-4000-8000-000000000000';
    const swapped = JSON.stringify({ ...(await readLocalState(stateFile)), lineage: other });
    await writeFile(stateFile, swapped);
    const blockedResult = join(objectDir, 'runs', '0002-apply', 'result.json');
    const result = JSON.parse(await readFile(blockedResult, 'utf8'));
    await writeFile(blockedResult, JSON.stringify({ ...result, state: { ...result.state, lineage: other } }));

    assertPrinted(await local(cwd, 'approve'));
    assert.equal(await approval(), result.approvalHash);
    const reblocked = await local(cwd, 'reconcile');
    assert.equal(reblocked.exitCode, 3, explainPrinted(reblocked));
    for (const pattern of [
      new RegExp(`^ {2}approved: inputs hash ${result.approvalHash}$`, 'm'),
      /^run 0003-apply: blocked \(DestructivePlanBlocked\)$/m,
      /^ {2}approval spent: captf\.io\/approve-destructive-plan removed: it was given for the state an earlier blocked run planned against, not this one/m,
    ])
      assert.match(reblocked.stdout, pattern, explainPrinted(reblocked));
    const reblockedResult = JSON.parse(await readFile(join(objectDir, 'runs', '0003-apply', 'result.json'), 'utf8'));
    assert.ok(
      reblockedResult.notices.some((notice: { code: string }) => notice.code === 'ApprovalOfOtherState'),
      JSON.stringify(reblockedResult.notices),
    );
    assert.equal(await approval(), undefined, 'the spent approval is removed');
    assert.equal(await readFile(stateFile, 'utf8'), swapped, 'nothing applied to the other state');

    // Not passed again: the apply waits for an approval of this block, and no run starts.
    assertPrinted(await local(cwd, 'reconcile'), /^decision: wait \(DestructivePlanApprovalPending\)/m);
    assert.deepEqual(await readdir(join(objectDir, 'runs')), ['0001-apply', '0002-apply', '0003-apply']);
    // Approved anew, after the block against this state: it applies.
    assertPrinted(await local(cwd, 'approve'));
    assertPrinted(
      await local(cwd, 'reconcile'),
      /^run 0004-apply: succeeded \(ApplySucceeded\)$/m,
      /^ {2}approval consumed: captf\.io\/approve-destructive-plan removed$/m,
    );
    assert.equal((await readLocalState(stateFile)).lineage, other);
  });

  it('a module with a relative link inside it applies: the run keeps the link as written, the runner copies its content', async (t) => {
    const cwd = await tempDir(t, 'captf-local-');
    await writeTree(join(cwd, 'module'), {
      ...modules.base,
      'main.tf': '',
      'shared/main.tf': modules.base['main.tf']!,
    });
    await rm(join(cwd, 'module', 'main.tf'));
    await symlink('shared/main.tf', join(cwd, 'module', 'main.tf'));
    assertPrinted(await local(cwd, 'init', '--module', 'module', '--image', 'example/demo:1.0.0'));
    assertPrinted(await local(cwd, 'reconcile'), /^run 0001-apply: succeeded \(ApplySucceeded\)$/m);
    assert.ok(
      resourceIds(await readLocalState(join(cwd, '.captf-local', 'state', 'terraform.tfstate')))[
        'terraform_data.cluster'
      ],
    );
  });

  it('a module edited without a new --image: the pass says a cluster would not notice; a new image makes the apply due', async (t) => {
    const cwd = await initAndApplied(t);
    const moduleDir = join(cwd, 'module');
    const quiet = await local(cwd, 'reconcile');
    assertPrinted(quiet, /^decision: wait \(UpToDate\)/m);
    assert.doesNotMatch(quiet.stdout, /would not notice/, 'the module as applied: nothing to say');

    await writeTree(moduleDir, modules.update);
    const edited = await local(cwd, 'reconcile');
    assertPrinted(
      edited,
      /^the module \S+\/module changed since the last successful apply, but the image reference did not \(example\/demo:1\.0\.0\):\n {2}a cluster would not notice/m,
      /captf-runner local set --dir \.captf-local --image <new reference>/,
      /^decision: wait \(UpToDate\)/m,
    );
    assertPrinted(await local(cwd, 'set', '--image', 'example/demo:1.1.0'));
    const released = await local(cwd, 'reconcile');
    assertPrinted(released, /^decision: apply \(InputsChanged\)/m, /^run 0002-apply: succeeded/m);
    assert.doesNotMatch(released.stdout, /would not notice/);
  });

  it('refuses to approve when nothing is blocked, a --module that is not there, and says how to create a missing object', async (t) => {
    const cwd = await tempDir(t, 'captf-local-');
    const missing = await local(cwd, 'status');
    assert.equal(missing.exitCode, 2, explainPrinted(missing));
    assert.match(missing.stderr, /there is no local object in \.captf-local: create one with captf-runner local init/);
    const typo = await local(cwd, 'init', '--module', './nope', '--image', 'example/demo:1.0.0');
    assert.equal(typo.exitCode, 2, explainPrinted(typo));
    assert.match(typo.stderr, /--module \.\/nope does not exist: give the module dir/);
    await assert.rejects(access(join(cwd, '.captf-local')), 'nothing created');
    await writeTree(join(cwd, 'module'), modules.base);
    assertPrinted(await local(cwd, 'init', '--module', 'module', '--image', 'example/demo:1.0.0'));
    const moved = await local(cwd, 'set', '--module', 'module/main.tf', 'cluster_name=other');
    assert.equal(moved.exitCode, 2, explainPrinted(moved));
    assert.match(moved.stderr, /--module module\/main\.tf is no directory/);
    assert.doesNotMatch(
      await readFile(join(cwd, '.captf-local', 'inputs', 'terraform.tfvars.json'), 'utf8').catch(() => ''),
      /other/,
      'the refused set changed nothing',
    );
    const approve = await local(cwd, 'approve');
    assert.equal(approve.exitCode, 2, explainPrinted(approve));
    assert.match(approve.stderr, /no apply of \.captf-local is blocked/);
  });
});

type Attributes = Record<string, unknown>;

function networkInstance(state: TerraformState): Attributes {
  return state.resources.find((resource) => resource.type === 'terraform_data' && resource.name === 'network')!
    .instances[0]!.attributes;
}

const networkInput = (state: TerraformState) => (networkInstance(state).input as { value: string }).value;

/** The state with terraform_data.network's input and output rewritten, as a change outside terraform would. */
function withNetworkInput(state: TerraformState, cidr: string): TerraformState {
  const copy = structuredClone(state);
  const attributes = networkInstance(copy);
  attributes.input = { value: cidr, type: 'string' };
  attributes.output = { value: cidr, type: 'string' };
  return copy;
}
