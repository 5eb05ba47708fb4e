// apply --plan-artifact: applyPolicy Manual. Applies exactly the plan a person approved by its plan
// hash, never a new plan. The approval binds the plan, so the destructive guard does not apply;
// the mounted inputs must be the ones the plan was made from.
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { changesOnlyTheRecord } from '../guard/decide.ts';
import { RunnerError, usageError } from '../errors.ts';
import { readArtifact } from '../store/chunked.ts';
import { openArtifactSource } from './stores.ts';
import type { RunContext } from './context.ts';
import type { OpEnding, ResultFields } from './run.ts';
import { LOCK_FILE_NAME, PLAN_FILE_NAME } from './plan.ts';
import { applySavedPlan, prepareRoot, showStep } from './steps.ts';
import { stateBeforeStep } from './state-steps.ts';
import { isSha256 } from '../util/sha256.ts';

export async function applyApprovedPlan(ctx: RunContext, fields: ResultFields): Promise<OpEnding> {
  const approved = ctx.settings.approvedPlanHash;
  if (!isSha256(approved))
    throw usageError('PlanNotApproved', `--plan-artifact needs --approved-plan-hash: the sha256 (64 lowercase hex) of the plan a person approved, not "${approved}"`);
  const source = openArtifactSource(ctx, ctx.settings.planArtifact!, 'plan');
  const root = await prepareRoot(ctx, fields, {
    validate: false,
    beforeInit: async (workspace, inputs) => {
      const artifact = await ctx.step('artifact', () =>
        readArtifact(source.store, source.object, { into: join(workspace.privateDir, 'artifact'), expect: { kind: 'PlanArtifact', planHash: approved, inputsHash: inputs.hashes.inputsHash } }),
      );
      fields.planHash = artifact.manifest.planHash;
      await copyFile(artifact.paths[PLAN_FILE_NAME]!, workspace.planFile);
      // The providers the plan was made with: init must not pick others.
      if (artifact.paths[LOCK_FILE_NAME]) await copyFile(artifact.paths[LOCK_FILE_NAME], join(workspace.root, LOCK_FILE_NAME));
    },
  });
  try {
    const before = await stateBeforeStep(ctx, root.tf, root.workspace, fields);
    // Classified for the record and to teach the masker; an errored plan is never applied.
    const plan = await showStep(ctx, root.tf, root.workspace, fields);
    root.inputs.maskSensitiveVariables(plan.sensitiveVariables, ctx.masker);
    fields.approval = { given: true, matched: true, required: false };
    try {
      await applySavedPlan(ctx, root, before, fields);
    } catch (error) {
      if (!(error instanceof RunnerError) || error.detail?.stale !== true) throw error;
      // terraform refuses a stale plan before it changes anything.
      fields.applied = false;
      ctx.mutationStarted = false;
      throw new RunnerError({
        kind: 'plan',
        reason: 'PlanStale',
        step: 'apply',
        message: `the approved plan ${approved} is stale: the state changed after it was planned, and terraform refuses to apply it. Nothing was applied. A new plan and a new approval are needed: run plan again and approve the new plan hash.`,
        detail: error.detail,
        cause: error,
      });
    }
    return changesOnlyTheRecord(plan)
      ? { outcome: 'noChanges', reason: 'NoChanges', message: `Applied the approved plan ${approved}: no resource changes, it only recorded the inputs hash.` }
      : { outcome: 'succeeded', reason: 'ApplySucceeded', message: `Applied the approved plan ${approved}.` };
  } finally {
    await root.workspace.dispose();
  }
}
