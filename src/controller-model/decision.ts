// What DecideOp returns: start one op, wait, or drop the finalizer. Reasons are the docs' names;
// the waits the docs leave unnamed use the names listed in contract/sections/decide-op.md.
import * as z from '../schemas/zod.ts';
import { ApplyReason, ModelOp } from './snapshot.ts';

export const ScheduleReason = z.enum([
  'RefreshAfterApply',
  'MembershipConverging',
  'HealthPending',
  'MembershipRefreshDue',
  'HealthCheckDue',
  'DriftDue',
]);
export type ScheduleReason = z.infer<typeof ScheduleReason>;

export const OpReason = z.enum(['RestoreRequested', 'Deleting', ...ApplyReason.options, ...ScheduleReason.options]);
export type OpReason = z.infer<typeof OpReason>;

export const WaitReason = z.enum([
  'JobActive',
  'DeletionHeld',
  'UpToDate',
  // Not named by the docs:
  'StateUnreadable', // a live object whose state is lost or unreadable
  'DestroyFoundNoState', // deleting: the newest destroy Job found no state where the controller reads one
  'PlanApprovalPending', // Manual: a plan with changes waits for its approval
  'DestructivePlanApprovalPending', // the newest apply of these inputs was blocked
  'BackingOff', // the op failed recently
  'HeldForChange', // the op's last Job ended so that a retry fails the same way: it waits for the spec, image or inputs to change
]);
export type WaitReason = z.infer<typeof WaitReason>;

export const OpDecision = z.strictObject({
  kind: z.literal('op'),
  op: ModelOp,
  reason: OpReason,
  inputs: z.enum(['current', 'durable', 'none']),
  image: z.enum(['spec', 'pinned']),
  events: z.array(z.literal('DigestUnknown')).optional(),
  approvedInputsHash: z
    .string()
    .optional()
    .describe('Pass as the destructive-plan approval: the annotation equals the rendered hash'),
  approvedPlanHash: z.string().optional().describe('Manual: the plan to apply'),
});
export type OpDecision = z.infer<typeof OpDecision>;

export const WaitDecision = z.strictObject({
  kind: z.literal('wait'),
  reason: WaitReason,
  requeueAfterSeconds: z.number().int().positive(),
  heldOp: z
    .strictObject({ op: ModelOp, reason: OpReason })
    .optional()
    .describe('The op the wait holds back (approval and backoff waits)'),
});
export type WaitDecision = z.infer<typeof WaitDecision>;

const DropFinalizerDecision = z.strictObject({
  kind: z.literal('dropFinalizer'),
  reason: z.literal('DeletingWithoutState'),
});

export const Decision = z.discriminatedUnion('kind', [OpDecision, WaitDecision, DropFinalizerDecision]);
export type Decision = z.infer<typeof Decision>;
