// The state before a guarded apply or a plan (ops/plan.ts), read from the saved plan instead of a
// `terraform state pull` before the plan (issue 44: one launch fewer). terraform writes the state it
// planned against into the plan file (workspace/plan-prior-state.ts): the header of `tfstate` names the
// lineage and serial an apply of the plan replaces, `tfstate-prev` holds that state as the backend held
// it. Until the runner has read it, terraform's plan output is kept back, stderr included (plan-text.ts),
// so nothing of a plan is printed before the masker knows the state's secrets (and when it never does, a
// warning says why); a plan that fails has the state pulled then, before its stderr's tail is masked. A
// guarded apply's backup is still the backend's own bytes, pulled once the decision is to apply (ops/apply.ts).
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { StateSecretScan } from '../state/secrets.ts';
import { summarizeState, type StateSummary } from '../state/summary.ts';
import {
  copyPlanEntry,
  PlanFileUnreadable,
  planPriorState,
  PREVIOUS_STATE_ENTRY,
  type PositionalFile,
} from '../workspace/plan-prior-state.ts';
import type { RunContext } from '../run/context.ts';
import type { PreparedRoot } from './prepare.ts';
import { RunnerError } from '../errors.ts';
import {
  isPlannedState,
  learnStateSecrets,
  plannedState,
  pullState,
  pullStateBefore,
  refuseOtherState,
  stateLearned,
  stateLineage,
  type PulledState,
} from './state.ts';

/** The root an op plans in. */
type PlanRoot = Pick<PreparedRoot, 'tf' | 'workspace'>;

/** Whether the masker has learned the secrets of the state before the op, and so whether what the plan kept back may be printed. */
export interface StateLearning {
  learnedNow(): void;
  /** The state the plan was made against could not be read: why, for the warning that nothing of the plan is printed. */
  unreadable(why: string): void;
  /** What the plan kept back is of no use (its state is refused): nothing of it is printed. */
  discard(): void;
  /** Why what the plan kept back is not printed; undefined when it may be (plan-text.ts warns with it). */
  withheld(): string | undefined;
  beforeTail(ended: { exitCode: number | undefined }): Promise<void>;
}

/**
 * The state the saved plan was made against, checked (--expect-lineage) and taught to the masker, as
 * stateBeforeStep does before a plan: from the plan file, or, when it says nothing (no zip: an
 * encrypted plan; no `tfstate-prev`), pulled from the backend now.
 */
export async function statePlannedStep(
  ctx: RunContext,
  {
    root,
    held,
    learning,
  }: {
    root: PlanRoot;
    held: PositionalFile;
    learning: Pick<StateLearning, 'learnedNow' | 'unreadable' | 'discard'>;
  },
): Promise<StateSummary> {
  return ctx.step(
    'state before',
    async () => {
      let state: StateSummary;
      try {
        state = await plannedStateOf(ctx, { root, held });
      } catch (error) {
        learning.unreadable(`the state the plan was made against could not be read (${(error as Error).message})`);
        throw error instanceof PlanFileUnreadable ? planUnreadable(error) : error;
      }
      learning.learnedNow();
      try {
        refuseOtherState(state, ctx.settings.expectLineage, { planned: true });
      } catch (error) {
        learning.discard(); // a plan against a state that is not the object's is not shown
        throw error;
      }
      return state;
    },
    { learned: (state) => stateLearned(state, state) },
  );
}

/** The state the saved plan names, its secrets taught to the masker: read from the plan file, or pulled when the file says nothing. */
async function plannedStateOf(ctx: RunContext, { root, held }: { root: PlanRoot; held: PositionalFile }) {
  const planned = await planPriorState(held);
  const file = join(root.workspace.privateDir, 'state-planned.json');
  const copied = planned === 'notZip' ? 'notZip' : await copyPlanEntry(held, PREVIOUS_STATE_ENTRY, file);
  if (planned === 'notZip' || copied !== 'written') {
    const pulled = await pullStateBefore(root.tf, root.workspace, 'state-planned-pull.json');
    await learnStateSecrets(ctx, pulled);
    return pulled;
  }
  const secrets = new StateSecretScan();
  const previous = await summarizeState(createReadStream(file), { secrets }).catch((error: unknown) => {
    if (!(error instanceof RunnerError && error.reason === 'StateUnreadable')) throw error;
    throw new PlanFileUnreadable(
      `its ${PREVIOUS_STATE_ENTRY} entry is no state document (${(error.cause as Error).message})`,
    );
  });
  await learnStateSecrets(ctx, { file, secrets });
  // The header of `tfstate-prev` is a stub: the lineage and serial are `tfstate`'s.
  return { ...previous, ...plannedState(planned) };
}

/** A plan file terraform wrote just now whose state before cannot be read: the plan is neither applied nor printed. */
const planUnreadable = (error: PlanFileUnreadable) =>
  new RunnerError({
    kind: 'plan',
    reason: 'PlanUnreadable',
    message:
      `the saved plan file holds no state the runner can read: ${error.message}. Nothing was applied, and nothing ` +
      `of the plan was printed (the runner cannot mask the secrets of a state it has not read). terraform writes ` +
      `its plan files itself: a terraform other than the image's (--terraform), a wrapper that rewrites them, or ` +
      `a damaged disk makes such a file; run the image's terraform, or report it with \`terraform version\`.`,
    cause: error,
  });

/**
 * For a plan whose state before is read from its saved plan: the masker learns the state's secrets
 * before the plan's kept-back output is printed, through statePlannedStep when the plan succeeds and
 * through `beforeTail` (the state pulled once terraform has ended) when it fails, so a failed plan's
 * diagnostics are masked with them too, and the result still names the state before. Until it has,
 * nothing of the plan is printed, and `withheld` says why.
 */
export function stateLearning(ctx: RunContext, root: PlanRoot): StateLearning {
  let learned = false;
  let discarded = false;
  let unread: string | undefined;
  return {
    learnedNow: () => {
      learned = true;
    },
    unreadable: (why) => {
      unread = why;
    },
    discard: () => {
      discarded = true;
    },
    withheld: () => {
      const secrets =
        "terraform may print the state's secrets, which the runner masks only once it has read that state";
      if (discarded)
        return "the plan was made against a state that is not the object's (--expect-lineage), and is discarded";
      if (learned) return undefined;
      if (unread) return `${unread}: ${secrets}`;
      return ctx.stopCause
        ? `the run was stopped before it read the state the plan was made against: ${secrets}`
        : `the run ended before it read the state the plan was made against: ${secrets}`;
    },
    /** The plan's beforeTail: exit 0 and 2 are a saved plan, read by statePlannedStep. */
    async beforeTail({ exitCode }: { exitCode: number | undefined }): Promise<void> {
      if (exitCode === 0 || exitCode === 2 || ctx.stopCause) return;
      try {
        const pulled = await pullStateBefore(root.tf, root.workspace, 'state-failed-plan.json');
        await learnStateSecrets(ctx, pulled);
        learned = true;
        // result.state never names a state that is not the object's: a controller takes the next lineage from it.
        const expected = ctx.settings.expectLineage;
        if (expected === undefined || stateLineage(pulled) === expected) ctx.keep(stateLearned(pulled, pulled));
        else
          ctx.warn(
            `the backend holds ${stateText(pulled)}, not the object's state (lineage ${expected}, --expect-lineage): the next run refuses it`,
          );
      } catch (error) {
        unread = `the plan failed, and the state before it could not be read (${(error as Error).message})`;
      }
    },
  };
}

/**
 * The backend's state, pulled once the decision is to apply: the backup's bytes and the state the result
 * reports the apply against. It must be the state the plan was made against; else another run wrote it
 * after the plan, terraform would refuse the stale plan, and nothing is backed up or applied.
 */
export async function stateToReplaceStep(
  ctx: RunContext,
  { root, planned }: { root: PlanRoot; planned: StateSummary },
): Promise<PulledState> {
  return ctx.step(
    'state before',
    async () => {
      const state = await pullState(root.tf, join(root.workspace.privateDir, 'state-before.json'));
      if (isPlannedState(planned, state)) return state;
      const found = stateLineage(state);
      throw new RunnerError({
        kind: 'terraform',
        reason: 'ApplyFailed',
        message: `the state changed after the plan was made (planned against ${stateText(planned)}, the backend now holds ${stateText(state)}): another run wrote it, and terraform would refuse this stale plan. Nothing was backed up or applied; the next run plans against the state as it is now.`,
        detail: {
          plannedLineage: stateLineage(planned),
          plannedSerial: planned.serial,
          foundLineage: found,
          foundSerial: state.serial,
        },
      });
    },
    { learned: (state) => stateLearned(state, state) },
  );
}

const stateText = (state: StateSummary) =>
  stateLineage(state) === null ? 'no state' : `serial ${state.serial} of lineage ${state.lineage}`;
