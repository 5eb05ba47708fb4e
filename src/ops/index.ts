// Which function runs each op. Each op is a short sequence of steps (see steps.ts).
import type { Op } from '../contract/result.ts';
import type { RunContext } from './context.ts';
import type { OpEnding, ResultFields } from './run.ts';
import { applyOp } from './apply.ts';
import { planOp } from './plan.ts';
import { refreshOp } from './refresh.ts';
import { driftOp } from './drift.ts';
import { destroyOp } from './destroy.ts';
import { restoreOp } from './restore.ts';
import { unlockOp } from './unlock.ts';

export type OpFunction = (ctx: RunContext, fields: ResultFields) => Promise<OpEnding>;

export const OPS: Record<Op, OpFunction> = {
  apply: applyOp,
  plan: planOp,
  refresh: refreshOp,
  drift: driftOp,
  destroy: destroyOp,
  restore: restoreOp,
  unlock: unlockOp,
};
