// The runner's closed vocabulary of reasons: every reason a run or a command can end with, in one
// table. A reason says what happened (its kind and outcome) and the exit code the process ends with;
// the exit code says whether a retry can help, and so what a controller does with a Job that ended
// so (controller-model/actions.ts). RunnerError.reason and the result's `reason` are typed by it,
// the exit code is read from it (run/exit-codes.ts), and contract/sections/reasons.md and
// contract/controller-actions.json are generated from it (scripts/generators/gen-vocabulary.ts). Pure data:
// it imports nothing.

/** What a result's `outcome` can be. */
export const OUTCOMES = ['succeeded', 'noChanges', 'blocked', 'failed', 'interrupted', 'invalid'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The ops a Job runs (unlock is run by hand, never decided by the controller). */
export const OPS = ['apply', 'plan', 'refresh', 'drift', 'destroy', 'restore', 'unlock'] as const;
export type Op = (typeof OPS)[number];

/** The class of a failure: `error.kind`. */
export const ERROR_KINDS = {
  usage: 'bad flags, settings or inputs: the caller must change them',
  image: 'the image or its module breaks the contract',
  terraform: 'terraform ran and failed',
  plan: 'the plan is unusable (errored, unreadable, stale) or refused',
  blocked: 'a gated plan without the matching approval',
  policy: "the image's policy denies the plan: no approval passes it",
  lock: 'the state lock: held by someone else, or a release refused',
  artifact: 'a plan artifact or backup is missing, damaged or not the one asked for',
  state: 'the state could not be read, restored or checked',
  io: 'the runner could not read or write its own files',
  kube: 'the Kubernetes API refused or failed',
  interrupted: 'a signal or the deadline stopped the run',
  internal: 'a bug in the runner',
} as const;
export type ErrorKind = keyof typeof ERROR_KINDS;

/** The exit codes (contract.md §5). */
export const EXIT = {
  succeeded: 0,
  failed: 1,
  usage: 2,
  blocked: 3,
  imageInvalid: 4,
  planStale: 5,
  /** drift with --detailed-exitcode: drift found (the outcome stays succeeded). */
  driftFound: 6,
  /** The backend holds another state than the object's (--expect-lineage): a person must point the run at the object's state or restore it. */
  otherState: 7,
  /** A plan policy denies the plan (PolicyDenied): no approval passes it, and a CI job tells it from a broken module (4). */
  policyDenied: 8,
  deadline: 124,
  sigint: 130,
  sigterm: 143,
} as const;
type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export interface ReasonRow {
  /** `error.kind`; null for a reason that is no error (the op did its job). */
  readonly kind: ErrorKind | null;
  /** The outcomes a result with this reason has (more than one only for DestroySucceeded: nothing to destroy is noChanges). */
  readonly outcomes: readonly Outcome[];
  readonly exitCode: ExitCode;
  /** The other exit codes a run that ends with it may have: Interrupted's 130 (SIGINT; 143 is SIGTERM's). */
  readonly alsoExitCodes?: readonly ExitCode[];
  /** The Jobs that can end with it; empty: it is never a result's reason (a command's, `captf-runner local`'s). */
  readonly ops: readonly Op[];
  /** One line: what happened and what changes it. */
  readonly meaning: string;
}

const PLANNING = ['apply', 'plan', 'refresh', 'drift', 'destroy'] as const satisfies readonly Op[];
const WITH_STATE = [...PLANNING, 'restore'] as const satisfies readonly Op[];
const EVERY_OP = OPS;
/** Ops that read or write an artifact or a backup: plan artifacts, state backups, a kept errored.tfstate (every op that plans looks for one). */
const WRITERS = ['apply', 'plan', 'refresh', 'drift', 'destroy', 'restore'] as const satisfies readonly Op[];
/** Ops that read an artifact: apply --plan-artifact, restore's backup. */
const READERS = ['apply', 'restore'] as const satisfies readonly Op[];

type Row<K extends ErrorKind | null> = ReasonRow & { readonly kind: K };
const done = (ops: readonly Op[], meaning: string, outcomes: readonly Outcome[] = ['succeeded']): Row<null> => ({
  kind: null,
  outcomes,
  exitCode: EXIT.succeeded,
  ops,
  meaning,
});
const failed = <K extends ErrorKind>(
  kind: K,
  ops: readonly Op[],
  meaning: string,
  exitCode: ExitCode = EXIT.failed,
): Row<K> => ({ kind, outcomes: ['failed'], exitCode, ops, meaning });
const invalid = <K extends ErrorKind>(kind: K, exitCode: ExitCode, ops: readonly Op[], meaning: string): Row<K> => ({
  kind,
  outcomes: ['invalid'],
  exitCode,
  ops,
  meaning,
});
/** A reason only a command outside a Job ends with (classify, hash, contract check, `captf-runner local`). */
const command = <K extends ErrorKind>(
  kind: K,
  exitCode: ExitCode,
  meaning: string,
): Row<K> & { readonly ops: readonly [] } => ({
  kind,
  outcomes: [kind === 'usage' || kind === 'image' ? 'invalid' : 'failed'],
  exitCode,
  ops: [],
  meaning,
});

export const REASONS = {
  // The op did its job.
  ApplySucceeded: done(['apply'], 'the apply changed what the plan said; the state records the inputs hash'),
  NoChanges: done(
    ['apply', 'plan'],
    'nothing to change but, at most, the recorded inputs hash (apply: recorded; plan: its plan applies without approval)',
    ['noChanges'],
  ),
  PlanCreated: done(
    ['plan'],
    'a plan that changes something was saved as an artifact: approve its plan hash to apply it',
  ),
  RefreshSucceeded: done(['refresh'], 'the state was refreshed from the real infrastructure'),
  DriftFound: done(
    ['drift'],
    'the plan would change something: changed outside terraform, or inputs that differ from the state',
  ),
  NoDrift: done(['drift'], 'the real infrastructure and the inputs match the state'),
  DestroySucceeded: done(
    ['destroy'],
    'everything in the state was destroyed (noChanges: there was nothing to destroy)',
    ['succeeded', 'noChanges'],
  ),
  RestoreSucceeded: done(['restore'], "the backup is the backend's newest state"),
  Unlocked: done(['unlock'], 'the stale lock was released'),
  NotLocked: done(['unlock'], 'there was no lock to release', ['noChanges']),
  NoStateFound: done(
    ['destroy'],
    "the backend holds no state at all: nothing was destroyed, and the run may have been pointed at another place than the object's state (never DestroySucceeded)",
    ['noChanges'],
  ),

  // Blocked: an approval passes it, nothing else.
  DestructivePlanBlocked: {
    kind: 'blocked',
    outcomes: ['blocked'],
    exitCode: EXIT.blocked,
    ops: ['apply'],
    meaning:
      'the plan is gated (a delete or replace, a provider action, what the runner cannot read, a policy requireApproval) and the approval hash was not given: nothing applied',
  },

  // Usage: the flags, settings or inputs must change.
  SettingsInvalid: invalid(
    'usage',
    EXIT.usage,
    EVERY_OP,
    'a setting has an invalid value (a flag or its CAPTF_* variable): the message names it',
  ),
  UsageInvalid: invalid(
    'usage',
    EXIT.usage,
    EVERY_OP,
    'the command line is wrong: an unknown flag, or a flag of another op',
  ),
  GuardRequired: invalid(
    'usage',
    EXIT.usage,
    ['apply'],
    '--guard off with --kind cluster: a cluster apply is always guarded',
  ),
  PlanNotApproved: invalid('usage', EXIT.usage, ['apply'], '--plan-artifact without a valid --approved-plan-hash'),
  BackupMissing: invalid('usage', EXIT.usage, ['restore'], 'restore without --backup'),
  LockIdMissing: invalid('usage', EXIT.usage, ['unlock'], 'unlock without --lock-id'),
  SummaryMdUnusable: invalid(
    'usage',
    EXIT.usage,
    ['apply', 'plan', 'drift', 'destroy'],
    '--summary-md FILE is no regular file of its own (a link, a FIFO, a device, a hard link) or one the run reads or writes: nothing ran',
  ),
  OutDirUnusable: invalid(
    'usage',
    EXIT.usage,
    EVERY_OP,
    '--out cannot be created or written, or result.json there is no regular file: nothing ran',
  ),
  BackupsDirUnusable: invalid(
    'usage',
    EXIT.usage,
    EVERY_OP,
    '--backups, given explicitly, cannot be created or written: nothing ran',
  ),
  ModuleDirMissing: invalid(
    'usage',
    EXIT.usage,
    EVERY_OP,
    "--module DIR, given on the command line, does not exist or is no directory: nothing ran (the image's module missing is ImageInvalid)",
  ),
  StateDirMissing: invalid(
    'usage',
    EXIT.usage,
    EVERY_OP,
    "--state FILE's directory does not exist (and no --new-state): nothing ran",
  ),
  StateFileMissing: invalid(
    'usage',
    EXIT.usage,
    EVERY_OP,
    '--state FILE does not exist in an existing directory, or is empty or whitespace only (and no --new-state): a typo or a truncated file would start a new, empty state; nothing ran',
  ),
  StateFileInWorkdir: invalid(
    'usage',
    EXIT.usage,
    EVERY_OP,
    '--state FILE is inside --workdir, which the runner removes or clears: the state would be lost with the run; refused after init, nothing read',
  ),
  StateLocationMissing: invalid(
    'usage',
    EXIT.usage,
    EVERY_OP,
    'the module has no backend and no --state was given: the state would be lost with the workdir',
  ),
  InputsInvalid: invalid(
    'usage',
    EXIT.usage,
    PLANNING,
    'the inputs: unreadable or invalid JSON, a negative zero, or terraform refused a value (a required variable missing, a wrong type, a failed validation)',
  ),
  ArtifactPathWrongLevel: invalid(
    'usage',
    EXIT.usage,
    READERS,
    '--plan-artifact or --backup names a directory one level too high or too low: the message names the path that works',
  ),
  ArtifactReferenceInvalid: invalid(
    'usage',
    EXIT.usage,
    READERS,
    "a secret: reference that is malformed or given outside a cluster, or a store reference that is not an object of this run's --store",
  ),
  StoreNeedsObject: invalid(
    'usage',
    EXIT.usage,
    EVERY_OP,
    '--store without --object, or without --namespace outside a cluster: a store keeps backups and plan artifacts per CAPTF object, by its namespace, kind and name',
  ),
  InvalidStoreLocation: invalid(
    'usage',
    EXIT.usage,
    WRITERS,
    'a Secret store prefix that is no valid Secret name (its length or its characters)',
  ),
  InvalidObjectName: invalid(
    'usage',
    EXIT.usage,
    WRITERS,
    "an artifact or backup object name that breaks the store's naming rule",
  ),
  InvalidChunkBytes: invalid('usage', EXIT.usage, WRITERS, 'a chunk size outside 1024–750000 bytes'),
  InvalidRetention: invalid('usage', EXIT.usage, WRITERS, 'keep fewer than one backup'),
  ExtractDirNotEmpty: invalid(
    'usage',
    EXIT.usage,
    READERS,
    'an artifact would be unpacked into a directory that is not empty',
  ),
  KubeConfigInvalid: invalid(
    'usage',
    EXIT.usage,
    EVERY_OP,
    'a Job identity without --object, or without a usable service account token, CA or API address',
  ),
  LineageMismatch: invalid(
    'state',
    EXIT.usage,
    ['restore'],
    "the backup is of another state (its lineage differs from the backend's): nothing pushed; only --force replaces that state",
  ),
  BackupMismatch: invalid(
    'artifact',
    EXIT.usage,
    ['restore'],
    'what --backup names is no state backup this runner reads (a plan artifact, another manifest version): nothing pushed',
  ),
  LockIdMismatch: invalid(
    'lock',
    EXIT.usage,
    ['unlock'],
    'the lock carries another id than --lock-id: nothing was touched, and the same id never will be',
  ),
  UnlockUnsupported: invalid(
    'lock',
    EXIT.usage,
    ['unlock'],
    "the backend's lock has no id to release (pg: it ends with its holder's connection)",
  ),

  // The image or its module must change.
  ImageInvalid: invalid(
    'image',
    EXIT.imageInvalid,
    EVERY_OP,
    'the image or module breaks the contract: no or an unsupported terraform, a module terraform refuses, reserved or unsafe files, a policy that does not load, …',
  ),
  StateInWorkdir: invalid(
    'image',
    EXIT.imageInvalid,
    EVERY_OP,
    'the module\'s local backend keeps the state inside the runner\'s workdir (backend "local" {}, a relative path): it would vanish with the run; refused after init, nothing read',
  ),
  BackendMismatch: invalid(
    'image',
    EXIT.imageInvalid,
    EVERY_OP,
    "init configured another backend than the module's (or --state's): nothing read or applied",
  ),
  PolicyDenied: invalid(
    'policy',
    EXIT.policyDenied,
    ['apply', 'plan'],
    "the image's policy denies the plan (a deny rule or a limit): no approval passes it; the module, the inputs or the policy must change",
  ),
  RefreshRefused: failed(
    'plan',
    ['refresh'],
    "the refresh-only plan is gated (it moves the runner's record, runs a provider action, holds what the runner cannot read): nobody can approve a refresh, the module must change",
    EXIT.imageInvalid,
  ),

  // The state is not the object's: a person must act.
  StateLineageMismatch: failed(
    'state',
    PLANNING,
    "--expect-lineage: the backend holds a state of another lineage, or none: nothing applied (a guarded apply and a plan refuse it once the plan is made, the plan discarded; every other op before it plans); every retry finds the same until a person points the run at the object's state or restores it (outside the spec, the image and the inputs: retried with backoff, never held)",
    EXIT.otherState,
  ),
  ErroredStateUnpushable: failed(
    'state',
    PLANNING,
    "the store holds an errored state a previous run kept (terraform could not save it) that cannot be pushed safely (another lineage, a serial not above the backend's, more than one): nothing planned; a person restores it or deletes it",
    EXIT.otherState,
  ),

  // The approved plan is void: a new plan and approval.
  PlanStale: failed(
    'plan',
    ['apply'],
    'apply --plan-artifact: the state changed after the approved plan was made; terraform refused it before changing anything',
    EXIT.planStale,
  ),
  ArtifactMismatch: failed(
    'artifact',
    ['apply'],
    'apply --plan-artifact: the artifact is not the approved plan, was made from other inputs, or planned against another backend or state',
    EXIT.planStale,
  ),
  ArtifactNotFound: failed(
    'artifact',
    ['apply'],
    'apply --plan-artifact: the store holds nothing of the approved artifact (applied once and deleted, or never written): no retry finds it',
    EXIT.planStale,
  ),

  // Failures a later attempt may pass.
  InitFailed: failed('terraform', EVERY_OP, 'terraform init failed (a diagnostic not on the list of those that recur)'),
  ValidateFailed: failed('terraform', PLANNING, 'terraform validate failed'),
  PlanFailed: failed('terraform', PLANNING, 'terraform plan failed'),
  ShowFailed: failed('terraform', PLANNING, 'terraform show -json failed'),
  ApplyFailed: failed(
    'terraform',
    ['apply'],
    "terraform apply failed: what it saved is in the state, the runner's record as before",
  ),
  RefreshFailed: failed('terraform', ['refresh'], 'the refresh-only apply failed'),
  DestroyFailed: failed(
    'terraform',
    ['destroy'],
    'the destroy apply failed: the next destroy continues from what is left',
  ),
  StatePullFailed: failed('terraform', WITH_STATE, 'terraform state pull failed'),
  StatePushFailed: failed('terraform', WITH_STATE, 'terraform state push failed'),
  UnlockFailed: failed(
    'terraform',
    ['unlock'],
    'terraform force-unlock failed, or the lock info still names the id after the lock was taken and released',
  ),
  BackendUnknown: failed('terraform', ['apply', 'plan'], 'init recorded no backend the runner can name'),
  TerraformFailed: failed(
    'terraform',
    EVERY_OP,
    'terraform could not be started (other than missing or not executable)',
  ),
  StateLocked: failed(
    'lock',
    WITH_STATE,
    'the state lock is held by another run (result.lock): retry once it is released',
  ),
  LockHeld: failed('lock', ['unlock'], "the lock's holder is alive: the runner never takes a live holder's lock"),
  PlanErrored: failed('plan', PLANNING, 'terraform marked the plan errored: it is never applied'),
  PlanUnreadable: failed(
    'plan',
    PLANNING,
    'terraform show -json printed no plan document the runner can read, or the saved plan file holds no state before it can read',
  ),
  PlanFileChanged: failed(
    'plan',
    ['apply', 'refresh', 'destroy'],
    'the saved plan file changed after it was hashed: nothing applied',
  ),
  ModuleReadIncomplete: failed(
    'plan',
    PLANNING,
    "the runner's reading of the module missed a declaration terraform has (a bug of the runner): nothing applied",
  ),
  ArtifactCorrupt: failed(
    'artifact',
    READERS,
    'a chunk or the manifest does not match what was written: read it again or use another artifact or backup',
  ),
  ArtifactIncomplete: failed(
    'artifact',
    READERS,
    'an artifact or backup without its manifest (still being written, or its writer died)',
  ),
  ArtifactUnsafe: failed(
    'artifact',
    READERS,
    'an artifact whose archive holds an unsafe entry (a link, a path leaving its directory, more than its manifest allows)',
  ),
  ArtifactTooLarge: failed(
    'artifact',
    WITH_STATE,
    'an artifact or backup over --max-artifact-bytes, or a state too large to back up: raise the setting',
  ),
  ArtifactExists: failed(
    'artifact',
    WRITERS,
    'an artifact or backup of that name exists already: it is never overwritten',
  ),
  ArtifactWriteFailed: failed('io', WRITERS, 'an artifact or backup could not be written'),
  ArtifactWriteUnverified: failed(
    'io',
    WRITERS,
    'an artifact or backup was written but could not be read back and verified: the op stopped before changing anything',
  ),
  StoreReadFailed: failed(
    'io',
    WITH_STATE,
    'the artifact store could not be read (a chunk that is a link, a FIFO, a device; an I/O error)',
  ),
  StoreWriteFailed: failed('io', WRITERS, 'the artifact store could not be written'),
  StoreUnreachable: failed(
    'io',
    WRITERS,
    'the --store (PostgreSQL, S3) did not answer within its timeouts, or answered 5xx past the retries: nothing changed (no backup, so no apply)',
  ),
  StoreAccessDenied: failed(
    'io',
    WRITERS,
    "the --store refused the runner's credentials or grants: the message names what the store needs, never a credential",
  ),
  StoreFailed: failed(
    'io',
    WRITERS,
    'the --store answered what the runner cannot use (an error of its own, a listing that never ends): nothing changed',
  ),
  ExtractFailed: failed('io', READERS, 'an artifact could not be unpacked into the workdir'),
  WorkdirUnusable: failed(
    'io',
    EVERY_OP,
    "--workdir cannot be created or written, or its private/ is not the runner's own directory; or TMPDIR cannot hold the sockets terraform's output is read through",
  ),
  InputsChangedDuringRead: failed(
    'io',
    PLANNING,
    'the mounted inputs changed while they were read (the kubelet updating the volume): read again',
  ),
  StateUnreadable: failed('state', WITH_STATE, 'the state terraform gave is no state document'),
  RestoreVerifyFailed: failed('state', ['restore'], 'after the push the backend does not hold the backed-up state'),
  KubeUnauthorized: failed('kube', EVERY_OP, 'the API server rejected the service account token (401)'),
  KubeForbidden: failed('kube', EVERY_OP, "the runner's Role lacks a verb (403): the message names the rule to add"),
  KubeNotFound: failed('kube', EVERY_OP, 'an object the runner needs is not there (404)'),
  KubeAlreadyExists: failed('kube', EVERY_OP, 'an object the runner creates exists already (409)'),
  KubeConflict: failed('kube', EVERY_OP, 'a resourceVersion or uid precondition failed (409)'),
  KubeInvalid: failed('kube', EVERY_OP, 'the API server found an object invalid (422): the message names the limit'),
  KubeRequestTooLarge: failed('kube', EVERY_OP, "a request body over the API server's limit (413)"),
  KubeThrottled: failed('kube', EVERY_OP, 'throttled (429) after every retry'),
  KubeServerError: failed('kube', EVERY_OP, 'a server error (5xx) after every retry'),
  KubeRequestFailed: failed('kube', EVERY_OP, 'another failing status, or an answer that is not JSON'),
  KubeUnreachable: failed('kube', EVERY_OP, 'no connection, a TLS error, or no whole answer in time'),
  KubeTokenUnreadable: failed('kube', EVERY_OP, 'the service account token file cannot be read'),
  KubeTimeBudgetExceeded: failed('kube', EVERY_OP, "a call met the run's time budget before --deadline"),
  InternalError: failed('internal', EVERY_OP, 'a bug in the runner: report it'),

  // Stopped.
  JobDeadlineExceeded: {
    kind: 'interrupted',
    outcomes: ['interrupted'],
    exitCode: EXIT.deadline,
    ops: EVERY_OP,
    meaning:
      'the runner stopped itself before --deadline: a failure for the backoff (a step that always hangs must reach the cap)',
  },
  Interrupted: {
    kind: 'interrupted',
    outcomes: ['interrupted'],
    exitCode: EXIT.sigterm,
    alsoExitCodes: [EXIT.sigint],
    ops: EVERY_OP,
    meaning:
      'SIGTERM (exit 143) or SIGINT (exit 130): stopped from outside (a drain, an eviction, the Job deleted, a node shutdown)',
  },

  // Commands outside a Job.
  PlanDocumentInvalid: command('usage', EXIT.usage, 'classify: the file cannot be read as a plan document'),
  ResultNotWritten: command(
    'io',
    EXIT.failed,
    "the result file could not be written (a full disk): said on stderr; the run's exit code becomes 1 when it was 0",
  ),
  AssignmentInvalid: command(
    'usage',
    EXIT.usage,
    'local set: not NAME=VALUE, or a value terraform would read differently',
  ),
  DurableInputsMissing: command('usage', EXIT.usage, "local: a machine's durable inputs are gone"),
  LocalDirMissing: command('usage', EXIT.usage, 'local: the directory does not exist'),
  LocalObjectExists: command('usage', EXIT.usage, 'local init: an object exists there already'),
  LocalObjectInvalid: command('usage', EXIT.usage, "local: the object's file is not valid"),
  LocalObjectMissing: command('usage', EXIT.usage, 'local: no object there'),
  LocalModuleMissing: command(
    'usage',
    EXIT.usage,
    'local init, local set: --module DIR does not exist or is no directory',
  ),
  NothingBlocked: command('usage', EXIT.usage, 'local approve: no apply is blocked'),
  LocalObjectRemoveFailed: command('io', EXIT.failed, "local: the object's directory could not be removed"),
  RunnerFailed: command('terraform', EXIT.failed, 'local reconcile: the run left no result'),
  EntrypointUnknown: command('internal', EXIT.failed, 'local: cannot tell which script is the runner'),
  RunnerStartFailed: command('internal', EXIT.failed, 'local: the runner process could not be started'),
  RestoreNotLocal: command(
    'internal',
    EXIT.failed,
    'local: DecideOp chose a restore, which the local lifecycle has no annotation for',
  ),
  InvalidSnapshot: command('internal', EXIT.failed, 'DecideOp got a snapshot its schema refuses'),
} as const satisfies Record<string, ReasonRow>;

export type Reason = keyof typeof REASONS;
export type KindOf<R extends Reason> = (typeof REASONS)[R]['kind'];
/** The reasons of failures: a RunnerError's. */
export type ErrorReason = { [R in Reason]: KindOf<R> extends ErrorKind ? R : never }[Reason];
/** The reasons of one kind. */
export type ReasonOfKind<K extends ErrorKind> = { [R in Reason]: KindOf<R> extends K ? R : never }[Reason];
/** The reasons a result can carry: those a Job can end with. */
export type ResultReason = { [R in Reason]: (typeof REASONS)[R]['ops'] extends readonly [] ? never : R }[Reason];

export const REASON_NAMES = Object.keys(REASONS) as Reason[];
export const RESULT_REASONS = REASON_NAMES.filter((reason) => REASONS[reason].ops.length > 0) as ResultReason[];

export const isReason = (value: string): value is Reason => Object.hasOwn(REASONS, value);
export const isErrorReason = (reason: Reason): reason is ErrorReason => REASONS[reason].kind !== null;
export const isResultReason = (reason: Reason): reason is ResultReason => REASONS[reason].ops.length > 0;
