// Which function runs each op. Each op is a short sequence of steps (see steps.ts).
import type { Op } from '../schemas/result.ts';
import type { RunContext } from './context.ts';
import type { OpEnding, ResultFields } from './finish.ts';

export type OpFunction = (ctx: RunContext, fields: ResultFields) => Promise<OpEnding>;

/** Each op's code loads when that op runs: an apply never loads restore's (every Job pays for what loads at start). */
export const OPS: Record<Op, () => Promise<OpFunction>> = {
  apply: async () => (await import('../ops/apply.ts')).applyOp,
  plan: async () => (await import('../ops/plan.ts')).planOp,
  refresh: async () => (await import('../ops/refresh.ts')).refreshOp,
  drift: async () => (await import('../ops/drift.ts')).driftOp,
  destroy: async () => (await import('../ops/destroy.ts')).destroyOp,
  restore: async () => (await import('../ops/restore.ts')).restoreOp,
  unlock: async () => (await import('../ops/unlock.ts')).unlockOp,
};
