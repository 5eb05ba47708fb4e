// What `local` commands print: short lines a module author reads as the story of the object.
// the README (A module's lifecycle on your laptop) quotes these lines; change both together.
import type { Decision } from '../controller-model/decision.ts';
import type { Snapshot } from '../controller-model/snapshot.ts';
import { actionText } from '../plan/actions.ts';
import type { Classification } from '../schemas/classification.ts';
import type { Result } from '../schemas/result.ts';
import { printableJson, printableLine } from '../output/printable.ts';
import { countsText } from '../output/summary.ts';
import { runOutcome, type LocalStatus, type Run } from './history.ts';
import type { LocalObject, LocalPaths } from './object.ts';
import { partlyAppliedBy, type ApplyGuard } from './apply-guard.ts';
import { relative } from 'node:path';

/** Prints each line to the author's terminal; what a module or a run wrote into it (an address, a message) is escaped, so it cannot move the cursor or reorder the line. */
export const say = (...lines: string[]): void => {
  process.stdout.write(lines.map((line) => printableLine(line) + '\n').join(''));
};

/** Prints a JSON document (`--json`) that a program can parse: its text kept whole, what could move the cursor escaped as `\u` in its strings. */
export const sayJson = (value: unknown): void => {
  process.stdout.write(printableJson(JSON.stringify(value, null, 2)) + '\n');
};

export function decisionLines(decision: Decision): string[] {
  switch (decision.kind) {
    case 'op': {
      const lines = [
        `decision: ${decision.op} (${decision.reason}), ${decision.inputs} inputs, ${decision.image} image`,
      ];
      if (decision.events?.includes('DigestUnknown'))
        lines.push("  DigestUnknown: no apply has succeeded yet, so the spec's image and module run");
      if (decision.approvedInputsHash) lines.push(`  approved: inputs hash ${decision.approvedInputsHash}`);
      return lines;
    }
    case 'wait': {
      const held = decision.heldOp ? `; holds back ${decision.heldOp.op} (${decision.heldOp.reason})` : '';
      return [`decision: wait (${decision.reason}), requeue in ${decision.requeueAfterSeconds}s${held}`];
    }
    case 'dropFinalizer':
      return [`decision: drop the finalizer (${decision.reason})`];
  }
}

/** Why a pool's apply runs with the guard on or off (a cluster's always is, a machine's never: nothing to say). */
export function guardLines(guard: ApplyGuard, paths: LocalPaths): string[] {
  switch (guard.why) {
    case 'cluster':
    case 'machine':
      return [];
    case 'partlyApplied':
      return [
        `  guard on: run ${guard.run} may have applied part of its change (it did not succeed after its apply started); every apply is guarded until one succeeds`,
      ];
    case 'appliedExportsUnknown':
      return [
        `  guard on: the exports of the last successful apply are unknown (${paths.durableInputs} is missing); every apply is guarded until one succeeds`,
      ];
    case 'exportsChanged':
      return ['  guard on: captf_cluster_outputs differ from those of the last successful apply'];
    case 'exportsUnchanged':
      return ['  guard off: captf_cluster_outputs are those of the last successful apply'];
    case 'firstApply':
      return ["  guard off: the pool's first apply"];
  }
}

/** A hint for the author after a wait, when there is something to do about it. */
export function waitHintLines(decision: Decision, paths: LocalPaths): string[] {
  if (decision.kind !== 'wait') return [];
  switch (decision.reason) {
    case 'DestructivePlanApprovalPending':
      return [
        `  read the plan in the blocked run's runner.log, then approve: captf-runner local approve --dir ${paths.given}`,
      ];
    case 'BackingOff':
      return [
        `  the op failed recently; reconcile again later, or pass --now +${decision.requeueAfterSeconds}s to act as if that time had come`,
      ];
    case 'UpToDate':
      return [`  nothing is due; pass --now +${decision.requeueAfterSeconds}s to run what is due next`];
    default:
      return [];
  }
}

export function resultLines(run: Run, paths: LocalPaths): string[] {
  const { result } = run;
  const log = relative(process.cwd(), `${run.dir}/runner.log`) || `${run.dir}/runner.log`;
  if (!result)
    return [
      `run ${run.record.id}: ${runOutcome(run)}: the runner wrote no result (exit ${run.record.exitCode ?? 'none'}); see ${log}`,
    ];
  const lines = [`run ${run.record.id}: ${result.outcome} (${result.reason})`];
  const plan = result.plan;
  if (result.outcome === 'blocked' && plan) {
    lines.push(...blockedPlanLines(plan));
    lines.push(
      `  nothing was applied; to approve inputs hash ${result.approvalHash}: captf-runner local approve --dir ${paths.given}`,
    );
  } else {
    lines.push(`  ${result.message}`);
    if (result.drift?.found && plan) lines.push(`  a remediation apply would do: ${countsText(plan.counts)}`);
  }
  lines.push(`  log: ${log}`);
  return lines;
}

/** What a blocked plan needs an approval for, one line each. */
function blockedPlanLines(plan: Classification): string[] {
  return [
    `  plan: ${countsText(plan.counts)}`,
    ...plan.destructive.map((change) => `  destructive: ${change.address} (${change.action})`),
    ...(plan.destructiveTotal > plan.destructive.length
      ? [`  … and ${plan.destructiveTotal - plan.destructive.length} more destructive (see the run's runner.log)`]
      : []),
    ...plan.actions.map((action) => `  provider action: ${actionText(action)}`),
    ...plan.failClosed.map((why) => `  cannot be read: ${why}`),
  ];
}

/**
 * What `local approve` approves: the blocked run's plan as it showed it, and what the approval is:
 * a hash of the inputs and image, not this plan (an edit of the module before the apply can change what it does).
 */
export function approvedLines(blocked: Result | undefined): string[] {
  if (!blocked?.plan)
    return ['  the blocked run left no result: read its runner.log to see what the approval lets the apply do'];
  return [
    'it approves what the blocked run showed:',
    ...blockedPlanLines(blocked.plan),
    `  the approval names approval hash ${blocked.approvalHash} (these inputs and image), not this plan: if the module changes before the apply, the apply reports what it did that this list lacks (approval.unreviewed)`,
  ];
}

export interface StatusView {
  object: LocalObject;
  status: LocalStatus;
  snapshot: Snapshot;
  next: Decision;
  history: readonly Run[];
}

export function statusLines({ object, status, snapshot, next, history }: StatusView, recentRuns: number): string[] {
  const { metadata, spec } = object;
  const state =
    snapshot.state.status === 'present'
      ? `present, inputs hash ${snapshot.state.inputsHash ?? 'none'}`
      : snapshot.state.status;
  const lines = [
    `object: ${metadata.name} (${spec.kind}), uid ${metadata.uid}${metadata.deletionTimestamp ? `, deleting since ${metadata.deletionTimestamp}` : ''}`,
    `spec: image ${spec.image}, module ${spec.module}`,
    `  drift: every ${spec.drift.intervalSeconds}s, action ${spec.drift.action}, remediation failed limit ${spec.drift.remediationFailedLimit}`,
    `annotations:${Object.keys(metadata.annotations).length === 0 ? ' none' : ''}`,
    ...Object.entries(metadata.annotations).map(([key, value]) => `  ${key}=${value}`),
    `inputs hash: ${snapshot.inputs.currentHash ?? '(deleting: none rendered)'}`,
    `state: ${state}`,
    'status:',
    `  last successful apply: ${status.lastSucceededApply ? `${status.lastSucceededApply.finishedAt} (run ${status.lastSucceededApply.run}, image ${status.lastSucceededApply.image})` : 'none'}`,
    `  newest apply: ${status.newestApply ? `${status.newestApply.outcome} at ${status.newestApply.finishedAt} (run ${status.newestApply.run})` : 'none'}`,
    `  blocked apply: ${status.blockedApply ? `inputs hash ${status.blockedApply.hash}, due to ${status.blockedApply.reason} (run ${status.blockedApply.run})` : 'none'}`,
    ...(spec.kind === 'pool' ? [partlyAppliedLine(partlyAppliedBy(history))] : []),
    `  last drift check: ${status.lastDriftCheck ? `${status.lastDriftCheck.found ? 'drift found' : 'no drift'} at ${status.lastDriftCheck.at} (run ${status.lastDriftCheck.run})` : 'none'}`,
    `runs (newest last):${history.length === 0 ? ' none' : ''}`,
    ...history
      .slice(-recentRuns)
      .map(
        (run) =>
          `  ${run.record.id}  ${run.record.decision.reason}  ${run.result ? `${run.result.outcome} (${run.result.reason})` : runOutcome(run)}`,
      ),
    ...decisionLines(next).map((line) => `next ${line}`),
  ];
  return lines;
}

const partlyAppliedLine = (run: string | undefined): string =>
  `  partly applied: ${run === undefined ? 'no' : `by run ${run}: every apply is guarded until one succeeds`}`;
