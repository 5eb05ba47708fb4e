// The state steps: reading it before and after an op; the backup before an op changes it is
// backup.ts, what a failed apply leaves (errored.tfstate, the record set back) state-recovery.ts.
// State must never be silently lost.
import { join } from 'node:path';
import type { OutputValue } from '../schemas/result.ts';
import { stringLeaves } from '../masking/mask.ts';
import { summarizeState, type StateSummary, type SummaryOptions } from '../state/summary.ts';
import { StateSecretScan, stateSecrets } from '../state/secrets.ts';
import { RunnerError } from '../errors.ts';
import { recordedLocalBackend } from '../terraform/backend.ts';
import { statePull } from '../terraform/state.ts';
import type { Terraform } from '../terraform/terraform.ts';
import {
  localStateFile,
  STATE_OUTSIDE_WORKDIR_FIX,
  stateFileSource,
  stateInWorkdir,
} from '../workspace/state-location.ts';
import type { PlanPriorState } from '../workspace/plan-prior-state.ts';
import type { Workspace } from '../workspace/workspace.ts';
import type { RunContext } from '../run/context.ts';
import type { Learned } from '../run/learned.ts';

/** tar and gzip load only when an artifact is written, after terraform has started: every Job pays for what loads before it. */
export const artifactWriter = () => import('../store/artifact-write.ts');

/** A pulled state: its summary and the private file holding it. */
export type PulledState = StateSummary & { file: string };

/** The state before the op, pulled: with what its read noted of its secrets (state/secrets.ts). */
export type PulledStateBefore = PulledState & { secrets: StateSecretScan };

/** Where a state step reads the state: the run's terraform, in its workspace. */
export interface StateStepOptions {
  tf: Terraform;
  workspace: Workspace;
}

/**
 * After init, before any state is read: a local backend must keep the state outside the workdir.
 * Everything there (the module copy above all, where a relative path lands) is removed or cleared
 * by the runner: a state kept there vanishes with the run, and every run would create everything
 * again. The module's backend is the module's problem (exit 4); a --state inside --workdir, the
 * caller's (exit 2).
 */
export async function refuseStateInWorkdir(
  tf: Terraform,
  workspace: Workspace,
  givenState: string | undefined,
): Promise<void> {
  const local = await recordedLocalBackend(tf);
  if (!local) return;
  const stateFile = localStateFile(local, local.workspace, tf.cwd);
  if (!(await stateInWorkdir(stateFile, workspace.dir))) return;
  const declaredIn = [...new Set(workspace.scan.backendBlocks.map((block) => block.file))];
  const detail = { stateFile, workdir: workspace.dir };
  if (givenState !== undefined)
    throw new RunnerError({
      kind: 'usage',
      reason: 'StateFileInWorkdir',
      message: `--state ${givenState} is inside the workdir ${workspace.dir}, which the runner removes or clears: the state would be lost with the run. Nothing was read or applied. Give --state a file outside --workdir.`,
      detail,
    });
  throw new RunnerError({
    kind: 'image',
    reason: 'StateInWorkdir',
    message:
      `the module's local backend${declaredIn.length ? ` (${declaredIn.join(', ')})` : ''} keeps the state at ${stateFile} (${stateFileSource(local, local.workspace)}), inside the runner's workdir ${workspace.dir}: ` +
      `the runner works on a copy of the module there and removes it at the end, so the state would vanish with the run and every run would create everything again. Nothing was read or applied. To fix it, ${STATE_OUTSIDE_WORKDIR_FIX}.`,
    detail,
  });
}

/**
 * `terraform state pull` of the state before the op, started at once and read by stateBeforeStep:
 * it runs beside validate, off the critical path. A pull that fails is reported by that step.
 */
export function pullStateBefore(
  tf: Terraform,
  workspace: Workspace,
  name = 'state-before.json',
): Promise<PulledStateBefore> {
  const secrets = new StateSecretScan();
  const pulling = pullState(tf, join(workspace.privateDir, name), { secrets }).then((state) => ({
    ...state,
    secrets,
  }));
  pulling.catch(() => {}); // awaited by stateBeforeStep, or settled before the workdir goes
  return pulling;
}

/** Where the state before the op comes from: `pulling`, the pull pullStateBefore started (else it is pulled now). */
interface StateBeforeOptions extends StateStepOptions {
  pulling?: Promise<PulledStateBefore>;
}

/**
 * The state before the op: serial, lineage and the inputs hash it records, in the result at once, so a
 * later failure still reports it. With `erroredStates` (the kept errored states the store holds, read
 * beside the pull): when there are any, the state is returned unchecked with their names, for
 * steps/errored-state.ts to push them first.
 */
export async function stateBeforeStep(
  ctx: RunContext,
  { tf, workspace, pulling, erroredStates }: StateBeforeOptions & { erroredStates?: Promise<string[]> },
): Promise<PulledStateBefore & { erroredStates?: string[] }> {
  try {
    return await ctx.step(
      'state before',
      async () => {
        const [state, kept] = await Promise.all([pulling ?? pullStateBefore(tf, workspace), erroredStates]);
        // The state is checked once the kept errored states are pushed (steps/errored-state.ts), and pulled again.
        if (kept?.length) return { ...state, erroredStates: kept };
        refuseOtherState(state, ctx.settings.expectLineage);
        await learnStateSecrets(ctx, state);
        return state;
      },
      { learned: (state) => stateLearned(state, state) },
    );
  } catch (error) {
    await pullSettled(ctx, pulling); // a step refused after a stop request: the pull writes into the workdir the op then removes
    throw error;
  }
}

/**
 * The state a saved plan was made against, pulled again: another run wrote the state after the state
 * before was pulled (it held the lock this run's plan waited for), and an apply of the plan replaces
 * that state, not the one pulled first. Checked and taught to the masker as the state before is;
 * what the result reports as the state before is this one.
 */
export async function stateReplacedStep(
  ctx: RunContext,
  {
    tf,
    workspace,
    first,
    planned,
  }: StateStepOptions & { first: StateSummary; planned: { serial: number; lineage: string } },
): Promise<PulledStateBefore> {
  ctx.warn(
    `the state changed between its pull (serial ${first.serial ?? 'none'}) and the plan, which was made against serial ${planned.serial} of lineage ${planned.lineage || 'none'} (another run held the lock the plan waited for): the state is pulled again, and the backup and state.serialBefore are of the state the apply replaces`,
  );
  return ctx.step(
    'state before',
    async () => {
      const state = await pullStateBefore(tf, workspace, 'state-replaced.json');
      refuseOtherState(state, ctx.settings.expectLineage);
      await learnStateSecrets(ctx, state);
      return state;
    },
    { learned: (state) => stateLearned(state, state) },
  );
}

/**
 * The state holds secrets no input names any more (an old value of a rotated secret): terraform's plan
 * prints them through derived attributes, so the masker learns them before anything of a plan is printed.
 */
export async function learnStateSecrets(
  ctx: RunContext,
  state: { file: string; secrets: StateSecretScan },
): Promise<void> {
  for (const { value, label } of await stateSecrets(state.file, state.secrets)) ctx.masker.add(value, label);
}

/**
 * The lineage of the state a pull found; null when there is none: no state at all, or the empty
 * state a pg backend holds before its first write (serial 0, lineage "").
 */
export const stateLineage = (state: Pick<StateSummary, 'serial' | 'lineage'>): string | null =>
  state.serial === null || !state.lineage ? null : state.lineage;

/** A plan file's header (workspace/plan-prior-state.ts) as a summary names the state: none (lineage "" and serial 0) is null. */
export const plannedState = (header: PlanPriorState): Pick<StateSummary, 'serial' | 'lineage'> =>
  header.lineage === '' ? { serial: null, lineage: null } : header;

/**
 * terraform's own check that a saved plan applies to a state (else "Saved plan is stale"): the same
 * lineage and serial, or no state for both. `planned`: the state the plan names (plannedState).
 */
export function isPlannedState(
  planned: Pick<StateSummary, 'serial' | 'lineage'>,
  found: Pick<StateSummary, 'serial' | 'lineage'>,
): boolean {
  const lineage = stateLineage(found);
  return lineage === stateLineage(planned) && (lineage === null || found.serial === planned.serial);
}

/**
 * --expect-lineage: the lineage of the object's state as its last result named it. A state of
 * another lineage (another object's: mixed-up backend settings, a restore --force of the wrong
 * backup) or none at all (a typo in the backend settings, a lost state) is refused before anything
 * plans against it: an apply would create everything again, a destroy would destroy nothing (or
 * another object's resources). What the backend holds is named in the error only, never in
 * result.state, which a controller takes the next expected lineage from.
 */
export function refuseOtherState(
  state: StateSummary,
  expected: string | undefined,
  { planned = false }: { planned?: boolean } = {},
): void {
  if (expected === undefined) return;
  const found = stateLineage(state);
  if (found === expected) return;
  const what =
    found === null
      ? `the backend holds no state, but the object's state has lineage ${expected} (--expect-lineage): the run was pointed at another place (a typo in --state or the backend settings), or the state was lost`
      : `the backend holds a state of lineage ${found}, not the object's (${expected}, --expect-lineage): another object's state (mixed-up backend settings, or a restore --force of the wrong backup)`;
  throw new RunnerError({
    kind: 'state',
    reason: 'StateLineageMismatch',
    message: `${what}. ${planned ? 'Nothing was shown, packed or applied (the saved plan, which changed nothing, was made against it and is discarded)' : 'Nothing was planned or applied'}, and every retry finds the same until a person acts: point the run at the object's own state (the backend settings), or restore a backup of lineage ${expected} (captf-runner restore); the retry after that fix passes.`,
    detail: { expectedLineage: expected, foundLineage: found, foundSerial: state.serial },
  });
}

/** Waits for an early pull to end (a stop request ends it), unless the run gives up on what its terraform left running. */
export async function pullSettled(ctx: RunContext, pulling: Promise<PulledState> | undefined): Promise<void> {
  if (!pulling) return;
  const giveUp = ctx.terraformStop.waitForGiveUp();
  try {
    await Promise.race([pulling.catch(() => undefined), giveUp.given.catch(() => undefined)]);
  } finally {
    giveUp.done();
  }
}

/**
 * The state the op left, reported against the state before it. `outputs`: after an apply, also its
 * outputs, read from this state as `terraform output -json` would read them (sensitive values taught
 * to the masker here, and kept out of the result: only the result Secret holds them).
 */
export interface StateAfterOptions extends StateStepOptions {
  /** The state before the op: what the result reports the state after against. */
  before: PulledState;
  /** Damage control after a failure: it runs even after a stop request. */
  cleanup?: boolean;
  outputs?: boolean;
}

export async function stateAfterStep(
  ctx: RunContext,
  options: StateAfterOptions,
): Promise<PulledState & { reported?: ReportedOutputs }> {
  const { tf, workspace, before } = options;
  return ctx.step(
    'state after',
    async () => {
      const after = await pullState(tf, join(workspace.privateDir, 'state-after.json'), { outputs: options.outputs });
      return { ...after, reported: options.outputs ? reportedOutputs(ctx, after.outputs ?? {}) : undefined };
    },
    {
      cleanup: options.cleanup,
      learned: ({ reported, ...after }) => ({ ...stateLearned(before, after), ...reported }),
    },
  );
}

/** Each output as the result reports it (never a sensitive value) and the sensitive ones with their values, for the result Secret alone. */
type ReportedOutputs = { outputs: Record<string, OutputValue>; sensitiveOutputs: Record<string, OutputValue> };

function reportedOutputs(ctx: RunContext, stateOutputs: Record<string, unknown>): ReportedOutputs {
  const outputs: Record<string, OutputValue> = {};
  const sensitiveOutputs: Record<string, OutputValue> = {};
  for (const [name, held] of Object.entries(stateOutputs)) {
    const o = (typeof held === 'object' && held !== null ? held : {}) as {
      value?: unknown;
      type?: unknown;
      sensitive?: unknown;
    };
    const known = o.value !== undefined;
    if (o.sensitive === true) {
      for (const leaf of stringLeaves(o.value)) ctx.masker.add(leaf, `sensitive output ${name}`);
      sensitiveOutputs[name] = { sensitive: true, known, type: o.type, value: o.value };
      outputs[name] = { sensitive: true, known, type: o.type };
    } else outputs[name] = { sensitive: false, known, type: o.type, value: o.value };
  }
  return { outputs, sensitiveOutputs };
}

/** What the result reports of a state read against the state before the op. */
export const stateLearned = (before: StateSummary, after: StateSummary): Learned => ({
  state: { serialBefore: before.serial, serialAfter: after.serial, lineage: after.lineage },
  stateInputsHash: after.recordedInputsHash,
});

/** The state pulled into `file`, summarized as it streams (SummaryOptions: its outputs, what its secrets need). */
export async function pullState(tf: Terraform, file: string, options: SummaryOptions = {}): Promise<PulledState> {
  const { read } = await statePull(tf, file, (state) => summarizeState(state, options));
  return { ...read, file };
}
