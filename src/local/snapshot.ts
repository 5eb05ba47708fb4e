// The model's snapshot of a local object: what the controller would see, built from object.json,
// the history of runs, the local state file and the current inputs. Reading the world
// (observeWorld) is kept apart from assembling the snapshot (buildSnapshot, pure).
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { InputsHashes } from '../inputs/index.ts';
import { Snapshot } from '../controller-model/snapshot.ts';
import { loadInputs } from '../inputs/load.ts';
import { summarizeState } from '../state/summary.ts';
import { deriveStatus, FAILED_JOBS_HISTORY_LIMIT, retainedJobs, type Run } from './history.ts';
import { APPROVE_DESTRUCTIVE_PLAN, type LocalObject, type LocalPaths } from './object.ts';

type StateReading = Snapshot['state'];

/** What the controller reads from outside the object: the clock, the state and the rendered inputs. */
export interface World {
  now: Date;
  /** Another reconcile's run is in progress (it holds the run lock). */
  jobActive: boolean;
  state: StateReading;
  /** The hashes of the current inputs; undefined for a deleting object, which builds no inputs. */
  hashes: InputsHashes | undefined;
}

export async function observeWorld(
  object: LocalObject,
  paths: LocalPaths,
  now: Date,
  jobActive: boolean,
): Promise<World> {
  const deleting = object.metadata.deletionTimestamp !== undefined;
  const hashes = deleting
    ? undefined
    : (await loadInputs(paths.inputs, { image: object.spec.image, kind: object.spec.kind })).hashes;
  return { now, jobActive, state: await readStateReading(paths.stateFile), hashes };
}

/**
 * The local state file as DecideOp reads a backend: no file, or a state without resources (what a
 * destroy leaves), is absent; a file that does not parse is unreadable.
 */
async function readStateReading(stateFile: string): Promise<StateReading> {
  let bytes: Buffer;
  try {
    bytes = await readFile(stateFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'absent' };
    return { status: 'lostOrUnreadable' };
  }
  let resources: unknown;
  try {
    resources = (JSON.parse(bytes.toString('utf8')) as { resources?: unknown }).resources;
  } catch {
    return { status: 'lostOrUnreadable' };
  }
  if (!Array.isArray(resources) || resources.length === 0) return { status: 'absent' };
  const { recordedInputsHash } = await summarizeState(Readable.from([bytes]));
  return { status: 'present', inputsHash: recordedInputsHash };
}

export function buildSnapshot(object: LocalObject, history: readonly Run[], world: World): Snapshot {
  const status = deriveStatus(history);
  const { kind, drift } = object.spec;
  const snapshot: Snapshot = {
    now: world.now.toISOString(),
    object: {
      uid: object.metadata.uid,
      kind,
      creationTimestamp: object.metadata.creationTimestamp,
      ...(kind === 'cluster' ? { applyPolicy: 'Automatic' as const } : {}),
      deleting: object.metadata.deletionTimestamp !== undefined,
    },
    // Locally the image reference of the last successful apply stands in for its pinned digest.
    image: status.lastSucceededApply ? { pinnedDigest: status.lastSucceededApply.image } : {},
    inputs: world.hashes
      ? { currentHash: world.hashes.inputsHash, approvalHash: world.hashes.approvalHash }
      : { currentHash: null },
    state: world.state,
    jobs: {
      active: world.jobActive,
      finished: retainedJobs(history, world.hashes?.inputsHash),
      failedJobsHistoryLimit: FAILED_JOBS_HISTORY_LIMIT,
    },
    applies: {
      ...(status.newestApply
        ? {
            newest: {
              outcome: status.newestApply.outcome,
              finishedAt: status.newestApply.finishedAt,
              outputReading: status.newestApply.outputReading,
            },
          }
        : {}),
      ...(status.lastSucceededApply ? { lastSucceededAt: status.lastSucceededApply.finishedAt } : {}),
    },
    ...(status.blockedApply
      ? { blockedApply: { hash: status.blockedApply.hash, reason: status.blockedApply.reason } }
      : {}),
    annotations: approvalAnnotation(object),
    drift: {
      ...drift,
      ...(status.lastDriftCheck
        ? { lastCheck: { at: status.lastDriftCheck.at, found: status.lastDriftCheck.found } }
        : {}),
    },
    refresh: { healthPendingReadings: 0, ...(status.lastRefreshAt ? { lastRunAt: status.lastRefreshAt } : {}) },
  };
  // Validated like a snapshot from outside: a mistake here must fail loudly, not decide quietly.
  return Snapshot.parse(snapshot);
}

function approvalAnnotation(object: LocalObject): Snapshot['annotations'] {
  const approval = object.metadata.annotations[APPROVE_DESTRUCTIVE_PLAN];
  return approval === undefined ? {} : { approveDestructivePlan: approval };
}
