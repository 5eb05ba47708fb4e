// What DecideOp reads: one snapshot of an object, taken by the controller when no decision has been
// made yet. Plain JSON (times as RFC 3339 UTC strings, durations in whole seconds) so that a
// controller in another language can build the same thing and replay contract/vectors/decide-op.json.
// Zod is the single source of truth for the shape; contract/sections/decide-op.md explains each field.
import * as z from '../schemas/zod.ts';
import { Kind } from '../schemas/result.ts';

const Time = z.iso.datetime().describe('RFC 3339 time in UTC, e.g. 2025-06-01T12:00:00Z');
const Hash = z.string().min(1);
const Seconds = z.number().int().positive();

/** The ops DecideOp can choose (unlock is run by hand, never decided). */
export const ModelOp = z.enum(['apply', 'plan', 'refresh', 'drift', 'destroy', 'restore']);
export type ModelOp = z.infer<typeof ModelOp>;

/** The reasons of rules 5–9: why an apply is due. */
export const ApplyReason = z.enum([
  'NoState',
  'StateWithoutInputsHash',
  'InputsChanged',
  'LastApplyFailed',
  'DriftRemediation',
]);
export type ApplyReason = z.infer<typeof ApplyReason>;

export const FinishedJob = z.strictObject({
  op: ModelOp,
  outcome: z
    .enum(['succeeded', 'failed', 'blocked', 'interrupted', 'deadlineExceeded'])
    .describe('succeeded includes noChanges; interrupted means stopped from outside (drain, eviction, Job delete)'),
  finishedAt: Time,
  reason: z.string().optional().describe('The decision reason the Job ran for (apply Jobs: an ApplyReason)'),
  runnerReason: z
    .string()
    .min(1)
    .optional()
    .describe("The runner's reason (termination message or result Secret); absent when the runner wrote none"),
  inputsHash: Hash.optional().describe(
    'The inputs hash the controller rendered for the Job (what it passed, never read back from the result)',
  ),
  generation: z.nonNegativeInt().optional().describe("The object's metadata.generation the Job was built from"),
  controllerVersion: z.string().min(1).optional().describe('The version of the controller that built the Job'),
});
export type FinishedJob = z.infer<typeof FinishedJob>;

/** The newest apply that was not blocked (a blocked apply does not mark the last apply as failed). */
export const NewestApply = z.strictObject({
  outcome: z
    .enum(['succeeded', 'failed', 'interrupted'])
    .describe('interrupted: the Job vanished or was stopped mid-run'),
  finishedAt: Time,
  outputReading: z
    .enum(['definite', 'pending', 'unknown'])
    .describe("What the apply's own output says of health and membership; only read when it succeeded"),
});

const StateReading = z.discriminatedUnion('status', [
  z.strictObject({ status: z.literal('absent') }),
  z.strictObject({ status: z.literal('lostOrUnreadable') }),
  z.strictObject({
    status: z.literal('present'),
    inputsHash: Hash.nullable().describe('null: state without an inputs hash'),
  }),
]);

export const Snapshot = z
  .strictObject({
    now: Time,
    controllerVersion: z.string().min(1).optional().describe("The controller's own version: an upgrade ends a hold"),
    object: z.strictObject({
      uid: z.string().min(1),
      kind: Kind,
      creationTimestamp: Time,
      generation: z.nonNegativeInt().optional().describe('metadata.generation: a spec edit ends a hold'),
      applyPolicy: z.enum(['Automatic', 'Manual']).optional().describe('TerraformCluster only; absent means Automatic'),
      deleting: z.boolean(),
    }),
    image: z.strictObject({
      pinnedDigest: z.string().min(1).optional().describe('The digest pinned after the last successful apply'),
    }),
    inputs: z.strictObject({
      currentHash: Hash.nullable().describe('The inputs hash the controller renders now; null for a deleting object'),
      approvalHash: Hash.optional().describe('Pools: the inputs hash without bootstrap_data. Defaults to currentHash'),
    }),
    state: StateReading,
    jobs: z.strictObject({
      active: z.boolean(),
      finished: z.array(FinishedJob).describe("The object's retained finished Jobs, in any order"),
      failedJobsHistoryLimit: z.number().int().optional().describe('Default 3, counted as at least 1'),
    }),
    applies: z.strictObject({
      newest: NewestApply.optional(),
      lastSucceededAt: Time.optional(),
    }),
    blockedApply: z
      .strictObject({
        hash: Hash.describe('The inputs hash (pools: approval hash) the blocked apply rendered'),
        reason: ApplyReason.describe('Why the blocked apply was due'),
        approvalSpent: z
          .boolean()
          .optional()
          .describe(
            'The blocked apply was given the approval and blocked again with the notice ApprovalOfOtherState, and the controller has not read captf.io/approve-destructive-plan without this hash since (absent or naming another): an annotation naming it is the spent one, never passed again. Absent: false',
          ),
      })
      .optional()
      .describe('Present while the newest apply attempt was blocked before a destructive plan'),
    annotations: z.strictObject({
      restoreState: z
        .strictObject({ backup: z.string().min(1), complete: z.boolean(), consumed: z.boolean() })
        .optional()
        .describe('captf.io/restore-state and what the controller knows of the backup it names'),
      approveDestructivePlan: z.string().optional().describe('captf.io/approve-destructive-plan'),
      recordedPlan: z
        .strictObject({ inputsHash: Hash, planHash: Hash, hasChanges: z.boolean(), recordedAt: Time })
        .optional()
        .describe('Manual: the newest plan recorded for the object'),
      approvedPlanHash: z.string().optional().describe('Manual: the plan hash the plan approval annotation names'),
    }),
    drift: z.strictObject({
      intervalSeconds: Seconds,
      action: z.enum(['Report', 'Remediate']),
      remediationFailedLimit: z.nonNegativeInt(),
      lastCheck: z.strictObject({ at: Time, found: z.boolean() }).optional(),
    }),
    refresh: z.strictObject({
      lastRunAt: Time.optional().describe('status.lastRefresh'),
      healthPendingReadings: z
        .nonNegativeInt()
        .describe('Consecutive readings (apply output or refresh) that read health pending; 0 when not pending'),
      membership: z
        .strictObject({ converging: z.boolean(), intervalSeconds: Seconds })
        .optional()
        .describe('Pools only'),
      healthCheckIntervalSeconds: Seconds.optional().describe('Present when health remediation is on'),
    }),
  })
  .superRefine((s, ctx) => {
    const problem = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (s.object.applyPolicy && s.object.kind !== 'cluster') problem('applyPolicy is for a TerraformCluster only');
    if (s.refresh.membership && s.object.kind !== 'pool') problem('refresh.membership is for a pool only');
    if (!s.object.deleting && s.inputs.currentHash === null) problem('a live object needs inputs.currentHash');
    const newest = s.applies.newest;
    if (newest?.outcome === 'succeeded' && s.applies.lastSucceededAt !== newest.finishedAt) {
      problem('applies.lastSucceededAt must equal applies.newest.finishedAt when the newest apply succeeded');
    }
  });
export type Snapshot = z.infer<typeof Snapshot>;

/** Validates a snapshot that came from outside (a vector file, another process). */
export const parseSnapshot = (value: unknown): Snapshot => Snapshot.parse(value);
