// Which code runs each op. Each op is a short sequence of steps (src/steps/) that return what they
// learn; the op builds its ending from them.
import type { Op, Result } from '../schemas/result.ts';
import type { RunContext } from '../run/context.ts';
import type { OpEnding } from '../run/learned.ts';

export interface OpModule {
  run: (ctx: RunContext) => Promise<OpEnding>;
  /** The op's own use of its finished result, before the sinks get it (apply keeps the record of a block): returns what is published. */
  beforePublish?: (ctx: RunContext, result: Result) => Promise<Result>;
}

/** Each op's code loads when that op runs: an apply never loads restore's (every Job pays for what loads at start). */
export const OPS: Record<Op, () => Promise<OpModule>> = {
  apply: async () => {
    const [{ applyOp }, { withBlockedRecord }] = await Promise.all([
      import('./apply.ts'),
      import('./approval-coverage.ts'),
    ]);
    return { run: applyOp, beforePublish: withBlockedRecord };
  },
  plan: async () => ({ run: (await import('./plan.ts')).planOp }),
  refresh: async () => ({ run: (await import('./refresh.ts')).refreshOp }),
  drift: async () => ({ run: (await import('./drift.ts')).driftOp }),
  destroy: async () => ({ run: (await import('./destroy.ts')).destroyOp }),
  restore: async () => ({ run: (await import('./restore.ts')).restoreOp }),
  unlock: async () => ({ run: (await import('./unlock.ts')).unlockOp }),
};
