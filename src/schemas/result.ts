// The result of one run: <out>/result.json, the termination message (compact form), the result
// Secret and the Job annotations are all made from this one object. Zod is the single source of
// truth; contract/result.schema.json is generated from it (npm run schema).
import * as z from './zod.ts';
import { Classification, DestructiveAction, DriftEntry, ResourceEntry } from './classification.ts';
import { OBJECT_KINDS } from '../object-kind.ts';
import { SHA256_HEX } from '../util/sha256.ts';
import { CONTRACT_VERSION } from '../version.ts';
import {
  ERROR_KINDS,
  OPS,
  OUTCOMES,
  REASONS,
  RESULT_REASONS,
  type ErrorKind,
  type ResultReason,
} from '../vocabulary/reasons.ts';
import { STEP_NAMES, type StepName } from '../vocabulary/steps.ts';

export const RESULT_API_VERSION = CONTRACT_VERSION;

export const Op = z.enum(OPS);
export type Op = z.infer<typeof Op>;

/** The kind of object a run serves. */
export const Kind = z.enum(OBJECT_KINDS);

export const Outcome = z.enum(OUTCOMES);
export type Outcome = z.infer<typeof Outcome>;

/** The reasons a result can carry (contract/sections/reasons.md: each with its kind, outcome and exit code). */
export const ResultReasonName = z
  .enum(RESULT_REASONS as [ResultReason, ...ResultReason[]])
  .describe('one of the reasons of contract/sections/reasons.md');
/** The reasons a result's `error` can carry: those of failures. */
const ResultErrorReasonName = z.enum(
  RESULT_REASONS.filter((reason) => REASONS[reason].kind !== null) as [ResultReason, ...ResultReason[]],
);
export const ErrorKindName = z.enum(Object.keys(ERROR_KINDS) as [ErrorKind, ...ErrorKind[]]);
/** A step's name: one of the steps of contract/sections/reasons.md. */
export const StepNameEnum = z.enum(STEP_NAMES as [StepName, ...StepName[]]);

/** A sha256 as the contract writes it (hashes, approvals, digests). */
export const Sha256 = z.string().regex(SHA256_HEX, 'a sha256 as 64 lowercase hex characters');
const Timestamp = z.string().describe('RFC 3339 time in UTC');

export const Step = z.strictObject({
  name: StepNameEnum,
  status: z.enum(['ok', 'failed', 'skipped', 'interrupted']),
  startedAt: Timestamp,
  durationMs: z.nonNegativeInt(),
  exitCode: z.number().int().optional().describe("terraform's exit code, for steps that run it"),
});
export type Step = z.infer<typeof Step>;

/** At most this many of terraform's diagnostics are kept in error.detail.diagnostics, in terraform's order. */
export const DIAGNOSTICS_LIMIT = 20;
/** A diagnostic's summary and detail are cut to this many bytes of UTF-8. */
export const DIAGNOSTIC_TEXT_BYTES = 1024;

/** One of terraform's diagnostics, where it points: never the quoted source or the values terraform notes under it. */
export const TerraformDiagnostic = z.strictObject({
  severity: z.enum(['error', 'warning']),
  summary: z.string().describe(`terraform's summary, masked, at most ${DIAGNOSTIC_TEXT_BYTES} bytes`),
  detail: z
    .string()
    .optional()
    .describe(
      `what terraform says is wrong (its paragraphs separated by a blank line), masked, at most ${DIAGNOSTIC_TEXT_BYTES} bytes; a path of the runner's workdir is replaced by the module-relative or inputs file name`,
    ),
  file: z
    .string()
    .optional()
    .describe(
      "where terraform points: a path relative to the module root (main.tf, modules/net/main.tf), or an inputs file's name (terraform.tfvars.json, sensitive.tfvars.json: then `variable` names the variable and there is no line, since terraform read the runner's canonical copy)",
    ),
  line: z.number().int().positive().optional().describe('the line in `file`, from 1'),
  variable: z.string().optional().describe('the variable a diagnostic about an inputs file is about'),
});
export type TerraformDiagnostic = z.infer<typeof TerraformDiagnostic>;

export const ResultError = z.strictObject({
  kind: ErrorKindName,
  reason: ResultErrorReasonName,
  step: StepNameEnum.optional().describe(
    'the step of steps[] the run stopped in; absent exactly when no step ran (steps[] is empty)',
  ),
  message: z.string(),
  detail: z
    .looseObject({
      diagnostics: z
        .array(TerraformDiagnostic)
        .max(DIAGNOSTICS_LIMIT)
        .optional()
        .describe(`a failed terraform command's diagnostics, in terraform's order, at most ${DIAGNOSTICS_LIMIT}`),
      diagnosticsTotal: z
        .nonNegativeInt()
        .optional()
        .describe('how many diagnostics terraform printed, when more than the list holds'),
    })
    .optional()
    .describe('machine-readable detail of the error; members depend on the reason'),
});

export const OutputValue = z.strictObject({
  sensitive: z.boolean(),
  known: z.boolean().describe('false when terraform has no value for it yet'),
  type: z.unknown().optional(),
  value: z.unknown().optional().describe('Absent for sensitive outputs: their values go only to the result Secret'),
});
export type OutputValue = z.infer<typeof OutputValue>;

export const StateInfo = z.strictObject({
  serialBefore: z.number().int().nullable(),
  serialAfter: z.number().int().nullable(),
  lineage: z.string().nullable(),
});

export const UnreviewedChange = z.looseObject({
  address: z.string(),
  deposed: z.string().optional().describe('Deposed object key, when the entry is a deposed object'),
  action: z
    .union([DestructiveAction, z.literal('action'), z.literal('policy')])
    .describe(
      'delete, replace or unknown for a destructive entry; action for a provider action; policy for a requireApproval finding (plan.policy.approvalRequired)',
    ),
  trigger: z.string().optional().describe("A provider action's trigger (plan.actions[].trigger)"),
  rule: z.string().optional().describe('A policy finding\'s rule; its address is "plan" for an on: plan rule'),
});

export const Approval = z.strictObject({
  given: z.boolean().describe('An approval hash was passed'),
  matched: z.boolean().describe('It equals the hash the runner computed'),
  required: z.boolean().describe('The plan needed an approval to be applied'),
  unreviewed: z
    .array(UnreviewedChange)
    .optional()
    .describe(
      'Present when an approval was required and matched: the destructive entries, provider actions and policy requireApproval findings of the applied plan that the blocked run for the same approval hash did not list (same address, deposed key and action; an action: same address and trigger; a finding: same rule and address), at most 100; every entry when no blocked run was found. Empty: the person was shown all of them',
    ),
  unreviewedTotal: z.nonNegativeInt().optional().describe('How many unreviewed entries in all'),
  blockedRun: z
    .strictObject({
      location: z.string().describe('Where its result was read: a file path or secret:<namespace>/<name>'),
      finishedAt: Timestamp,
    })
    .optional()
    .describe(
      'The blocked run the approval was compared with (the newest for this approval hash); absent when none was found',
    ),
});

export const Drift = z.strictObject({
  found: z.boolean().describe('The plan would change a resource (the recorded inputs hash aside)'),
  outputsOnly: z.boolean().describe('Only root outputs differ'),
  resourceDrift: z.array(DriftEntry).describe('What terraform reported changed outside terraform (resource_drift)'),
  resourceDriftTotal: z.nonNegativeInt(),
  inputsDiffer: z
    .array(ResourceEntry)
    .describe(
      'The changes a remediation apply would make at objects terraform did not report changed outside terraform: the inputs or the module ask for other values than the state records (of the changes plan.changes lists)',
    ),
  inputsDifferTotal: z.nonNegativeInt(),
  remediationDestructive: z
    .boolean()
    .describe(
      'Whether a remediation apply would need an approval (found and plan.gated: it deletes or replaces, runs a provider action, or holds what the runner cannot read)',
    ),
});

export type Drift = z.infer<typeof Drift>;

export const ArtifactRef = z.strictObject({
  location: z.string().describe('the store: a directory, or secret:<namespace>/<prefix>'),
  object: z.string(),
  ref: z
    .string()
    .describe(
      'the reference to pass back, ready: --plan-artifact, --backup and the captf.io/restore-state annotation take it (<location>/<object>)',
    ),
  sha256: Sha256.describe('sha256 of the whole packed payload'),
  chunks: z.number().int().positive(),
  bytes: z.nonNegativeInt(),
});
export type ArtifactRef = z.infer<typeof ArtifactRef>;

export const Lock = z.strictObject({
  id: z.string().optional(),
  path: z.string().optional(),
  operation: z.string().optional(),
  who: z.string().optional().describe("terraform's user@hostname of the holder"),
  host: z
    .string()
    .optional()
    .describe(
      "who's hostname: in a pod, the holder pod's name (its Job's name and a suffix; the pod's label batch.kubernetes.io/job-name names the Job)",
    ),
  created: z.string().optional().describe('when the lock was taken: RFC 3339, UTC'),
  holderKnown: z.boolean().describe('false when the backend reports the waiting process instead of the holder (pg)'),
});

/**
 * The codes of result.notices: each warning a machine may act on, with its code. Listed in contract.md
 * (§4, Notices); a new code is additive under v1 (a reader ignores a code it does not know).
 */
export const NOTICE_CODES = [
  /** --approved-hash is not 64 lowercase hex (case, whitespace, a `sha256:` prefix). */
  'ApprovalMalformed',
  /** --approved-hash is this run's plan hash, not its approval hash. */
  'ApprovalIsPlanHash',
  /** --approved-hash is this run's inputs hash, and the approval hash differs (a pool with bootstrap_data). */
  'ApprovalIsInputsHash',
  /** --approved-hash names other inputs: the ones the state records, or a blocked run's. */
  'ApprovalOfOtherInputs',
  /** --approved-hash is none of the hashes the runner knows: not this run's approval hash. */
  'ApprovalMismatch',
  /** The approval's blocked run planned against a state of another lineage, or none was found and no --expect-lineage names the state: blocked again, and the controller withdraws the approval. */
  'ApprovalOfOtherState',
  /** A variable in the inputs that the module does not declare. */
  'UndeclaredVariable',
  /** An inputs file named like a variables file the runner does not read. */
  'VariablesFileNotRead',
  /** A TF_VAR_* variable in the runner's environment: never passed to terraform. */
  'TfVarIgnored',
  /** `hash` without an image reference: the hashes name an empty one. */
  'ImageEmpty',
  /** refresh, drift: this run's inputs hash is not the one the state records (other inputs, or the pinned digest as --image). */
  'StateRecordsOtherInputs',
  /** A CAPTF_* variable that is no setting (a misspelt name): ignored, and said. */
  'SettingVariableUnknown',
  /** An errored state a previous run kept (terraform could not save it) was pushed before anything planned (result.erroredStatePushed). */
  'ErroredStatePushed',
  /** A previous run's apply of the object never finished (the runner was killed): what it may have created outside the state (result.killedApply). */
  'KilledApplyFound',
  /** Another run's apply marker whose writer may still run (before its --deadline): an overlapping Job's live apply, left alone. */
  'ApplyMayBeRunning',
  /** The module calls nonsensitive(): each call named by file and line (at most 20, the rest counted), for review. */
  'NonsensitiveCalls',
] as const;
export const NoticeCode = z.enum(NOTICE_CODES);
export type NoticeCode = z.infer<typeof NoticeCode>;
export const Notice = z.strictObject({
  code: NoticeCode,
  message: z.string().describe('the same text as its entry in `warnings`'),
});
export type Notice = z.infer<typeof Notice>;

/** The most addresses an apply marker (and so result.killedApply) lists. */
export const KILLED_APPLY_MAX_ADDRESSES = 50;

export const KilledApply = z.strictObject({
  marker: z.string().describe('the marker the killed run wrote, `<location>/<object>` (deleted since)'),
  op: z.string().describe('the op of the killed run'),
  planHash: z.string().describe('the sha256 of the plan it was applying'),
  startedAt: Timestamp.describe('when its terraform apply started'),
  addresses: z
    .array(z.string())
    .max(KILLED_APPLY_MAX_ADDRESSES)
    .describe('the addresses the plan created or replaced, the first 50: their objects may exist outside the state'),
  addressesLeftOut: z
    .nonNegativeInt()
    .describe(
      'create or replace entries not in `addresses` (at most this many where the plan listed only part of its changes)',
    ),
  earlier: z
    .nonNegativeInt()
    .describe('markers of earlier killed runs found beside it (each reported in a notice, deleted)'),
});
export type KilledApply = z.infer<typeof KilledApply>;

export const Result = z.strictObject({
  apiVersion: z.literal(RESULT_API_VERSION),
  op: Op,
  outcome: Outcome,
  reason: ResultReasonName,
  message: z.string(),
  exitCode: z.number().int(),
  runnerVersion: z.string(),
  terraform: z.strictObject({ version: z.string(), flavor: z.enum(['terraform', 'opentofu']) }).optional(),
  object: z.strictObject({
    kind: Kind,
    name: z.string().optional(),
    namespace: z.string().optional(),
  }),
  inputsHash: Sha256.optional(),
  approvalHash: Sha256.optional().describe(
    'The hash an approval must name: the approval hash of a pool, else the inputs hash',
  ),
  stateInputsHash: Sha256.nullable().optional().describe('The inputs hash the state records after the run'),
  approval: Approval.optional(),
  approveCommand: z.string().optional(),
  plan: Classification.optional(),
  planHash: Sha256.optional().describe('sha256 of the saved plan file'),
  planText: z
    .string()
    .optional()
    .describe("terraform's human-readable plan, masked, at most 64 KiB (apply, plan, drift, destroy)"),
  planArtifact: ArtifactRef.optional(),
  backup: ArtifactRef.optional().describe(
    'The backup of the state this run took before changing it (apply, destroy, restore)',
  ),
  restoredFrom: ArtifactRef.optional().describe('restore: the backup it restored'),
  applied: z.boolean().describe('Whether terraform apply ran (and so may have changed infrastructure)'),
  mayHaveChanged: z.boolean().describe('Whether infrastructure or state may differ from before the run'),
  state: StateInfo.optional(),
  outputs: z.record(z.string(), OutputValue).optional(),
  drift: Drift.optional(),
  lock: Lock.optional(),
  erroredState: z
    .strictObject({ pushed: z.boolean(), keptAt: z.string().optional() })
    .optional()
    .describe(
      'terraform could not persist the state and left errored.tfstate: pushed to the backend, or kept at keptAt',
    ),
  erroredStatePushed: z
    .strictObject({
      from: z.string().describe("the kept errored state, as a previous run's erroredState.keptAt named it"),
      lineage: z.string(),
      serial: z
        .number()
        .int()
        .describe("its serial (terraform's push may write the state one serial above it: state.serialBefore says)"),
      replacedSerial: z
        .number()
        .int()
        .nullable()
        .describe("the serial of the backend's state it replaced (null: the backend held no state)"),
      backup: ArtifactRef.optional().describe('the backup of the state it replaced (absent: the backend held none)'),
    })
    .optional()
    .describe(
      'An errored state a previous run kept (it could not push it) was pushed to the backend before anything planned, and deleted from the store',
    ),
  killedApply: KilledApply.optional().describe(
    "A previous run's apply of the object started and never finished (the runner was killed): its marker, found in the backup store before anything planned, reported once and deleted",
  ),
  steps: z.array(Step),
  annotations: z.record(z.string(), z.string()).describe('Annotations for the controller to set on the Job'),
  warnings: z.array(z.string()),
  notices: z
    .array(Notice)
    .optional()
    .describe(
      'The warnings a machine may act on, each with its code (a subset of `warnings`, in the same order); always written by this runner, absent in results of runners before it',
    ),
  error: ResultError.optional(),
  startedAt: Timestamp,
  finishedAt: Timestamp,
});
export type Result = z.infer<typeof Result>;

/**
 * The termination message (src/output/termination.ts): the compact result, at most 4096 bytes. Only
 * apiVersion, op, outcome, reason and exitCode are always there: the smallest form keeps nothing
 * else. Open like the result: a v1 reader ignores members it does not know.
 */
export const TerminationMessage = z.looseObject({
  apiVersion: Result.shape.apiVersion,
  op: Op,
  outcome: Outcome,
  reason: ResultReasonName,
  exitCode: z.number().int(),
  inputsHash: Result.shape.inputsHash,
  approvalHash: Result.shape.approvalHash,
  stateInputsHash: Result.shape.stateInputsHash,
  planHash: Result.shape.planHash,
  applied: z.boolean().optional(),
  mayHaveChanged: z.boolean().optional(),
  error: z
    .looseObject({ kind: ErrorKindName, reason: ResultErrorReasonName, step: StepNameEnum.optional() })
    .optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  destructiveTotal: z.nonNegativeInt().optional(),
  actionsTotal: z.nonNegativeInt().optional(),
  unreviewedTotal: z.nonNegativeInt().optional(),
  message: z.string().optional().describe("the result's message, cut (with …) to fit"),
  destructive: z
    .array(
      z.looseObject({
        address: z.string(),
        action: DestructiveAction,
        deposed: z.string().optional(),
        previousAddress: z.string().optional(),
      }),
    )
    .optional()
    .describe('the first destructive entries (a moved one with where it was)'),
  destructiveOmitted: z.nonNegativeInt().optional().describe('destructive entries left out of `destructive`'),
  actions: z
    .array(z.looseObject({ address: z.string(), trigger: z.string() }))
    .max(5)
    .optional()
    .describe('the first provider actions, only when there are any'),
  actionsOmitted: z.nonNegativeInt().optional().describe('actions left out of `actions` (present with `actions`)'),
  policy: z
    .looseObject({
      denied: z
        .array(z.looseObject({ rule: z.string(), address: z.string().optional(), message: z.string().max(300) }))
        .max(5),
      deniedTotal: z.nonNegativeInt(),
      approvalRequired: z.array(z.looseObject({ rule: z.string(), address: z.string().optional() })).max(5),
      approvalRequiredTotal: z.nonNegativeInt(),
    })
    .optional()
    .describe('what the policy found (plan.policy), the first of each list: only when a policy judged the plan'),
  killedApply: z
    .looseObject({
      startedAt: z.string(),
      addresses: z.array(z.string().max(300)).max(5),
      addressesLeftOut: z.nonNegativeInt(),
    })
    .optional()
    .describe(
      "result.killedApply, the first addresses (each cut to 300 characters; the smallest forms keep none): only when a previous run's apply was killed",
    ),
  warnings: z.array(z.string().max(300)).max(3).optional().describe('the last warnings, each cut to 300 characters'),
});
export type TerminationMessage = z.infer<typeof TerminationMessage>;
