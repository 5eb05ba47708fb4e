// Every op that plans starts from what the last run of the object left: an errored state a failed
// apply kept in the store (terraform could not save it, and the backend refused the runner's push,
// state-recovery.ts) is pushed before anything plans, when that is safe; else the run plans nothing and a
// person decides (contract/sections/faults.md, "A state terraform could not save"). State must
// never be silently lost, nor anything created twice because the state that knew of it was left aside.
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import type { Result } from '../schemas/result.ts';
import { RunnerError } from '../errors.ts';
import { readArtifact } from '../store/artifact-read.ts';
import type { StoredObject } from '../store/store.ts';
import { summarizeState, type StateSummary } from '../state/summary.ts';
import { statePush } from '../terraform/state.ts';
import { STATE_FILE } from '../workspace/terraform-files.ts';
import type { RunContext } from '../run/context.ts';
import { backupStore } from '../run/stores.ts';
import { backupStep } from './backup.ts';
import { APPLY_MARKER_PREFIX, reportKilledApplies } from './apply-marker.ts';
import { ERRORED_STATE_PREFIX } from './state-recovery.ts';
import {
  pullStateBefore,
  stateBeforeStep,
  stateLineage,
  type PulledStateBefore,
  type StateStepOptions,
} from './state.ts';

/**
 * The state before the op, as stateBeforeStep reads it, once the store holds no errored state a
 * previous run kept: one is pushed first (pushKeptErroredState), and the state is pulled again.
 * `pulling`: the pull prepareRoot started beside validate. `fromPlan`: the op reads the state from its
 * saved plan (state-planned.ts), so nothing is pulled here unless an errored state is to be pushed first
 * (undefined: read it from the plan).
 */
export async function stateBeforeOp(
  ctx: RunContext,
  options: StateStepOptions & { pulling?: Promise<PulledStateBefore>; fromPlan?: false },
): Promise<PulledStateBefore>;
export async function stateBeforeOp(
  ctx: RunContext,
  options: StateStepOptions & { fromPlan: true },
): Promise<PulledStateBefore | undefined>;
export async function stateBeforeOp(
  ctx: RunContext,
  { tf, workspace, pulling, fromPlan }: StateStepOptions & { pulling?: Promise<PulledStateBefore>; fromPlan?: boolean },
): Promise<PulledStateBefore | undefined> {
  // An op that reads the state from its saved plan pulls nothing before it: the store is listed in a step of its own.
  const objects = fromPlan
    ? Promise.resolve(await ctx.step('backup store', () => backupStore(ctx).listObjects()))
    : backupStore(ctx).listObjects();
  const listing = objects.then((o) => keptErroredStates(ctx, o));
  listing.catch(() => {}); // awaited by the step, beside the pull
  if (fromPlan && !(await listing).length) {
    await reportKilledApplies(ctx, applyMarkers(await objects));
    return undefined;
  }
  const found = await stateBeforeStep(ctx, { tf, workspace, pulling, erroredStates: listing });
  // The listing the step read: the markers of applies that never finished are in it too.
  await reportKilledApplies(ctx, applyMarkers(await objects));
  if (!found.erroredStates?.length) return found;
  await pushKeptErroredState(ctx, { tf, workspace, backend: found, objects: found.erroredStates });
  return stateBeforeStep(ctx, { tf, workspace, pulling: pullStateBefore(tf, workspace, 'state-before-pushed.json') });
}

/** The complete errored states among the objects of the object's backup store, oldest first. */
function keptErroredStates(ctx: RunContext, objects: readonly StoredObject[]): string[] {
  const kept = objects.filter((o) => o.name.startsWith(ERRORED_STATE_PREFIX));
  for (const o of kept.filter((o) => !o.complete))
    ctx.warn(
      `${backupStore(ctx).location}/${o.name} is an errored state whose writer did not finish it (no manifest): it cannot be read, and is left as it is`,
    );
  return kept.filter((o) => o.complete).map((o) => o.name);
}

/** The markers of applies that never finished (apply-marker.ts), oldest first: an incomplete one was never started. */
const applyMarkers = (objects: readonly StoredObject[]) =>
  objects.filter((o) => o.complete && o.name.startsWith(APPLY_MARKER_PREFIX)).map((o) => o.name);

/** Why a kept errored state cannot be pushed over the backend's state, or undefined when it can. Pure. */
export function erroredStateRefusal(
  errored: Pick<StateSummary, 'lineage' | 'serial'>,
  backend: Pick<StateSummary, 'lineage' | 'serial'>,
  expectedLineage: string | undefined,
): string | undefined {
  const lineage = stateLineage(errored);
  if (lineage === null) return 'it holds no lineage and serial terraform would check';
  if (expectedLineage !== undefined && lineage !== expectedLineage)
    return `its lineage ${lineage} is not the object's (${expectedLineage}, --expect-lineage)`;
  const held = stateLineage(backend);
  if (held === null) return undefined; // the backend holds no state: the push replaces nothing
  if (held !== lineage)
    return `its lineage ${lineage} is not the lineage of the state the backend holds (${held}, serial ${backend.serial})`;
  if (errored.serial! <= backend.serial!)
    return `its serial ${errored.serial} is not above the serial of the state the backend holds (${backend.serial}): the backend was written since (or it was pushed already)`;
  return undefined;
}

interface PushKeptOptions extends StateStepOptions {
  /** The state the backend holds now. */
  backend: PulledStateBefore;
  /** The kept errored states (their object names), oldest first. */
  objects: string[];
}

/**
 * Reads the kept errored state, checks it against the backend's state (erroredStateRefusal), backs
 * the backend's state up, pushes it (terraform takes the lock, and refuses another lineage or a
 * lower serial itself), and deletes it from the store: it is pushed once. More than one is never
 * pushed: which one holds what was applied last is for a person to judge.
 */
async function pushKeptErroredState(ctx: RunContext, { tf, workspace, backend, objects }: PushKeptOptions) {
  const store = backupStore(ctx);
  const refs = objects.map((object) => `${store.location}/${object}`);
  const unpushable = (why: string, ref: string, cause?: unknown) =>
    new RunnerError({
      kind: 'state',
      reason: 'ErroredStateUnpushable',
      message: `a previous run of the object could not save what terraform applied, and kept it at ${ref}; it cannot be pushed safely: ${why}. Nothing was planned or applied, and a retry finds the same. A person decides: to make it the object's state, run captf-runner restore --backup ${ref} (with --force where the lineage differs), which then deletes it from the store; to discard it (what it records is in the backend already, or is not this object's), delete it from the store.`,
      detail: { erroredStates: refs, backendLineage: stateLineage(backend), backendSerial: backend.serial },
      ...(cause === undefined ? {} : { cause }),
    });
  const errored = await ctx.step('errored state', async () => {
    if (objects.length > 1)
      throw unpushable(
        `the store holds ${objects.length} of them (${refs.join(', ')}), and which one holds what was applied last is not the runner's to judge`,
        refs[0]!,
      );
    const ref = refs[0]!;
    let file: string;
    try {
      const read = await readArtifact(store, objects[0]!, {
        into: join(workspace.privateDir, 'errored-state'),
        expect: { kind: 'StateBackup' },
        maxBytes: ctx.settings.maxArtifactBytes,
      });
      file = read.paths[STATE_FILE]!;
    } catch (error) {
      if (error instanceof RunnerError && error.kind === 'artifact')
        throw unpushable(`it cannot be read (${error.message})`, ref, error);
      throw error;
    }
    const summary = await summarizeState(createReadStream(file));
    const why = erroredStateRefusal(summary, backend, ctx.settings.expectLineage);
    if (why) throw unpushable(why, ref);
    return { ...summary, lineage: summary.lineage!, file, ref, object: objects[0]! }; // a lineage: checked above
  });
  const backup = await backupStep(ctx, {
    before: backend,
    inputsHash: backend.recordedInputsHash ?? undefined,
    terraformVersion: errored.terraformVersion ?? 'unknown',
  });
  const pushed: NonNullable<Result['erroredStatePushed']> = {
    from: errored.ref,
    lineage: errored.lineage,
    serial: errored.serial!,
    replacedSerial: stateLineage(backend) === null ? null : backend.serial,
    ...(backup ? { backup } : {}),
  };
  await ctx.step('state push', () => statePush(tf, errored.file, { lockTimeout: ctx.settings.lockTimeout }), {
    exitCode: (r) => r.exitCode,
    starting: { mayHaveChanged: true },
    learned: () => ({ erroredStatePushed: pushed }),
  });
  const over =
    pushed.replacedSerial === null
      ? 'into a backend that held no state'
      : `over serial ${pushed.replacedSerial}${backup ? ` (backed up at ${backup.ref})` : ''}`;
  try {
    await store.deleteObject(errored.object);
    ctx.notice({
      code: 'ErroredStatePushed',
      message: `a previous run could not save what terraform applied and kept it at ${errored.ref}: the runner pushed it (lineage ${errored.lineage}, serial ${errored.serial}) ${over} before anything planned, and deleted it from the store`,
    });
  } catch (error) {
    ctx.notice({
      code: 'ErroredStatePushed',
      message: `a previous run could not save what terraform applied and kept it at ${errored.ref}: the runner pushed it (lineage ${errored.lineage}, serial ${errored.serial}) ${over} before anything planned, but could not delete it from the store (${(error as Error).message}): the next run refuses it (its serial is not above the backend's) until it is deleted`,
    });
  }
}
