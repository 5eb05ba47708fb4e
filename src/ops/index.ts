// Which function runs each op. Each op is a short sequence of steps (see steps.ts).
import type { Op } from '../contract/result.ts';
import type { RunContext } from './context.ts';
import type { OpEnding, ResultFields } from './run.ts';

export type OpFunction = (ctx: RunContext, fields: ResultFields) => Promise<OpEnding>;

/** Each op's code loads when that op runs: an apply never loads restore's (start-up, issue 6). */
export const OPS: Record<Op, () => Promise<OpFunction>> = {
  apply: async () => (await import('./apply.ts')).applyOp,
  plan: async () => (await import('./plan.ts')).planOp,
  refresh: async () => (await import('./refresh.ts')).refreshOp,
  drift: async () => (await import('./drift.ts')).driftOp,
  destroy: async () => (await import('./destroy.ts')).destroyOp,
  restore: async () => (await import('./restore.ts')).restoreOp,
  unlock: async () => (await import('./unlock.ts')).unlockOp,
};
