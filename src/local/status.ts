// `local status`: the object, the status derived from its runs, and what a reconcile would decide
// now. Read only: it takes no run lock and runs nothing.
import { decideOp } from '../controller-model/decide-op.ts';
import { partlyAppliedBy } from './apply-guard.ts';
import { deriveStatus, readHistory } from './history.ts';
import { openObject } from './object.ts';
import { say, sayJson, statusLines } from './print.ts';
import { isRunLockHeld } from './run-lock.ts';
import { buildSnapshot, observeWorld } from './snapshot.ts';

export interface StatusOptions {
  now: Date;
  /** How many of the newest runs to list. */
  runs: number;
  json: boolean;
}

export async function showStatus(dir: string, options: StatusOptions): Promise<void> {
  const { paths, object } = await openObject(dir);
  const history = await readHistory(paths);
  const snapshot = buildSnapshot(
    object,
    history,
    await observeWorld(object, paths, options.now, await isRunLockHeld(paths)),
  );
  const view = { object, status: deriveStatus(history), snapshot, next: decideOp(snapshot), history };
  if (options.json) {
    const runs = history
      .slice(-options.runs)
      .map((run) => ({ ...run.record, outcome: run.result?.outcome, reason: run.result?.reason }));
    // A pool's partly applied record, as the text says it: the run, or null.
    const pool = object.spec.kind === 'pool' ? { partlyAppliedBy: partlyAppliedBy(history) ?? null } : {};
    sayJson({ object: view.object, status: view.status, ...pool, snapshot, next: view.next, runs });
    return;
  }
  say(...statusLines(view, options.runs));
}
