// A killed apply is not forgotten. terraform saves the state during an apply only every 20 s: a run
// killed mid-apply (a lost node, a grace period that ended, an OOM kill of the pod) leaves objects
// outside the state, and the next run creates them again. The runner cannot make terraform save
// sooner; it writes a marker to the object's backup store before terraform apply starts and deletes
// it however the apply ends. A marker the next run finds was left by a run that never finished: it
// is reported once (a notice, result.killedApply) and deleted (contract/sections/faults.md, "A
// killed apply") when its writer is known to have ended (its --deadline passed, or its process on this
// machine is gone); else it may be another Job's live apply, named and left alone. It never blocks a
// run: the state is what it is, the report is for a person.
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import * as z from '../schemas/zod.ts';
import type { Classification } from '../schemas/classification.ts';
import { KILLED_APPLY_MAX_ADDRESSES, type KilledApply } from '../schemas/result.ts';
import type { ChunkStore } from '../store/store.ts';
import { deadlineAt } from '../schemas/deadline.ts';
import { timeStamp } from '../util/stamp.ts';
import type { RunContext } from '../run/context.ts';
import { backupStore } from '../run/stores.ts';
import type { Masker } from '../masking/mask.ts';
import { CUTS, maskThenCut } from '../masking/boundary.ts';

/** The names of the apply markers in the backup store start with it. */
export const APPLY_MARKER_PREFIX = 'applying-';

/** The most characters of one address a marker keeps (a for_each key can be long, and secret): masked, then cut with "…". */
const MAX_ADDRESS_CHARS = CUTS.markerAddress;

/** What a marker holds: JSON, the object's whole content (its manifest; it has no chunks). */
const ApplyMarker = z.strictObject({
  kind: z.literal('ApplyMarker'),
  op: z.string(),
  planHash: z.string(),
  startedAt: z.string(),
  /** The writer's --deadline: it cannot run past it (absent without one). */
  runsUntil: z.string().optional(),
  /** The writer's process, so that a run on the same machine can tell whether it still runs (absent in markers written before it). */
  writer: z.strictObject({ host: z.string(), pidNamespace: z.string().optional(), pid: z.nonNegativeInt() }).optional(),
  addresses: z.array(z.string()).max(KILLED_APPLY_MAX_ADDRESSES),
  addressesLeftOut: z.nonNegativeInt(),
});
type ApplyMarker = z.infer<typeof ApplyMarker>;
type MarkerWriter = NonNullable<ApplyMarker['writer']>;

/** This process, as a marker names its writer: the machine, its pid namespace (Linux: a container has its own), the pid. */
function thisProcess(): MarkerWriter {
  let pidNamespace: string | undefined;
  try {
    pidNamespace = readlinkSync('/proc/self/ns/pid');
  } catch {
    // no /proc (macOS): the host alone says which pids are comparable
  }
  return { host: hostname(), ...(pidNamespace ? { pidNamespace } : {}), pid: process.pid };
}

/** Whether no process of this pid exists here (EPERM: one exists, another user's). */
function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Why a marker's writer is known to have ended: its --deadline passed, or it ran in this machine's pid
 * namespace and no process of its pid is left; undefined when it may still run (it had no deadline, or
 * one still ahead, and ran elsewhere or its pid is taken). A pid taken again only keeps a marker
 * waiting, never reports a live apply as killed. Pure but for `gone`.
 */
export function writerEnded(
  marker: Pick<ApplyMarker, 'runsUntil' | 'writer'>,
  { now, here, gone }: { now: number; here: MarkerWriter; gone: (pid: number) => boolean },
): 'deadline passed' | 'process gone' | undefined {
  if (marker.runsUntil && Date.parse(marker.runsUntil) <= now) return 'deadline passed';
  const { writer } = marker;
  const sameMachine = writer?.host === here.host && writer.pidNamespace === here.pidNamespace;
  if (writer && sameMachine && writer.pid !== here.pid && gone(writer.pid)) return 'process gone';
  return undefined;
}

/**
 * The addresses a plan creates or replaces (their objects are made by the apply), the first
 * KILLED_APPLY_MAX_ADDRESSES, and how many more there are (at most, where the plan's change list was cut),
 * each masked whole, then cut (the run that reports them may not know the secret a key held). Pure.
 */
export function plannedCreates(
  plan: Pick<Classification, 'changes' | 'changesTotal'>,
  masker: Pick<Masker, 'mask'>,
): Pick<ApplyMarker, 'addresses' | 'addressesLeftOut'> {
  const creates = plan.changes.filter((c) => c.actions.includes('create')).map((c) => c.address);
  const addresses = creates.slice(0, KILLED_APPLY_MAX_ADDRESSES).map((a) => maskThenCut(masker, a, MAX_ADDRESS_CHARS));
  return { addresses, addressesLeftOut: creates.length - addresses.length + (plan.changesTotal - plan.changes.length) };
}

/**
 * Writes the marker of the apply about to start, and returns its object name; undefined when it could
 * not be written (a warning: the apply goes on, as it would have without the marker).
 */
export async function writeApplyMarker(
  ctx: RunContext,
  { planHash, plan }: { planHash: string; plan: Pick<Classification, 'changes' | 'changesTotal'> },
): Promise<string | undefined> {
  const store = backupStore(ctx);
  const object = `${APPLY_MARKER_PREFIX}${timeStamp()}`;
  const marker: ApplyMarker = {
    kind: 'ApplyMarker',
    op: ctx.op,
    planHash,
    startedAt: new Date().toISOString(),
    ...(ctx.settings.deadline
      ? { runsUntil: new Date(deadlineAt(ctx.startedAt, ctx.settings.deadline)).toISOString() }
      : {}),
    writer: thisProcess(),
    ...plannedCreates(plan, ctx.masker),
  };
  try {
    const write = await store.create(object);
    try {
      await write.commit(Buffer.from(`${JSON.stringify(marker)}\n`));
    } catch (error) {
      await write.abort().catch(() => undefined);
      throw error;
    }
    return object;
  } catch (error) {
    ctx.warn(
      `could not write the apply marker ${store.location}/${object} (${(error as Error).message}): if this run is killed during the apply, the next run cannot say what it may have created outside the state`,
    );
    return undefined;
  }
}

/** Deletes this run's marker once its apply ended (a warning when it cannot: the next run reports it as a killed apply). */
export async function clearApplyMarker(ctx: RunContext, object: string): Promise<void> {
  const store = backupStore(ctx);
  try {
    await store.deleteObject(object);
  } catch (error) {
    ctx.warn(
      `could not delete the apply marker ${store.location}/${object} (${(error as Error).message}): the next run reports this apply as killed; delete it from the store`,
    );
  }
}

/**
 * Reports the markers of killed applies the backup store holds (`objects`, oldest first, from the
 * listing the state before step reads anyway): a notice each, result.killedApply for the newest;
 * then deletes them, so each is reported once. Only a marker whose writer is known to have ended
 * (writerEnded): one whose writer may still run is named in a notice of its own and left. Never throws:
 * a marker that cannot be read or deleted is a warning.
 */
export async function reportKilledApplies(ctx: RunContext, objects: readonly string[]): Promise<void> {
  if (!objects.length) return;
  const store = backupStore(ctx);
  const found: KilledApply[] = [];
  const here = thisProcess();
  for (const object of objects) {
    const ref = `${store.location}/${object}`;
    const marker = await readMarker(store, object).catch((error: unknown) => {
      ctx.warn(`the apply marker ${ref} cannot be read (${(error as Error).message}): it is left as it is`);
      return null;
    });
    if (!marker) continue;
    const { kind: _, runsUntil: _until, writer: _writer, ...fields } = marker;
    const ended = writerEnded(marker, { now: Date.now(), here, gone: processGone });
    if (!ended) {
      // Its writer may still run: another Job's live apply of this object, not a killed one.
      ctx.notice({ code: 'ApplyMayBeRunning', message: liveApplyText(ref, marker) });
      continue;
    }
    found.push({ marker: ref, ...fields, earlier: 0 });
    ctx.notice({ code: 'KilledApplyFound', message: killedApplyText(ref, marker, ended) });
    await store.deleteObject(object).catch((error: unknown) => {
      ctx.warn(
        `could not delete the apply marker ${ref} (${(error as Error).message}): the next run reports it again; delete it from the store`,
      );
    });
  }
  const newest = found.at(-1);
  if (newest) ctx.keep({ killedApply: { ...newest, earlier: found.length - 1 } });
}

/** A marker's content; null when the object is not complete (its writer died before its commit: nothing started). */
async function readMarker(store: ChunkStore, object: string): Promise<ApplyMarker | null> {
  const raw = await store.getManifest(object);
  if (raw === undefined) return null;
  if (raw.length > 1024 * 1024) throw new Error('it is larger than a marker can be');
  return ApplyMarker.parse(JSON.parse(raw.toString('utf8')));
}

/** What a person reads: what may exist outside the state, and what to check. Pure. */
function killedApplyText(
  ref: string,
  marker: Pick<ApplyMarker, 'op' | 'planHash' | 'startedAt' | 'addresses' | 'addressesLeftOut'>,
  ended: NonNullable<ReturnType<typeof writerEnded>>,
): string {
  const why = ended === 'deadline passed' ? 'its --deadline has passed' : 'its process on this machine is gone';
  return `a previous run (${marker.op}, plan ${marker.planHash}) started terraform apply at ${marker.startedAt} and never finished (it was killed: ${why}; marker ${ref}, now deleted): terraform saves the state only every 20 s during an apply, so objects it created or replaced may exist outside the state: ${addressesText(marker)}. Check the infrastructure for objects of these addresses that the state does not hold, and import them (terraform import) or delete them; this run plans from the state as it is`;
}

/** A marker's addresses as the notices list them. Pure. */
const addressesText = (marker: Pick<ApplyMarker, 'addresses' | 'addressesLeftOut'>) =>
  `${marker.addresses.length ? marker.addresses.join(', ') : 'none listed'}${marker.addressesLeftOut ? ` and up to ${marker.addressesLeftOut} more` : ''}`;

/** A marker whose writer may still run: what a person reads. Pure. */
function liveApplyText(
  ref: string,
  marker: Pick<ApplyMarker, 'op' | 'planHash' | 'startedAt' | 'runsUntil' | 'addresses' | 'addressesLeftOut'>,
): string {
  const started = `another run (${marker.op}, plan ${marker.planHash}) started terraform apply at ${marker.startedAt} and may still be running`;
  if (marker.runsUntil)
    return `${started} (its --deadline ends at ${marker.runsUntil}; marker ${ref}, left as it is): the Jobs of one object are not meant to overlap; if no Job of this object runs now, it was killed, and a run after ${marker.runsUntil} reports it`;
  return `${started} (it ran without --deadline, and its process is not known to have ended: it still runs on this machine, or ran on another; marker ${ref}, left as it is): the runs of one object are not meant to overlap; if none runs now, it was killed and objects it created or replaced may exist outside the state: ${addressesText(marker)}. Check the infrastructure for objects of these addresses that the state does not hold, import them (terraform import) or delete them, then delete the marker from the store: every run names it until then`;
}
