// The apply steps (backup, plan check, apply) and applySavedPlan, the sequence that applies a saved
// plan that was classified or approved. Each step takes the run context and one options object;
// the backup is a state step (state.ts: restore takes one too).
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { OutputValue } from '../schemas/result.ts';
import { RunnerError } from '../errors.ts';
import { apply as terraformApply, type ApplyFailure, type ApplyOptions } from '../terraform/apply.ts';
import { TerraformFailed } from '../terraform/terraform.ts';
import type { HeldPlanFile } from '../workspace/plan-file.ts';
import { ERRORED_STATE_FILE } from '../workspace/terraform-files.ts';
import type { RunContext } from '../run/context.ts';
import { heldPlan, removePlanFile } from './plan.ts';
import type { PreparedRoot } from './prepare.ts';
import { backupStep } from './backup.ts';
import { isPlannedState, plannedState, stateAfterStep, stateReplacedStep, type PulledState } from './state.ts';
import { stateAfterFailure } from './state-recovery.ts';
import { planPriorState, type PlanPriorState } from '../workspace/plan-prior-state.ts';
import type { Classification } from '../schemas/classification.ts';
import { clearApplyMarker, writeApplyMarker } from './apply-marker.ts';

interface ApplyStepOptions {
  /** What a failed apply is called for the op (ApplyFailed, RefreshFailed, DestroyFailed). */
  failureReason?: ApplyFailure;
  /**
   * What a stale saved plan (refused by terraform before it changed anything) means; without it, an
   * ordinary failure of the apply. Called in the apply step: what it keeps (ctx.keep) is terraform's later word.
   */
  onStalePlan?: (stale: TerraformFailed) => RunnerError;
}

export interface ApplySavedPlanOptions extends ApplyStepOptions {
  root: PreparedRoot;
  /** The state the plan was made against (stateBeforeStep). */
  before: PulledState;
  /** The sha256 of the plan that was classified or approved: the plan file must still have it. */
  planHash: string;
  /** The plan's classification: the addresses it creates or replaces go into the apply marker (apply-marker.ts). */
  plan: Pick<Classification, 'changes' | 'changesTotal'>;
  backup?: boolean;
  /**
   * `before` was pulled after the plan was made (apply --plan-artifact; a guarded apply, whose
   * stateToReplaceStep checked it is the state the plan names): a plan made against another state is
   * stale, terraform refuses it, and no pull finds the state it was made against.
   */
  pulledAfterPlan?: boolean;
}

/** What an apply left: its outputs and the state after it. */
export interface Applied {
  outputs: Record<string, OutputValue>;
  after: PulledState;
}

/**
 * Backup, then apply the saved plan (see applyStep) once its sha256 is still `planHash`, the
 * plan that was classified or approved. The plan file does not outlive the apply.
 */
export async function applySavedPlan(ctx: RunContext, options: ApplySavedPlanOptions): Promise<Applied> {
  const { root, planHash } = options;
  const before = options.pulledAfterPlan ? options.before : await stateThePlanReplaces(ctx, root, options.before);
  if (options.backup !== false)
    await backupStep(ctx, {
      before,
      inputsHash: root.inputs.hashes.inputsHash,
      terraformVersion: root.version.version,
    });
  try {
    const planFile = await planCheckStep(ctx, { workspace: root.workspace, planHash });
    return await applyStep(ctx, {
      ...options,
      before,
      apply: { planFile, lockTimeout: ctx.settings.lockTimeout, varFiles: root.workspace.applyVarFiles },
    });
  } finally {
    await removePlanFile(root.workspace);
  }
}

/**
 * The state an apply of the saved plan replaces: terraform applies it only to the state of the lineage
 * and serial its plan file records (workspace/plan-prior-state.ts). That is the state pulled before
 * the plan unless another run wrote the state in between: then it is pulled again (stateReplacedStep).
 * A plan file that is no zip (an encrypted plan) says nothing: the state pulled before stands.
 */
async function stateThePlanReplaces(ctx: RunContext, root: PreparedRoot, before: PulledState): Promise<PulledState> {
  let planned: PlanPriorState | 'notZip';
  try {
    planned = await planPriorState(heldPlan(root.workspace));
  } catch (error) {
    if (error instanceof RunnerError) throw error;
    ctx.warn(
      `could not read the state the saved plan was made against from the plan file (${(error as Error).message}): the backup and state.serialBefore are of the state pulled before the plan`,
    );
    return before;
  }
  if (planned === 'notZip' || isPlannedState(plannedState(planned), before)) return before;
  const replaced = await stateReplacedStep(ctx, { tf: root.tf, workspace: root.workspace, first: before, planned });
  if (!isPlannedState(plannedState(planned), replaced))
    ctx.log.info(
      { planned, found: { serial: replaced.serial, lineage: replaced.lineage } },
      'the state changed again after the plan: terraform refuses the stale plan',
    );
  return replaced;
}

/** Just before apply, through the open file terraform will read: a plan written in place since it was hashed is refused. */
async function planCheckStep(
  ctx: RunContext,
  { workspace, planHash }: { workspace: PreparedRoot['workspace']; planHash: string },
): Promise<HeldPlanFile> {
  return ctx.step('plan check', async () => {
    const held = heldPlan(workspace);
    const now = await held.sha256();
    if (now !== planHash)
      throw new RunnerError({
        kind: 'plan',
        reason: 'PlanFileChanged',
        message: `the saved plan file changed after it was classified (sha256 ${planHash}, now ${now}): something else writes to the workdir. Nothing was applied. Give the runner a workdir only it can write (an emptyDir volume) and run again.`,
        detail: { classified: planHash, found: now },
      });
    return held;
  });
}

interface ApplyStepRunOptions extends ApplyStepOptions {
  root: PreparedRoot;
  before: PulledState;
  apply: ApplyOptions;
  planHash: string;
  plan: ApplySavedPlanOptions['plan'];
}

/**
 * terraform apply of a saved plan, then the outputs and the state it left. A failed
 * apply still saves what terraform could not (errored.tfstate) and reports what the state holds.
 */
async function applyStep(
  ctx: RunContext,
  { root, before, apply, failureReason, onStalePlan, planHash, plan }: ApplyStepRunOptions,
): Promise<Applied> {
  const { tf, workspace } = root;
  // Only an errored.tfstate this apply writes is terraform's unsaved state (code run at plan time could leave one).
  await rm(join(workspace.root, ERRORED_STATE_FILE), { force: true });
  const { applied = false, mayHaveChanged = false } = ctx.learned();
  // Deleted however the apply ends that the runner sees, unless terraform itself was killed: only a killed apply leaves the marker.
  const marker = await writeApplyMarker(ctx, { planHash, plan });
  try {
    await ctx.step(
      'apply',
      async () => {
        // As terraform's apply process starts, not before: a stop before it (during the backup, the plan check) applies nothing.
        const onStart = () => ctx.keep({ applied: true, mayHaveChanged: true });
        const applied = await terraformApply(tf, apply, { failureReason, onStart });
        if (applied.outcome === 'stalePlan') throw onStalePlan?.(applied.failure) ?? applied.failure;
        return applied;
      },
      { exitCode: (r) => r.exitCode },
    );
    if (marker) await clearApplyMarker(ctx, marker);
  } catch (error) {
    // terraform killed by a signal (the stop's last stage, an OOM kill) saved nothing since its last save: the marker stays for the next run.
    if (marker && error instanceof TerraformFailed && error.signal !== undefined)
      ctx.warn(
        `terraform apply was killed (${error.signal}) and saved nothing since its last save: the apply marker ${marker} stays, and the next run of the object reports what may exist outside the state`,
      );
    else if (marker) await clearApplyMarker(ctx, marker);
    // terraform waited for the lock and gave up before it read the state: this apply changed nothing.
    if ((error as RunnerError).reason === 'StateLocked') ctx.keep({ applied, mayHaveChanged });
    await stateAfterFailure(ctx, { tf, workspace, before });
    throw error;
  }
  // The apply is done: the state it left, and its outputs from that state, are read even if a stop came meanwhile.
  const after = await stateAfterStep(ctx, { tf, workspace, before, cleanup: true, outputs: true });
  return { outputs: after.reported?.outputs ?? {}, after };
}
