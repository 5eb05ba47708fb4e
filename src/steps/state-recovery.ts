// The state after a failed or interrupted apply: what terraform could not save (errored.tfstate)
// pushed or kept with the backups, and the runner's record set back when terraform changed it
// though the op did not succeed. Damage control: it runs even after a stop request, its own
// failures are warnings. State must never be silently lost.
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Result } from '../schemas/result.ts';
import { summarizeState, type StateSummary } from '../state/summary.ts';
import { recordChanged, withRecordSetBack } from '../state/record.ts';
import { withSerial } from '../state/serial.ts';
import { statePush } from '../terraform/state.ts';
import type { Terraform } from '../terraform/terraform.ts';
import { readRegularFile } from '../util/regular-file.ts';
import { timeStamp } from '../util/stamp.ts';
import { ERRORED_STATE_FILE, STATE_FILE } from '../workspace/terraform-files.ts';
import { writeNewFile, type Workspace } from '../workspace/workspace.ts';
import type { RunContext } from '../run/context.ts';
import { backupStore } from '../run/stores.ts';
import {
  artifactWriter,
  pullState,
  stateAfterStep,
  stateLearned,
  type PulledState,
  type StateStepOptions,
} from './state.ts';

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
