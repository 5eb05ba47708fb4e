// One reconcile pass of a local object, as the controller makes it: observe, ask DecideOp, run the
// op it decides with the real runner, and act on the result the way the controller does after a
// Job (pin the durable inputs and the module, consume the approval); the apply's guard decided as the
// controller decides it (apply-guard.ts), and a pool's approval of a withdrawn or superseded change removed.
import { cp, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { canonicalJson, readInputs } from '../inputs/index.ts';
import { RunnerError, errorOf, usageError } from '../errors.ts';
import { isErrorReason } from '../vocabulary/reasons.ts';
import { consumesApproval } from '../controller-model/actions.ts';
import { decideOp } from '../controller-model/decide-op.ts';
import type { OpDecision } from '../controller-model/decision.ts';
import type { Snapshot } from '../controller-model/snapshot.ts';
import {
  createRunDir,
  deriveStatus,
  objectLineage,
  readHistory,
  readResult,
  runOutcome,
  type RunOutcome,
  writeRunRecord,
  type Run,
  type RunRecord,
} from './history.ts';
import {
  APPROVE_DESTRUCTIVE_PLAN,
  loadObject,
  openObject,
  removeObject,
  saveObject,
  type LocalObject,
  type LocalPaths,
} from './object.ts';
import { decisionLines, guardLines, resultLines, say, waitHintLines } from './print.ts';
import { applyGuard, partlyAppliedBy, staleApproval, type AppliedExports, type ApplyGuard } from './apply-guard.ts';
import { moduleEditedLines, moduleEditedSincePinned } from './module-change.ts';
import { acquireRunLock } from './run-lock.ts';
import { runRunnerProcess } from './runner-process.ts';
import { buildSnapshot, observeWorld } from './snapshot.ts';
import { LOCAL_RUN_FILES } from '../workspace/terraform-files.ts';

export interface ReconcileOptions {
  /** The controller's clock for this pass (the real time, or a later one to make checks due). */
  now: Date;
  verbose: boolean;
}

export async function reconcile(dir: string, options: ReconcileOptions): Promise<void> {
  const { paths, object } = await openObject(dir);
  const lock = await acquireRunLock(paths);
  try {
    const history = await readHistory(paths);
    const world = await observeWorld(object, paths, options.now, lock === undefined);
    if (lock && object.spec.kind === 'pool' && world.hashes)
      await dropStaleApproval(object, paths, history, world.hashes.approvalHash);
    const snapshot = buildSnapshot(object, history, world);
    const decision = decideOp(snapshot);
    const pinned = deriveStatus(history).lastSucceededApply;
    if (
      pinned?.image === object.spec.image &&
      !snapshot.object.deleting &&
      (await moduleEditedSincePinned(object.spec.module, paths.pinnedModule, NOT_MODULE_FILES))
    )
      say(...moduleEditedLines(object.spec.module, object.spec.image, paths.given));
    say(...decisionLines(decision));
    if (!lock) return; // another reconcile's run is in progress: DecideOp said JobActive
    switch (decision.kind) {
      case 'wait':
        say(...waitHintLines(decision, paths));
        return;
      case 'dropFinalizer':
        say(
          `the finalizer is dropped: the local object is gone (${(await removeObject(paths)) ? `${paths.given} removed but its state backups, kept in ${paths.backups}` : `${paths.given} removed`})`,
        );
        return;
      case 'op':
        await runDecidedOp({ object, paths, history, snapshot, decision }, options.verbose);
    }
  } finally {
    await lock?.release();
  }
}

interface Pass {
  object: LocalObject;
  paths: LocalPaths;
  history: readonly Run[];
  snapshot: Snapshot;
  decision: OpDecision;
}

/** Files the module dir may hold from the author's own terraform runs: never part of the "image". */
const NOT_MODULE_FILES: ReadonlySet<string> = new Set(LOCAL_RUN_FILES);

async function runDecidedOp(pass: Pass, verbose: boolean): Promise<void> {
  const { object, paths, history, decision } = pass;
  const run = await createRunDir(paths, history, decision.op);
  const pinned = deriveStatus(history).lastSucceededApply;
  const lineage = objectLineage(history);
  // The spec's image is the module dir as it is now; the pinned one is the module the last
  // successful apply ran, kept in pinned-module/ (a destroy tears down what that module built).
  const usesPinned = decision.image === 'pinned' && pinned !== undefined;
  const image = usesPinned ? pinned.image : object.spec.image;
  let module: string;
  let inputs: string;
  try {
    module = usesPinned
      ? await existingDir(paths.pinnedModule, 'the pinned module')
      : await copyModule(object.spec.module, join(run.dir, 'module'));
    inputs = await copyInputs(pass, join(run.dir, 'inputs'));
  } catch (error) {
    await rm(run.dir, { recursive: true, force: true }); // nothing ran: no run to keep
    throw error;
  }
  const rendered = decision.inputs === 'current' ? pass.snapshot.inputs.currentHash : null;
  const guard = decision.op === 'apply' ? await guardOf(pass, inputs) : undefined;
  const record: RunRecord = {
    id: run.id,
    decision,
    image,
    ...(rendered ? { inputsHash: rendered } : {}),
    // Kept so a later pass knows whether a failed apply was guarded (partlyAppliedBy).
    ...(guard ? { guard: guard.on ? 'on' : 'off' } : {}),
    startedAt: new Date().toISOString(),
  };
  await writeFile(join(run.dir, 'snapshot.json'), JSON.stringify(pass.snapshot, null, 2) + '\n');
  await writeRunRecord(run.dir, record);

  const args = [
    decision.op,
    '--module',
    module,
    '--inputs',
    inputs,
    '--image',
    image,
    '--kind',
    object.spec.kind,
    '--object',
    object.metadata.name,
    '--state',
    paths.stateFile,
    '--backups',
    paths.backups,
    '--out',
    run.dir,
    '--termination-log',
    join(run.dir, 'termination-log'),
    '--log-format',
    'pretty',
    // The approval is passed only when the annotation equals the rendered hash (decideOp said so).
    ...(decision.approvedInputsHash ? ['--approved-hash', decision.approvedInputsHash] : []),
    ...(guard ? ['--guard', guard.on ? 'on' : 'off'] : []),
    // Only the object's first apply starts its state: a state dir lost later is refused, never started afresh.
    ...(decision.op === 'apply' && pinned === undefined ? ['--new-state'] : []),
    // Once a result named the state's lineage, every op that plans refuses any other state (restore brings one back).
    ...(lineage !== undefined && decision.op !== 'restore' ? ['--expect-lineage', lineage] : []),
  ];
  if (guard) say(...guardLines(guard, paths));
  say(`run ${run.id}: captf-runner ${decision.op}`);
  const exitCode = await runRunnerProcess(args, { logFile: join(run.dir, 'runner.log'), verbose });
  const finished: Run = {
    record: { ...record, finishedAt: new Date().toISOString(), exitCode },
    dir: run.dir,
    result: await readResult(run.dir),
  };
  await writeRunRecord(run.dir, finished.record);

  say(...resultLines(finished, paths));
  const outcome = runOutcome(finished);
  if (decision.op === 'apply' && outcome === 'succeeded') await adoptSuccessfulApply(paths, finished, module, inputs);
  if (decision.op === 'apply') await spendApproval(paths, finished, outcome);
  // Exit 3 like the runner's own: a script sees that the pass waits for an approval.
  if (outcome === 'blocked')
    throw new RunnerError({
      kind: 'blocked',
      reason: 'DestructivePlanBlocked',
      message: `run ${run.id} (${decision.op}) is blocked: it applies nothing until approved`,
    });
  if (outcome !== 'succeeded') {
    // Recorded in the history like any Job; the exit status is the run's own (its reason's), so a script sees how the op failed.
    const reason = finished.result?.reason;
    throw errorOf(
      reason !== undefined && isErrorReason(reason) ? reason : 'RunnerFailed',
      `run ${run.id} (${decision.op}) ${outcome}: see ${join(run.dir, 'runner.log')}`,
    );
  }
}

/** The facts applyGuard decides on; only a pool's exports are read. */
async function guardOf({ object, paths, history }: Pass, inputs: string): Promise<ApplyGuard> {
  const { kind } = object.spec;
  const pool = kind === 'pool';
  return applyGuard({
    kind,
    currentExports: pool ? await exportsOf(inputs) : undefined,
    applied: pool ? await appliedExports(paths, history) : { status: 'none' },
    partlyAppliedBy: partlyAppliedBy(history),
  });
}

const CLUSTER_EXPORTS_VARIABLE = 'captf_cluster_outputs';

/** The exports of the last successful apply: its durable inputs, kept by adoptSuccessfulApply. */
async function appliedExports(paths: LocalPaths, history: readonly Run[]): Promise<AppliedExports> {
  if (deriveStatus(history).lastSucceededApply === undefined) return { status: 'none' };
  if (!(await isDir(paths.durableInputs))) return { status: 'unknown' };
  return { status: 'recorded', exports: await exportsOf(paths.durableInputs) };
}

async function exportsOf(inputsDir: string): Promise<string | undefined> {
  const value = (await readInputs(inputsDir)).variables.get(CLUSTER_EXPORTS_VARIABLE);
  return value === undefined ? undefined : canonicalJson(value);
}

/** A pool's approval of a change of its exports that was withdrawn or superseded is removed, as the controller does (staleApproval). */
async function dropStaleApproval(
  object: LocalObject,
  paths: LocalPaths,
  history: readonly Run[],
  currentApprovalHash: string,
): Promise<void> {
  const annotation = object.metadata.annotations[APPROVE_DESTRUCTIVE_PLAN];
  if (annotation === undefined || annotation === currentApprovalHash) return;
  const approvedRun = history.findLast((run) => run.result?.approvalHash === annotation);
  const stale = staleApproval({
    annotation,
    currentApprovalHash,
    currentExports: await exportsOf(paths.inputs),
    applied: await appliedExports(paths, history),
    approvedChange: approvedRun && (await renderedExports(approvedRun)),
  });
  if (stale === undefined || approvedRun === undefined) return;
  delete object.metadata.annotations[APPROVE_DESTRUCTIVE_PLAN];
  await saveObject(paths, object);
  say(
    `approval removed: ${APPROVE_DESTRUCTIVE_PLAN}=${annotation} (run ${approvedRun.record.id}) was for a change of captf_cluster_outputs that was ${stale === 'withdrawn' ? 'withdrawn: the exports are back to those of the last successful apply' : 'superseded by another change'}; if it comes back, it needs a fresh approval`,
  );
}

/** The exports a run rendered: its copy of the inputs; undefined when the run kept none. */
async function renderedExports(run: Run): Promise<{ exports: string | undefined } | undefined> {
  const inputs = join(run.dir, 'inputs');
  return (await isDir(inputs)) ? { exports: await exportsOf(inputs) } : undefined;
}

/** After a successful apply, as the controller does: its inputs become durable, its module pinned. */
async function adoptSuccessfulApply(paths: LocalPaths, run: Run, module: string, inputs: string): Promise<void> {
  await replaceDir(inputs, paths.durableInputs);
  await replaceDir(module, paths.pinnedModule);
  say(`  durable inputs and module pinned from run ${run.record.id}`);
}

/**
 * After an apply, the approval of its hash is spent as the controller spends it (consumesApproval): by a
 * success, and by a block whose notice says the approval was given for another state (ApprovalOfOtherState:
 * passed again, it would apply a plan nobody saw against this state). Removed from the object, so an
 * approval written again is a new one, given after seeing the new block.
 */
async function spendApproval(paths: LocalPaths, run: Run, outcome: RunOutcome): Promise<void> {
  const { result } = run;
  if (!result?.approvalHash) return;
  // Read again: the author may have edited the object while the apply ran.
  const object = await loadObject(paths);
  const approval = object.metadata.annotations[APPROVE_DESTRUCTIVE_PLAN];
  const notices = result.notices?.map((notice) => notice.code);
  if (!consumesApproval({ op: 'apply', reason: result.reason, approvalHash: result.approvalHash, notices }, approval))
    return;
  delete object.metadata.annotations[APPROVE_DESTRUCTIVE_PLAN];
  await saveObject(paths, object);
  say(
    outcome === 'succeeded'
      ? `  approval consumed: ${APPROVE_DESTRUCTIVE_PLAN} removed`
      : `  approval spent: ${APPROVE_DESTRUCTIVE_PLAN} removed: it was given for the state an earlier blocked run planned against, not this one; \`local approve\` approves this block`,
  );
}

/** The inputs the decision names, copied into the run dir: the record of exactly what the run rendered. */
async function copyInputs({ object, paths, decision }: Pass, into: string): Promise<string> {
  switch (decision.inputs) {
    case 'current':
      await cp(paths.inputs, into, { recursive: true });
      return into;
    case 'durable':
      if (await isDir(paths.durableInputs)) {
        await cp(paths.durableInputs, into, { recursive: true });
        return into;
      }
      // A destroy runs against the durable inputs; a cluster or pool that has none yet falls back to its current inputs, a machine never does.
      if (object.spec.kind === 'machine') {
        throw usageError(
          'DurableInputsMissing',
          `${paths.durableInputs} is missing: a machine never falls back to its current inputs; restore that dir from a run's inputs/ copy`,
        );
      }
      say('  no durable inputs yet: the current inputs stand in for them');
      await cp(paths.inputs, into, { recursive: true });
      return into;
    case 'none':
      throw new RunnerError({
        kind: 'internal',
        reason: 'RestoreNotLocal',
        message: 'the local lifecycle has no restore-state annotation, so DecideOp cannot decide a restore here',
      });
  }
}

async function copyModule(moduleDir: string, into: string): Promise<string> {
  await existingDir(moduleDir, 'the module dir (spec.module)');
  // Links stay as the author wrote them (cp would make relative ones absolute, into the spec's dir): the runner judges them as in an image.
  await cp(moduleDir, into, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => !NOT_MODULE_FILES.has(relative(moduleDir, source)),
  });
  return into;
}

async function replaceDir(from: string, to: string): Promise<void> {
  await rm(to, { recursive: true, force: true });
  await cp(from, to, { recursive: true, verbatimSymlinks: true });
}

async function isDir(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

async function existingDir(path: string, what: string): Promise<string> {
  if (!(await isDir(path)))
    throw usageError(
      'LocalDirMissing',
      `${what} ${path} does not exist: point the object at an existing dir (captf-runner local set --module DIR) or create the object again`,
    );
  return path;
}
