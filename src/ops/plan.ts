// plan: for applyPolicy Manual. A saved plan a person reviews and approves by its plan hash,
// packed with what applying it later needs, into the artifact store. Nothing is applied.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { confirmArtifact, writeArtifact, type ArtifactFile } from '../store/artifact-write.ts';
import { timeStamp } from '../util/stamp.ts';
import { changesOnlyTheRecord, gateCauses } from '../guard/decide.ts';
import { countsText } from '../output/summary.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding } from '../run/learned.ts';
import { artifactRefOf, artifactStore } from '../run/stores.ts';
import type { PreparedRoot } from '../steps/prepare.ts';
import { heldPlan, planAndClassify } from '../steps/plan.ts';
import { pruneQuietly } from '../steps/backup.ts';
import type { StateSummary } from '../state/summary.ts';
import { withOpPrelude } from '../steps/prelude.ts';
import { policyStep, refuseDenied } from '../steps/policy.ts';
import { decideStep } from '../steps/decide.ts';
import { backendIdentity } from '../terraform/backend.ts';
import { LOCK_FILE, PLAN_FILE } from '../workspace/terraform-files.ts';

export async function planOp(ctx: RunContext): Promise<OpEnding> {
  const store = artifactStore(ctx);
  const policy = await policyStep(ctx);
  // The state before is read from the saved plan (steps/state-planned.ts), as a guarded apply reads it: no
  // pull before the plan, unless an errored state a previous run kept is pushed first.
  return withOpPrelude(ctx, { stateFromPlan: true }, async ({ root, before: pulledFirst }) => {
    const { planned, plan, planHash, planText, before } = await planAndClassify(ctx, {
      root,
      before: pulledFirst,
      recordHash: root.inputs.hashes.inputsHash,
      show: { judgement: policy?.judgement({ tool: root.version.flavor }) },
    });
    ctx.keep({ planText });
    // A denied plan is never packed: nobody can approve it into an apply.
    await decideStep(ctx, { decide: () => refuseDenied(ctx, plan) });
    await ctx.step('artifact', () => packPlan(ctx, root, before, planHash, store), {
      learned: (planArtifact) => ({ planArtifact }),
    });
    if (!planned.hasChanges)
      return { outcome: 'noChanges', reason: 'NoChanges', message: `The plan has no changes (plan hash ${planHash}).` };
    // Under Manual a plan that changes nothing is applied without approval: one that only records new inputs is such a plan.
    if (changesOnlyTheRecord(plan))
      return {
        outcome: 'noChanges',
        reason: 'NoChanges',
        message: `The plan changes nothing but the recorded inputs hash (plan hash ${planHash}): applying it needs no approval.`,
      };
    const causes = plan.gated ? ` It needs an approval: ${gateCauses(plan).join('; ')}.` : '';
    return {
      outcome: 'succeeded',
      reason: 'PlanCreated',
      message: `Planned: ${countsText(plan.counts)}.${causes} Review it and approve plan hash ${planHash}.`,
    };
  });
}

async function packPlan(
  ctx: RunContext,
  root: PreparedRoot,
  before: Pick<StateSummary, 'lineage'>,
  planHash: string,
  store: NonNullable<ReturnType<typeof artifactStore>>,
) {
  // The held file, not the path: the artifact holds the plan that was hashed and classified.
  const files: ArtifactFile[] = [{ name: PLAN_FILE, path: heldPlan(root.workspace).reopenPath }];
  const lockFile = await readFile(join(root.workspace.root, LOCK_FILE)).catch(() => undefined);
  if (lockFile) files.push({ name: LOCK_FILE, data: lockFile });
  // Time first, so names sort by age; the hash, so a re-plan never collides with a complete artifact.
  const object = `plan-${timeStamp()}-${planHash.slice(0, 12)}`;
  const manifest = await writeArtifact(
    store,
    object,
    files,
    {
      kind: 'PlanArtifact',
      terraformVersion: root.version.version,
      op: 'plan',
      planFile: PLAN_FILE,
      planHash,
      inputsHash: root.inputs.hashes.inputsHash,
      // What the plan is bound to: applying it is refused against any other state (apply-artifact.ts). The
      // lineage of the state the saved plan names (its `tfstate` header), which terraform's apply checks too.
      stateLineage: before.lineage || null,
      backend: await backendIdentity(root.tf),
    },
    { chunkBytes: ctx.settings.chunkBytes, maxBytes: ctx.settings.maxArtifactBytes },
  );
  // An object keeps one plan at a time: the plans it superseded are garbage.
  await pruneQuietly(ctx, store, { keep: 1, prefix: 'plan-', protect: [object] });
  await confirmArtifact(
    store,
    manifest,
    'a newer plan of the same object, run at the same time, deleted it (an object keeps one plan: the newer plan offers its own hash), or the store removed it. There is no plan to approve from this run: approve the newer plan, or run plan again',
  );
  return artifactRefOf(store, object, manifest);
}
