// What every op that plans opens with (apply, apply --plan-artifact, plan, refresh, drift, destroy):
// the prepared root (prepare.ts) and the state before the op (errored-state.ts: an errored state a
// previous run kept pushed first, the applies it left killed reported), then the op's own steps; the
// saved plan and the workdir removed however the op ends.
import type { RunContext } from '../run/context.ts';
import { stateBeforeOp } from './errored-state.ts';
import { removePlanFile } from './plan.ts';
import { prepareRoot, type PreparedRoot, type PrepareRootOptions } from './prepare.ts';
import type { PulledStateBefore } from './state.ts';

/** What an op's own steps start from. */
export interface OpPrelude {
  root: PreparedRoot;
  /** The state before the op, checked (--expect-lineage) and taught to the masker before anything plans. */
  before: PulledStateBefore;
}

/**
 * The same for an op that reads the state before from its saved plan (`stateFromPlan`: a guarded
 * apply, a plan; state-planned.ts): `before` only when it was pulled first, to push a kept errored state.
 */
export interface PlanFirstPrelude {
  root: PreparedRoot;
  before: PulledStateBefore | undefined;
}

/** Runs `body` on the prepared root and the state before the op; the saved plan (secret material) and the workdir do not outlive it. */
export async function withOpPrelude<T>(
  ctx: RunContext,
  options: PrepareRootOptions & { stateFromPlan: true },
  body: (prelude: PlanFirstPrelude) => Promise<T>,
): Promise<T>;
export async function withOpPrelude<T>(
  ctx: RunContext,
  options: PrepareRootOptions,
  body: (prelude: OpPrelude) => Promise<T>,
): Promise<T>;
export async function withOpPrelude<T>(
  ctx: RunContext,
  options: PrepareRootOptions & { stateFromPlan?: boolean },
  body: (prelude: OpPrelude) => Promise<T>,
): Promise<T> {
  const fromPlan = options.stateFromPlan === true;
  const root = await prepareRoot(ctx, { ...options, pullStateBefore: !fromPlan });
  try {
    const where = { tf: root.tf, workspace: root.workspace };
    const before = fromPlan
      ? await stateBeforeOp(ctx, { ...where, fromPlan })
      : await stateBeforeOp(ctx, { ...where, pulling: root.stateBefore });
    // Undefined only with stateFromPlan, whose overload's body takes a PlanFirstPrelude.
    return await body({ root, before: before as PulledStateBefore });
  } finally {
    try {
      await removePlanFile(root.workspace);
    } finally {
      await root.workspace.dispose();
    }
  }
}
