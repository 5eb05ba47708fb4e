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

/** What the controller knows of the object's image: the spec's reference, and the last successful apply's reference and the digest pinned from it. */
export interface ObjectImages {
  spec: string;
  /** The reference the last successful apply ran, as written (its `--image`). */
  applied?: string;
  /** The digest pinned after that apply, `sha256:<64 hex>`. */
  pinnedDigest?: string;
}

/** The image a Job runs, the `--image` it is given, and the event its fallback to the spec's reference emits. */
export interface JobImage {
  container: string;
  imageFlag: string;
  events?: ['DigestUnknown'];
}

/**
 * The image a Job runs and the `--image` it is given. `--image` is part of the inputs hash, so it names
 * the image of the inputs the op acts on: an apply or plan runs the spec's reference and passes it;
 * every other op runs the digest pinned from the last successful apply and passes that apply's
 * reference as written, so a refresh or drift reports the inputs hash the apply recorded (a tag and
 * its digest are different references, and would hash differently). A pinned image needs both: with
 * the digest but not the reference (the durable Secret lost), the repository the digest is of is
 * unknown, and the Job falls back to the spec's reference as without a digest, never silently: it
 * emits `DigestUnknown` (choosing-the-operation.md).
 */
export function jobImage(image: OpDecision['image'], images: ObjectImages): JobImage {
  if (image === 'spec') return { container: images.spec, imageFlag: images.spec };
  if (images.pinnedDigest === undefined || images.applied === undefined)
    return { container: images.spec, imageFlag: images.spec, events: ['DigestUnknown'] };
  return { container: `${repositoryOf(images.applied)}@${images.pinnedDigest}`, imageFlag: images.applied };
}

/** A reference without its tag and digest: `registry:5000/team/module:v1@sha256:…` → `registry:5000/team/module`. */
function repositoryOf(reference: string): string {
  const named = reference.split('@')[0]!;
  const lastSlash = named.lastIndexOf('/');
  const colon = named.indexOf(':', lastSlash + 1);
  return colon === -1 ? named : named.slice(0, colon);
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
