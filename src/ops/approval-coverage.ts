// What an approval covered (contract.md, the guard): a blocked apply (blockedError) leaves a record of what it
// showed; an approved apply compares its own destructive entries and provider actions with the
// newest blocked run for the same approval hash and reports what nobody was shown (approval.unreviewed). Informational:
// the apply goes ahead as approved whatever entries this finds; a failure here is a warning, and then every
// destructive entry counts as unreviewed. One finding is not: a blocked run that planned against a state of
// another lineage approved nothing for this one, and neither did one nobody can find when no --expect-lineage
// names the state (otherState: coverApproval blocks again).
import type { PlanObserver } from '../plan/observer.ts';
import { join } from 'node:path';
import type {
  Classification,
  DestructiveChange,
  PlannedAction,
  PolicyApprovalRequired,
} from '../schemas/classification.ts';
import type { Result } from '../schemas/result.ts';
import { RunnerError } from '../errors.ts';
import { approveCommand, blockedMessage } from '../guard/decide.ts';
import {
  appliedSinceBlocked,
  countText,
  newestBlockedRun,
  otherStateWarning,
  unknownStateWarning,
  readBlockedRun,
  shownAction,
  shownChange,
  shownPolicyFinding,
  unreviewedChanges,
  unreviewedWarning,
  type BlockedRun,
  type BlockedRunWanted,
  type ShownChange,
} from '../guard/unreviewed.ts';
import type { InputsHashes } from '../inputs/hash.ts';
import type { StateSummary } from '../state/summary.ts';
import { stateLineage } from '../steps/state.ts';
import { changeText } from '../plan/actions.ts';
import { approvalMismatch, type ApprovalFacts } from '../guard/approval-mismatch.ts';
import { serializeResult } from '../output/result-file.ts';
import { isSha256 } from '../util/sha256.ts';
import type { RunContext } from '../run/context.ts';
import { recordStore } from '../run/stores.ts';
import { MAX_RECORD_BYTES, readRecordFile } from '../store/record-file.ts';
import type { RecordStore } from '../store/store.ts';

const RECORD_PREFIX = 'blocked-';
/** `blocked-<approval hash>.json` beside the backups: the result of the newest blocked apply for that hash. */
export const blockedRecordName = (approvalHash: string) => `${RECORD_PREFIX}${approvalHash}.json`;
/** A name blockedRecordName gives: `blocked-`, a sha256, `.json`. */
const isRecordName = (name: string) =>
  name.startsWith(RECORD_PREFIX) &&
  name.endsWith('.json') &&
  isSha256(name.slice(RECORD_PREFIX.length, -'.json'.length));
/** Records of older blocks are deleted past this many (one per approval hash). */
export const KEEP_BLOCKED_RECORDS = 10;

/**
 * A blocked apply keeps its result (masked, as in result.json) as `blocked-<approval hash>.json`
 * beside the backups (the backups directory, or the --store), where the next run finds it after
 * `<out>/result.json` is overwritten (and `captf-runner local` gives each run its own out dir).
 * Nothing is written in a cluster without either: the blocked Job's result Secret is the record.
 * Returns where it was written.
 */
export async function keepBlockedRecord(ctx: RunContext, result: Result): Promise<string | undefined> {
  const records = recordStore(ctx);
  if (!records || !result.approvalHash) return undefined;
  const name = blockedRecordName(result.approvalHash);
  await records.putRecord(name, Buffer.from(serializeResult(result, ctx.masker)));
  await pruneBlockedRecords(records, name);
  return `${records.location}/${name}`;
}

/**
 * Before a blocked apply's result is published: the record of what it showed, for a later approved
 * apply to compare with. Best effort: a failure is a warning of the blocked result.
 */
export async function withBlockedRecord(ctx: RunContext, result: Result): Promise<Result> {
  if (result.outcome !== 'blocked') return result;
  try {
    const path = await keepBlockedRecord(ctx, result);
    if (path) ctx.log.info({ path }, 'kept the record of this block for the approved apply');
    return result;
  } catch (error) {
    const message = `could not keep the record of what this block showed (${(error as Error).message}): an approved apply of this hash will count every destructive change as unreviewed`;
    ctx.log.warn(message);
    return { ...result, warnings: [...result.warnings, message] };
  }
}

async function pruneBlockedRecords(records: RecordStore, keep: string): Promise<void> {
  const older = (await records.listRecords(RECORD_PREFIX)).filter((name) => isRecordName(name) && name !== keep);
  for (const name of older.slice(KEEP_BLOCKED_RECORDS - 1)) await records.deleteRecord(name);
}

/** The approval as the result reports it. */
export type ApprovalState = Pick<NonNullable<Result['approval']>, 'given' | 'matched' | 'required'>;

/** Nothing is applied: the plan waits for an approval of its approval hash (the result says which, and how to give it). */
export function blockedError(
  ctx: RunContext,
  approvalHash: string,
  message: string,
  approval: ApprovalState,
): RunnerError {
  ctx.keep({
    approval,
    approveCommand: approveCommand(ctx.settings.kind, ctx.settings.object, ctx.settings.namespace, approvalHash),
    annotations: { 'captf.io/destructive-plan-blocked': approvalHash },
  });
  return new RunnerError({ kind: 'blocked', reason: 'DestructivePlanBlocked', message });
}

/**
 * Every destructive entry, action and policy finding of the plan, beyond its bounded lists, for what an
 * approval covers (coverApproval): `observer` for planAndClassify's show, `judgement` for the policy's judgement.
 * Only an approved hash can match, so only then are they kept.
 */
export function destructiveCollector(ctx: RunContext) {
  const everyDestructive: DestructiveEntry[] = [];
  if (!isSha256(ctx.settings.approvedHash)) return { everyDestructive, observer: undefined, judgement: {} };
  const observer: PlanObserver = {
    onDestructive: (d: DestructiveChange) => everyDestructive.push(shownChange(d)),
    onAction: (a: PlannedAction) => everyDestructive.push(shownAction(a)),
  };
  return {
    everyDestructive,
    observer,
    judgement: {
      onApprovalRequired: (finding: PolicyApprovalRequired) => everyDestructive.push(shownPolicyFinding(finding)),
    },
  };
}

export interface CoverApprovalOptions {
  plan: Classification;
  everyDestructive: readonly DestructiveEntry[];
  hashes: Pick<InputsHashes, 'approvalHash' | 'inputsHash'>;
  /** The state the apply planned against. */
  before: Pick<StateSummary, 'serial' | 'lineage' | 'recordedInputsHash'>;
  /** The approval that matched, as the decide step reported it. */
  approval: ApprovalState;
}

/**
 * An approved apply (an approval was required and matched): what the approval covered
 * (approvalCoverageStep), kept for the result. It covers the state its blocked run planned against,
 * and no other: then the run is blocked again (the re-block says its own approval), the approval step failed.
 */
export async function coverApproval(ctx: RunContext, options: CoverApprovalOptions): Promise<void> {
  const { plan, hashes, before, approval } = options;
  const otherState = (why: string) => {
    ctx.notice({ code: 'ApprovalOfOtherState', message: why });
    ctx.skip('apply', 'blocked: the approval was given for another state, or nothing records for which');
    return blockedError(ctx, hashes.approvalHash, `${why}. ${blockedMessage(plan, hashes.approvalHash)}`, {
      ...approval,
      matched: false,
    });
  };
  const coverage = await approvalCoverageStep(ctx, {
    plan,
    everyDestructive: options.everyDestructive,
    approvalHash: hashes.approvalHash,
    stateLineage: stateLineage(before),
    inputsHash: hashes.inputsHash,
    stateInputsHash: before.recordedInputsHash,
    refuseOtherState: otherState,
  });
  ctx.keep({ approval: { ...approval, ...coverage } });
}

type Coverage = Pick<NonNullable<Result['approval']>, 'unreviewed' | 'unreviewedTotal' | 'blockedRun'>;
/** What an approval covered, and, when its blocked run planned against another state than this run's, why it covers nothing (otherStateWarning). */
type ApprovalCoverage = Coverage & { otherState?: string };
/** One destructive entry (or, with action "action", one provider action; with "policy", one requireApproval finding) of the approved plan, the fields that identify it. */
export type DestructiveEntry = ShownChange<DestructiveChange['action'] | 'action' | 'policy'>;

export interface ApprovalCoverageOptions {
  plan: Classification;
  everyDestructive: readonly DestructiveEntry[];
  approvalHash: string;
  /** The lineage of the state the apply planned against (null: none). */
  stateLineage: string | null;
  /** This run's inputs hash, and the one the state recorded before it (null: none): was the approval applied once already? */
  inputsHash: string;
  stateInputsHash: string | null;
  /** The error the step fails with when the blocked run planned against another state. */
  refuseOtherState: (why: string) => Error;
}

/**
 * The `approval` step of an approved apply (an approval was required and matched): finds the newest
 * blocked run for `approvalHash`, compares, and warns about what the approval covered unseen.
 * `everyDestructive`: every destructive entry and provider action of the approved plan, beyond the
 * bounded lists of the result (planAndClassify's `onDestructive` and `onAction`). Fails closed: when
 * the comparison fails, every one counts as unreviewed, with a warning.
 */
export async function approvalCoverageStep(ctx: RunContext, options: ApprovalCoverageOptions): Promise<Coverage> {
  const { plan, everyDestructive, refuseOtherState } = options;
  return ctx.step('approval', async () => {
    const { otherState, ...coverage } = await compareFailingClosed(ctx, plan, everyDestructive, options);
    if (otherState) throw refuseOtherState(otherState);
    return coverage;
  });
}

/** What the approval is compared by. */
type Compared = Pick<ApprovalCoverageOptions, 'approvalHash' | 'stateLineage' | 'inputsHash' | 'stateInputsHash'>;

/** compare; when the comparison fails, every entry counts as unreviewed, with a warning (without --expect-lineage, the approval covers nothing: otherState). */
async function compareFailingClosed(
  ctx: RunContext,
  plan: Classification,
  everyDestructive: readonly DestructiveEntry[],
  approval: Compared,
): Promise<ApprovalCoverage> {
  const { approvalHash } = approval;
  try {
    return await compare(ctx, plan, everyDestructive, approval);
  } catch (error) {
    if (ctx.stopCause) throw error;
    // No blocked run was read: without --expect-lineage nothing says this is the state the approval was given for.
    if (!ctx.settings.expectLineage) return { otherState: unknownStateWarning(approvalHash, error as Error) };
    const found = unreviewedChanges(undefined, everyDestructive, undefined, logUnreviewed(ctx));
    // Entries the plan counted but nobody could name were not shown either.
    const unreviewedTotal = Math.max(found.unreviewedTotal, gatedEntries(plan));
    ctx.warn(
      `could not compare the approval of ${approvalHash} with its blocked run (${(error as Error).message}): ` +
        `all ${countText(unreviewedTotal, plan.actionsTotal > 0)} of this plan count as unreviewed. An approval names the inputs, not a reviewed plan: the apply goes ahead as approved.`,
    );
    return { unreviewed: found.unreviewed, unreviewedTotal };
  }
}

/** What an approval of the plan covers, counted: its destructive entries, provider actions and policy requireApproval findings. */
const gatedEntries = (plan: Classification) =>
  plan.destructiveTotal + plan.actionsTotal + (plan.policy?.approvalRequiredTotal ?? 0);

/** The log marks every unreviewed entry (the result and the summary list at most 100). */
const logUnreviewed = (ctx: RunContext) => (c: ShownChange) =>
  ctx.log.warn(
    { address: c.address, deposed: c.deposed, action: c.action, trigger: c.trigger, rule: c.rule },
    `approved without review: ${changeText(c)}`,
  );

async function compare(
  ctx: RunContext,
  plan: Classification,
  everyDestructive: readonly DestructiveEntry[],
  { approvalHash, stateLineage, inputsHash, stateInputsHash }: Compared,
): Promise<ApprovalCoverage> {
  if (everyDestructive.length !== gatedEntries(plan))
    throw new Error(
      `${everyDestructive.length} destructive entries, actions and policy findings were named, but the plan has ${plan.destructiveTotal}, ${plan.actionsTotal} and ${plan.policy?.approvalRequiredTotal ?? 0}`,
    );
  const { runs, looked } = await findBlockedRuns(ctx, approvalHash);
  const { newest: blocked, ignored } = newestBlockedRun(runs);
  looked.push(...ignored);
  // The approval covers the state its blocked run planned against, and no other: the apply blocks again (ops/apply.ts).
  // Without one, only --expect-lineage (checked at state before, before the plan is shown) says this is the state it was given for.
  const otherState = blocked
    ? otherStateWarning(approvalHash, blocked, stateLineage)
    : ctx.settings.expectLineage
      ? undefined
      : unknownStateWarning(approvalHash, looked);
  if (otherState) return { otherState };
  // Without a blocked run the warning below names where the runner looked; with one, say what was passed over.
  if (blocked && ignored.length)
    ctx.warn(`blocked runs passed over for approval hash ${approvalHash}: ${ignored.join('; ')}`);
  const found = unreviewedChanges(blocked, everyDestructive, undefined, logUnreviewed(ctx));
  if (!blocked || found.unreviewedTotal > 0)
    ctx.warn(
      unreviewedWarning(
        approvalHash,
        blocked,
        found,
        looked,
        plan.actionsTotal > 0,
        appliedSinceBlocked(blocked, inputsHash, stateInputsHash),
      ),
    );
  ctx.log.info(
    { blockedRun: blocked?.location, unreviewedTotal: found.unreviewedTotal },
    'approval: compared with the blocked run',
  );
  return {
    unreviewed: found.unreviewed,
    unreviewedTotal: found.unreviewedTotal,
    ...(blocked && { blockedRun: { location: blocked.location, finishedAt: blocked.finishedAt } }),
  };
}

/**
 * A given approval that did not match, explained (guard/approval-mismatch.ts) in the warnings and
 * notices: a malformed one always, a well-formed one when the plan was blocked (elsewhere a stale
 * approval is harmless). A blocked run of this object for the given hash means it approves other inputs.
 */
export async function explainApprovalMismatch(
  ctx: RunContext,
  facts: Omit<ApprovalFacts, 'given' | 'blockedRunFinishedAt' | 'planHashes'> & { planHash: string },
  blocked: boolean,
): Promise<void> {
  const given = ctx.settings.approvedHash;
  if (given === '' || (isSha256(given) && !blocked)) return;
  // Best effort: without the blocked runs the explanation is only less specific.
  const newestFor = (hash: string) =>
    findBlockedRuns(ctx, hash).then(
      ({ runs }) => newestBlockedRun(runs).newest,
      () => undefined,
    );
  const wellFormed = isSha256(given) && given !== facts.approvalHash;
  const shown = wellFormed ? await newestFor(facts.approvalHash) : undefined;
  const other = wellFormed ? await newestFor(given) : undefined;
  const mismatch = approvalMismatch({
    ...facts,
    given,
    planHashes: [facts.planHash, ...(shown?.planHash ? [shown.planHash] : [])],
    ...(other && { blockedRunFinishedAt: other.finishedAt }),
  });
  if (mismatch) ctx.notice(mismatch);
}

/** Every candidate: the record beside the backups, `<out>/result.json`, and in a cluster the blocked Jobs' result Secrets. */
async function findBlockedRuns(
  ctx: RunContext,
  approvalHash: string,
): Promise<{ runs: BlockedRun[]; looked: string[] }> {
  const wanted: BlockedRunWanted = {
    approvalHash,
    object: { kind: ctx.settings.kind, name: ctx.settings.object, namespace: ctx.settings.namespace },
  };
  const runs: BlockedRun[] = [];
  const looked: string[] = [];
  /** `read` gives the text, undefined when there is none, or throws why it is unreadable. */
  const fromRecord = async (location: string, read: () => Promise<string | undefined>) => {
    let text: string | undefined;
    try {
      text = await read();
    } catch (error) {
      looked.push(
        (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? location
          : `${location} (unreadable: ${(error as Error).message})`,
      );
      return;
    }
    if (text === undefined) {
      looked.push(location);
      return;
    }
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      looked.push(`${location} (not JSON)`);
      return;
    }
    const run = readBlockedRun(document, location, wanted);
    if (run) runs.push(run);
    else looked.push(`${location} (not a blocked apply of this object for this hash)`);
  };
  const records = recordStore(ctx);
  const name = blockedRecordName(approvalHash);
  if (records)
    await fromRecord(`${records.location}/${name}`, async () =>
      (await records.getRecord(name, MAX_RECORD_BYTES))?.toString('utf8'),
    );
  const resultFile = join(ctx.settings.out, 'result.json');
  await fromRecord(resultFile, () => readRecordFile(resultFile));
  if (ctx.cluster) {
    const where = `the result Secrets of blocked Jobs in namespace ${ctx.cluster.job.namespace}`;
    try {
      const { found, problems } = await ctx.cluster.blockedResults(approvalHash);
      for (const stored of found) {
        const run = readBlockedRun(stored.document, stored.location, wanted);
        if (run) runs.push(run);
        else problems.push(`${stored.location} is not a blocked apply of this object for this hash`);
      }
      looked.push(problems.length ? `${where} (${problems.join('; ')})` : where);
    } catch (error) {
      looked.push(`${where} (could not be read: ${(error as Error).message})`);
    }
  }
  return { runs, looked };
}
