// apply --plan-artifact: applyPolicy Manual. Applies exactly the plan a person approved by its plan
// hash, never a new plan. The approval binds the plan, so the destructive guard does not apply;
// the mounted inputs must be the ones the plan was made from.
import { constants } from 'node:fs';
import { copyFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { changesOnlyTheRecord } from '../guard/decide.ts';
import { RunnerError } from '../errors.ts';
import { readArtifact } from '../store/artifact-read.ts';
import type { PlanArtifactManifest } from '../store/manifest.ts';
import type { ChunkStore } from '../store/store.ts';
import { backendIdentity } from '../terraform/backend.ts';
import type { TerraformFailed } from '../terraform/terraform.ts';
import { openArtifactSource } from '../run/stores.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding } from '../run/learned.ts';
import { LOCK_FILE, PLAN_FILE } from '../workspace/terraform-files.ts';
import { showStep } from '../steps/plan.ts';
import { applySavedPlan } from '../steps/apply.ts';
import type { PrepareRootOptions } from '../steps/prepare.ts';
import { withOpPrelude } from '../steps/prelude.ts';
import { policyStep, refuseDenied } from '../steps/policy.ts';
import { decideStep } from '../steps/decide.ts';

export async function applyApprovedPlan(ctx: RunContext): Promise<OpEnding> {
  const approved = ctx.settings.approvedPlanHash;
  const source = openArtifactSource(ctx, ctx.settings.planArtifact!, 'plan');
  const policy = await policyStep(ctx);
  let manifest: PlanArtifactManifest | undefined;
  // No validate: the plan is made already. The artifact is read into the fresh workdir before init.
  const prepare: PrepareRootOptions = {
    validate: false,
    beforeInit: async (workspace, inputs) => {
      const artifact = await ctx.step(
        'artifact',
        async () => {
          try {
            return await readArtifact(source.store, source.object, {
              into: join(workspace.privateDir, 'artifact'),
              expect: { kind: 'PlanArtifact', planHash: approved, inputsHash: inputs.hashes.inputsHash },
              maxBytes: ctx.settings.maxArtifactBytes,
            });
          } catch (error) {
            throw await notFound(source, error);
          }
        },
        { learned: ({ manifest }) => ({ planHash: manifest.planHash }) },
      );
      manifest = artifact.manifest;
      await copyFile(artifact.paths[PLAN_FILE]!, workspace.planFile, constants.COPYFILE_EXCL);
      // Held from here: show, the plan check and the apply read this one file.
      await workspace.holdPlan();
      // The providers the plan was made with: init must not pick others.
      if (artifact.paths[LOCK_FILE]) {
        const lockFile = join(workspace.root, LOCK_FILE);
        await rm(lockFile, { force: true }); // the module's copy: replaced by a new file, never written through
        await copyFile(artifact.paths[LOCK_FILE], lockFile, constants.COPYFILE_EXCL);
      }
    },
  };
  return withOpPrelude(ctx, prepare, async ({ root, before }) => {
    await ctx.step('artifact binding', async () =>
      checkBinding(manifest!, { stateLineage: before.lineage || null, backend: await backendIdentity(root.tf) }),
    );
    // Classified for the record and to teach the masker; an errored plan is never applied. The
    // approval binds the plan, so only deny rules and limits judge it again: those no approval passes.
    const plan = await showStep(ctx, {
      tf: root.tf,
      workspace: root.workspace,
      inputs: root.inputs,
      judgement: policy?.judgement({ tool: root.version.flavor, effects: 'deny' }),
    });
    root.inputs.maskSensitiveVariables(plan.sensitiveVariables, ctx.masker);
    await decideStep(ctx, { decide: () => refuseDenied(ctx, plan), holdsBackApply: true });
    ctx.keep({ approval: { given: true, matched: true, required: false } });
    // A plan that changes nothing, not even the record, of a state that records these inputs: nothing to apply, as a guarded apply skips it.
    if (
      changesOnlyTheRecord(plan) &&
      plan.record === undefined &&
      before.recordedInputsHash === root.inputs.hashes.inputsHash
    ) {
      ctx.skip('apply', 'the approved plan has no changes');
      return {
        outcome: 'noChanges',
        reason: 'NoChanges',
        message: `The approved plan ${approved} has no changes: nothing was applied, and the state already records these inputs.`,
      };
    }
    try {
      await applySavedPlan(ctx, {
        root,
        before,
        planHash: manifest!.planHash,
        plan,
        pulledAfterPlan: true,
        onStalePlan: (stale) => stalePlanError(ctx, approved, stale),
      });
    } catch (error) {
      if (ctx.learned().applied || (error as RunnerError).reason === 'PlanStale') await discardSpentPlan(ctx, source);
      throw error;
    }
    await discardSpentPlan(ctx, source);
    return changesOnlyTheRecord(plan)
      ? {
          outcome: 'noChanges',
          reason: 'NoChanges',
          message: `Applied the approved plan ${approved}: no resource changes, it only recorded the inputs hash.`,
        }
      : { outcome: 'succeeded', reason: 'ApplySucceeded', message: `Applied the approved plan ${approved}.` };
  });
}

/**
 * An artifact without a manifest is ArtifactIncomplete, which a retry may pass (a write still under
 * way). One of which the store holds nothing at all, no chunk either, was applied and deleted (or
 * never written): no retry brings it back, only a new plan and approval.
 */
async function notFound(source: { store: ChunkStore; object: string }, error: unknown): Promise<unknown> {
  if ((error as RunnerError).reason !== 'ArtifactIncomplete') return error;
  const { store, object } = source;
  if ((await store.getManifest(object)) !== undefined || (await store.listChunks(object)).length > 0) return error;
  return new RunnerError({
    kind: 'artifact',
    reason: 'ArtifactNotFound',
    message: `the plan artifact ${object} is not in ${store.location}, nor any part of it: a plan artifact is deleted once an apply used it (it can never apply again), or it was never written. Nothing was applied, and no retry finds it. Run plan again and approve the new plan hash.`,
    detail: { location: store.location, object },
    cause: error,
  });
}

/**
 * A saved plan applies once: applied (whatever came of it) or refused as stale, it can never apply
 * again, and it holds secrets (variable values, the prior state). Deleted from its store after the
 * apply; a failure is a warning (the next plan's retention takes it). Not after a stop: the run
 * has seconds left, and a store that hangs must not take them.
 */
async function discardSpentPlan(ctx: RunContext, source: { store: ChunkStore; object: string }): Promise<void> {
  if (ctx.stopCause) return;
  try {
    await source.store.deleteObject(source.object);
    ctx.log.info(
      { location: source.store.location, object: source.object },
      'deleted the applied plan artifact: it can never apply again',
    );
  } catch (error) {
    ctx.warn(
      `could not delete the applied plan artifact ${source.object} from ${source.store.location}: ${(error as Error).message}`,
    );
  }
}

/** terraform refuses a stale plan before it changes anything: nothing was applied, and only a new plan and approval can help. */
function stalePlanError(ctx: RunContext, approved: string, stale: TerraformFailed): RunnerError {
  // terraform apply ran (applied: its definition, kept as it started) and its refusal says it changed nothing.
  ctx.keep({ mayHaveChanged: false });
  return new RunnerError({
    kind: 'plan',
    reason: 'PlanStale',
    step: 'apply',
    message: `the approved plan ${approved} is stale: the state changed after it was planned, and terraform refuses to apply it. Nothing was applied. A new plan and a new approval are needed: run plan again and approve the new plan hash.`,
    detail: stale.detail,
    cause: stale,
  });
}

/**
 * terraform applies a saved plan to the backend recorded in it, so an artifact made for another
 * object's state would change that state while this run backs up and reports its own: refused.
 */
function checkBinding(manifest: PlanArtifactManifest, here: { stateLineage: string | null; backend: string }): void {
  const mismatch = (what: string, detail: Record<string, unknown>) =>
    new RunnerError({
      kind: 'artifact',
      reason: 'ArtifactMismatch',
      message: `the plan artifact ${manifest.object} was planned against ${what}: terraform would apply it there, not to this object's state. Nothing was applied. Pass the artifact this object's plan op wrote, or run plan again.`,
      detail,
    });
  if (manifest.backend === undefined || manifest.stateLineage === undefined)
    throw new RunnerError({
      kind: 'artifact',
      reason: 'ArtifactMismatch',
      message: `the plan artifact ${manifest.object} does not say which state it was planned against (an earlier runner wrote it): terraform could apply it to another state. Nothing was applied. Run plan again and approve the new plan hash.`,
    });
  if (manifest.backend !== here.backend)
    throw mismatch('another backend (a different state location)', {
      expectedBackend: here.backend,
      foundBackend: manifest.backend,
    });
  if (manifest.stateLineage !== here.stateLineage)
    throw mismatch(
      manifest.stateLineage === null
        ? 'no state, and this backend now holds one'
        : `a state of lineage ${manifest.stateLineage}, and this backend holds ${here.stateLineage ?? 'no state'}`,
      { expectedLineage: here.stateLineage, foundLineage: manifest.stateLineage },
    );
}
