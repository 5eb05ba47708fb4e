// The state steps: reading it before and after an op, and saving what terraform could not
// (errored.tfstate); the backup before an op changes it is backup.ts. State must never be silently lost.
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { OutputValue, Result } from '../schemas/result.ts';
import { stringLeaves } from '../masking/mask.ts';
import { summarizeState, type StateSummary, type SummaryOptions } from '../state/summary.ts';
import { StateSecretScan, stateSecrets } from '../state/secrets.ts';
import { RunnerError } from '../errors.ts';
import { recordedLocalBackend } from '../terraform/backend.ts';
import { statePull, statePush } from '../terraform/state.ts';
import type { Terraform } from '../terraform/terraform.ts';
import { timeStamp } from '../util/stamp.ts';
import { ERRORED_STATE_FILE, STATE_FILE } from '../workspace/terraform-files.ts';
import {
  localStateFile,
  STATE_OUTSIDE_WORKDIR_FIX,
  stateFileSource,
  stateInWorkdir,
} from '../workspace/state-location.ts';
import { writeNewFile, type Workspace } from '../workspace/workspace.ts';
import { recordChanged, withRecordSetBack } from '../state/record.ts';
import { withSerial } from '../state/serial.ts';
import { readRegularFile } from '../util/regular-file.ts';
import type { RunContext } from '../run/context.ts';
import type { Learned } from '../run/learned.ts';
import { backupStore } from '../run/stores.ts';

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
        // The state holds secrets no input names any more (an old value of a rotated secret): terraform's
        // plan prints them through derived attributes, so the masker learns them before any plan runs.
        for (const { value, label } of await stateSecrets(state.file, state.secrets)) ctx.masker.add(value, label);
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
      for (const { value, label } of await stateSecrets(state.file, state.secrets)) ctx.masker.add(value, label);
      return state;
    },
    { learned: (state) => stateLearned(state, state) },
  );
}

/**
 * The lineage of the state a pull found; null when there is none: no state at all, or the empty
 * state a pg backend holds before its first write (serial 0, lineage "").
 */
export const stateLineage = (state: Pick<StateSummary, 'serial' | 'lineage'>): string | null =>
  state.serial === null || !state.lineage ? null : state.lineage;

/**
 * --expect-lineage: the lineage of the object's state as its last result named it. A state of
 * another lineage (another object's: mixed-up backend settings, a restore --force of the wrong
 * backup) or none at all (a typo in the backend settings, a lost state) is refused before anything
 * plans against it: an apply would create everything again, a destroy would destroy nothing (or
 * another object's resources). What the backend holds is named in the error only, never in
 * result.state, which a controller takes the next expected lineage from.
 */
export function refuseOtherState(state: StateSummary, expected: string | undefined): void {
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
    message: `${what}. Nothing was planned or applied, and every retry finds the same until a person acts: point the run at the object's own state (the backend settings), or restore a backup of lineage ${expected} (captf-runner restore); the retry after that fix passes.`,
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

const stateLearned = (before: StateSummary, after: StateSummary): Learned => ({
  state: { serialBefore: before.serial, serialAfter: after.serial, lineage: after.lineage },
  stateInputsHash: after.recordedInputsHash,
});

/** The state pulled into `file`, summarized as it streams (SummaryOptions: its outputs, what its secrets need). */
async function pullState(tf: Terraform, file: string, options: SummaryOptions = {}): Promise<PulledState> {
  const { read } = await statePull(tf, file, (state) => summarizeState(state, options));
  return { ...read, file };
}

/**
 * After a failed or interrupted apply: save the state terraform could not persist (errored.tfstate:
 * pushed when the backend takes it, else kept with the backups), then report what the state holds
 * (the `state after` step's record), with the runner's record set back to what it said before the
 * op (setBackRecord). Damage control runs even after a stop request; its own failures are warnings,
 * the apply's error is what counts. What became of errored.tfstate is kept for the result.
 */
export async function stateAfterFailure(
  ctx: RunContext,
  { tf, workspace, before }: StateStepOptions & { before: PulledState },
): Promise<void> {
  const erroredState = await rescueErroredState(ctx, tf, workspace, before);
  if (erroredState) ctx.keep({ erroredState });
  let after: PulledState;
  try {
    after = await stateAfterStep(ctx, { tf, workspace, before, cleanup: true });
  } catch (error) {
    ctx.warn(`could not read the state after the failed apply: ${(error as Error).message}`);
    return;
  }
  if (recordChanged(before.record, after.record)) await setBackRecord(ctx, tf, workspace, before, after);
}

/** What the record says, for messages: its inputs hash, or that there is none. */
const recordText = (state: StateSummary) => state.recordedInputsHash ?? (state.record ? 'no inputs hash' : 'no record');

/**
 * terraform changed the runner's record, though the op did not succeed: it updates the dependents of
 * a create_before_destroy object before that object's delete, and a destroy deletes the record
 * first (contract.md §2). The record goes back to what it said before the op, in a state pushed one
 * serial above the one pulled: `state push` takes the lock and refuses it if anything wrote the
 * state since (a higher serial, another lineage), so nothing is overwritten unseen. The state is
 * then pulled again, and what it holds is what the result reports.
 */
async function setBackRecord(
  ctx: RunContext,
  tf: Terraform,
  workspace: Workspace,
  before: PulledState,
  after: PulledState,
): Promise<void> {
  const changed = `terraform changed the runner's record (now ${recordText(after)}, before the ${ctx.op} ${recordText(before)}) though the ${ctx.op} did not succeed`;
  try {
    const setBack = await ctx.step(
      'record set back',
      async () => {
        const pushFile = join(workspace.privateDir, 'state-record-set-back.json');
        await writeNewFile(
          pushFile,
          withSerial(await stateWithRecordOf(ctx, after.file, before), (after.serial ?? 0) + 1),
        );
        await statePush(tf, pushFile, { lockTimeout: ctx.settings.lockTimeout });
        const pulled = await pullState(tf, join(workspace.privateDir, 'state-after-set-back.json'));
        if (recordChanged(before.record, pulled.record))
          throw new Error(`the state pulled after the push still holds ${recordText(pulled)}`);
        return pulled;
      },
      { cleanup: true, starting: { mayHaveChanged: true }, learned: (pulled) => stateLearned(before, pulled) },
    );
    ctx.warn(`${changed}: the runner set it back (state serial ${setBack.serial})`);
  } catch (error) {
    ctx.warn(
      `${changed}, and the runner could not set it back (${(error as Error).message}): the state's record is not what the last successful apply left. Run the ${ctx.op} again once the cause is fixed: it continues from what is left`,
    );
  }
}

/** The state in `file` with the record set back to `before`'s (state/record.ts); read whole, so bounded like a backup. */
async function stateWithRecordOf(ctx: RunContext, file: string, before: StateSummary): Promise<string> {
  const most = ctx.settings.maxArtifactBytes;
  const bytes = await readRegularFile(file, most + 1);
  if (bytes.length > most) throw new Error(`the state is larger than --max-artifact-bytes (${most})`);
  return withRecordSetBack(bytes.toString('utf8'), before.record);
}

/** errored.tfstate, pushed or kept, with the runner's record as it was before the op (setBackRecord): terraform may have written it early. */
async function rescueErroredState(
  ctx: RunContext,
  tf: Terraform,
  workspace: Workspace,
  before: PulledState,
): Promise<Result['erroredState']> {
  const written = join(workspace.root, ERRORED_STATE_FILE);
  if (!existsSync(written)) return undefined;
  const errored = await erroredStateToSave(ctx, written, workspace, before);
  try {
    await ctx.step('state push', () => statePush(tf, errored, { lockTimeout: ctx.settings.lockTimeout }), {
      exitCode: (r) => r.exitCode,
      cleanup: true,
    });
    ctx.warn(`terraform could not save the state and left ${ERRORED_STATE_FILE}: the runner pushed it to the backend`);
    return { pushed: true };
  } catch (pushError) {
    try {
      const keptAt = await keepErroredState(ctx, errored);
      ctx.warn(
        `terraform could not save the state and the backend refused ${ERRORED_STATE_FILE} (${(pushError as Error).message}): it is kept at ${keptAt}; push it with terraform state push once the backend is back`,
      );
      return { pushed: false, keptAt };
    } catch (keepError) {
      ctx.log.error(
        `terraform left ${ERRORED_STATE_FILE} and it could be neither pushed nor kept (${(keepError as Error).message}): the workdir ${workspace.dir} is left in place`,
      );
      workspace.keep();
      return { pushed: false };
    }
  }
}

/**
 * errored.tfstate as the runner saves it: with the record as it was before the op, in a private
 * copy (the same serial: terraform's rules for the push are unchanged). When that edit fails, the
 * file as terraform left it, with a warning: state is never dropped for the record's sake.
 */
async function erroredStateToSave(
  ctx: RunContext,
  written: string,
  workspace: Workspace,
  before: PulledState,
): Promise<string> {
  try {
    const errored = await summarizeState(createReadStream(written));
    if (!recordChanged(before.record, errored.record)) return written;
    const edited = join(workspace.privateDir, ERRORED_STATE_FILE);
    await writeNewFile(edited, await stateWithRecordOf(ctx, written, before));
    ctx.warn(
      `terraform changed the runner's record in ${ERRORED_STATE_FILE} (now ${recordText(errored)}, before the ${ctx.op} ${recordText(before)}) though the ${ctx.op} did not succeed: the runner saves it with the record set back`,
    );
    return edited;
  } catch (error) {
    ctx.warn(
      `could not set back the runner's record in ${ERRORED_STATE_FILE} (${(error as Error).message}): it is saved as terraform left it`,
    );
    return written;
  }
}

/** The names of the errored states kept in the backup store start with it (steps/errored-state.ts finds them). */
export const ERRORED_STATE_PREFIX = 'errored-';

/** In the backup store, as a StateBackup object: in a cluster the out dir dies with the pod. */
async function keepErroredState(ctx: RunContext, errored: string): Promise<string> {
  const store = backupStore(ctx);
  const summary = await summarizeState(createReadStream(errored));
  const object = `${ERRORED_STATE_PREFIX}${timeStamp()}`;
  const { writeArtifact } = await artifactWriter();
  await writeArtifact(
    store,
    object,
    [{ name: STATE_FILE, path: errored }],
    {
      kind: 'StateBackup',
      terraformVersion: summary.terraformVersion ?? 'unknown',
      op: ctx.op,
      stateFile: STATE_FILE,
      serial: summary.serial ?? 0,
      lineage: summary.lineage || 'unknown',
    },
    { chunkBytes: ctx.settings.chunkBytes, maxBytes: ctx.settings.maxArtifactBytes },
  );
  return `${store.location}/${object}`;
}
