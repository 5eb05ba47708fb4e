// Whether an apply of a local object runs with the destructive-plan guard (`--guard on|off`), and
// when a pool's approval no longer stands, as the controller decides them (the controller's docs, "The
// Destructive-Plan Guard", "Machine pools"). Pure: reconcile.ts reads the exports and the history, this decides.
import type { ObjectKind } from '../object-kind.ts';
import { runOutcome, type Run } from './history.ts';

/** What the pool's last successful apply rendered for captf_cluster_outputs: the baseline a change of the exports is told by. */
export type AppliedExports =
  /** No apply has succeeded: the pool's first apply. */
  | { status: 'none' }
  /** An apply succeeded but its inputs are not kept (durable-inputs/ is missing): no baseline to compare with. */
  | { status: 'unknown' }
  /** The exports of the last successful apply, canonical JSON; undefined when it set none. */
  | { status: 'recorded'; exports: string | undefined };

export interface GuardFacts {
  kind: ObjectKind;
  /** captf_cluster_outputs of the inputs this apply renders, canonical JSON; undefined when not set. */
  currentExports: string | undefined;
  applied: AppliedExports;
  /** The run that left the object partly applied (partlyAppliedBy), if one did since the last successful apply. */
  partlyAppliedBy: string | undefined;
}

type GuardWhy =
  | 'cluster'
  | 'machine'
  | 'partlyApplied'
  | 'firstApply'
  | 'appliedExportsUnknown'
  | 'exportsChanged'
  | 'exportsUnchanged';

export interface ApplyGuard {
  on: boolean;
  why: GuardWhy;
  /** partlyApplied: the run that may have applied part of its change. */
  run?: string;
}

/**
 * A cluster's apply is always guarded, a machine's never. A pool's is guarded while it is partly
 * applied (a guarded apply failed or vanished after its apply started, and none succeeded since:
 * every apply, rotations included, until one succeeds), when the exports of its last successful
 * apply are unknown, and when the exports it renders differ from them; its first apply is not.
 */
export function applyGuard(facts: GuardFacts): ApplyGuard {
  if (facts.kind === 'cluster') return { on: true, why: 'cluster' };
  if (facts.kind === 'machine') return { on: false, why: 'machine' };
  if (facts.partlyAppliedBy !== undefined) return { on: true, why: 'partlyApplied', run: facts.partlyAppliedBy };
  switch (facts.applied.status) {
    case 'none':
      return { on: false, why: 'firstApply' };
    case 'unknown':
      return { on: true, why: 'appliedExportsUnknown' };
    case 'recorded':
      return facts.applied.exports === facts.currentExports
        ? { on: false, why: 'exportsUnchanged' }
        : { on: true, why: 'exportsChanged' };
  }
}

/**
 * The first apply since the last successful one that ran guarded (or whose run record predates the
 * record of its guard) and may have changed something without succeeding: it failed or was stopped
 * after terraform apply started (the result's mayHaveChanged), or it left no result at all (the
 * runner vanished, or died before it could say). Its id, or undefined.
 */
export function partlyAppliedBy(history: readonly Run[]): string | undefined {
  const applies = history.filter((run) => run.record.decision.op === 'apply');
  const lastSucceeded = applies.findLastIndex((run) => runOutcome(run) === 'succeeded');
  return applies.slice(lastSucceeded + 1).find(mayHaveAppliedPart)?.record.id;
}

function mayHaveAppliedPart(run: Run): boolean {
  if (run.record.guard === 'off') return false;
  const outcome = runOutcome(run);
  if (outcome === 'succeeded' || outcome === 'blocked') return false;
  return run.result === undefined || run.result.mayHaveChanged;
}

export interface ApprovalFacts {
  /** captf.io/approve-destructive-plan, when set. */
  annotation: string | undefined;
  /** The approval hash the pool renders now. */
  currentApprovalHash: string;
  currentExports: string | undefined;
  applied: AppliedExports;
  /** What the newest run whose approval hash the annotation names rendered for the exports; undefined when no run did. */
  approvedChange: { exports: string | undefined } | undefined;
}

/**
 * A pool's approval is for one change of the exports: it is removed once the exports return to the
 * applied ones (withdrawn) or move to another change (superseded), so the change needs a fresh
 * approval if it comes back. An approval of the current hash, of a change this history never
 * rendered, or of the same exports with other inputs stays.
 */
export function staleApproval(facts: ApprovalFacts): 'withdrawn' | 'superseded' | undefined {
  const { annotation, approvedChange } = facts;
  if (annotation === undefined || annotation === facts.currentApprovalHash || approvedChange === undefined)
    return undefined;
  if (approvedChange.exports === facts.currentExports) return undefined;
  return facts.applied.status === 'recorded' && facts.applied.exports === facts.currentExports
    ? 'withdrawn'
    : 'superseded';
}
