// What each op runs against and which image it runs (contract/sections/decide-op.md, "The decision").
// Every op decision is built here, so no rule can pick inputs or an image of its own.
import type { OpDecision, OpReason } from './decision.ts';
import type { ObjectKind } from '../object-kind.ts';
import type { ModelOp, Snapshot } from './snapshot.ts';

/** A TerraformMachine's inputs never change after creation; clusters and pools are mutable. */
export const isMutable = (kind: ObjectKind): boolean => kind !== 'machine';

export function inputsFor(op: ModelOp, kind: ObjectKind): OpDecision['inputs'] {
  switch (op) {
    case 'apply':
    case 'plan':
      return 'current';
    case 'refresh':
    case 'drift':
      // An immutable kind reads the durable inputs: its Machine and bootstrap Secret may be gone.
      return isMutable(kind) ? 'current' : 'durable';
    case 'destroy':
      return 'durable';
    case 'restore':
      return 'none'; // a backend-only root and the backup chunks
  }
}

/** Only apply and plan run the spec's image as written; the rest run the pinned digest when there is one. */
export function imageFor(op: ModelOp, pinnedDigest: string | undefined): Pick<OpDecision, 'image' | 'events'> {
  if (op === 'apply' || op === 'plan') return { image: 'spec' };
  if (pinnedDigest !== undefined) return { image: 'pinned' };
  return { image: 'spec', events: ['DigestUnknown'] };
}

export function opDecision(
  snapshot: Snapshot,
  op: ModelOp,
  reason: OpReason,
  approval: Pick<OpDecision, 'approvedInputsHash' | 'approvedPlanHash'> = {},
): OpDecision {
  return {
    kind: 'op',
    op,
    reason,
    inputs: inputsFor(op, snapshot.object.kind),
    ...imageFor(op, snapshot.image.pinnedDigest),
    ...approval,
  };
}
