// Every setting: a flag, else a CAPTF_* environment variable (the flag name upper-cased, - → _),
// else a default. Each op (and `hash`) has a schema of the settings it takes: parsed and validated
// once, here, with the rules between settings; what a command does not take it ignores. The
// flags, help and defaults are in setting-options.ts.
import * as z from './zod.ts';
import { usageError } from '../errors.ts';
import { DURATION, DURATION_GRAMMAR, durationMs, terraformDuration } from '../util/duration.ts';
import { isSha256 } from '../util/sha256.ts';
import { namespaceProblem, objectNameProblem } from '../util/kube-names.ts';
import { closestName } from '../util/closest-name.ts';
import { MIN_CHUNK_BYTES, MAX_SETTING_CHUNK_BYTES } from './limits.ts';
import { Kind, type Notice, type Op } from './result.ts';
import {
  COMMON_SETTINGS,
  HASH_SETTINGS,
  OP_SETTINGS,
  SETTING_OPTIONS as D,
  REPORT_FLAGS,
  flagName,
  type SettingName,
} from './setting-options.ts';
import { deadlineProblem } from './deadline.ts';

export { durationMs };

/** Durations: whole seconds, or as terraform writes them (30s, 5m, 1h30m). Kept as terraform's text (600 becomes 600s: terraform takes it) and read in ms. */
const Duration = z.string().regex(DURATION, `a duration: ${DURATION_GRAMMAR}`).transform(terraformDuration);

const Path = z.string().min(1);

/** --object and --namespace: the CAPTF object's Kubernetes names, which its store keys are made of (store/object-names.ts). */
const kubeName = (problem: (value: string) => string | undefined) =>
  z.string().superRefine((value, ctx) => {
    const why = problem(value);
    if (why) ctx.addIssue({ code: 'custom', message: why });
  });

/** The stores --store names: PostgreSQL by URL or by terraform's pg backend settings, an S3 bucket (DNS-compatible name) and key prefix. */
const STORE_URL = /^(?:postgres(?:ql)?:\/\/.*|postgres|s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](?:\/[^?#]*)?)$/s;

/** Every setting, with its default. A command's schema picks the ones it takes. */
export const Settings = z.strictObject({
  module: Path.default(D.module.default),
  inputs: Path.default(D.inputs.default),
  workdir: Path.optional().describe('Default: a fresh temp dir, removed at the end'),
  out: Path.default(D.out.default),
  state: Path.optional().describe('Local runs: a local state file, overriding the module backend'),
  expectLineage: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The lineage of the object's state (its last result's state.lineage): apply, plan, refresh, drift and destroy refuse a state of another lineage, or none",
    ),
  newState: z
    .boolean()
    .default(D.newState.default)
    .describe('--state may name a file (and a directory) that does not exist yet (a first apply)'),
  image: z.string().default(D.image.default),
  kind: Kind.default(D.kind.default),
  guard: z.enum(['on', 'off']).default(D.guard.default),
  approvedHash: z
    .string()
    .default(D.approvedHash.default)
    .describe('Any value; only the exact inputs/approval hash approves'),
  terraform: Path.default(D.terraform.default),
  lockTimeout: Duration.optional(),
  logFormat: z.enum(['json', 'pretty']).optional().describe('Default: pretty on a TTY, else json'),
  object: kubeName(objectNameProblem).optional(),
  namespace: kubeName(namespaceProblem).optional(),
  backendConfig: z.array(Path).default([...D.backendConfig.default]),
  terminationLog: Path.default(D.terminationLog.default),
  policy: Path.optional().describe(
    'The policy dir (contract/sections/policy.md); default /captf/policy when it exists',
  ),
  // plan / manual approval
  planArtifact: Path.optional(),
  approvedPlanHash: z.string().default(D.approvedPlanHash.default),
  artifacts: Path.optional(),
  chunkBytes: z.coerce
    .number()
    .int()
    .min(MIN_CHUNK_BYTES)
    .max(MAX_SETTING_CHUNK_BYTES)
    .default(D.chunkBytes.default)
    .describe(`At most ${MAX_SETTING_CHUNK_BYTES}: a chunk must fit a Secret after base64`),
  maxArtifactBytes: z.coerce
    .number()
    .int()
    .min(1_048_576)
    .max(2 ** 40)
    .default(D.maxArtifactBytes.default)
    .describe(
      'The most an artifact or backup may hold (payload, and files unpacked): a manifest declaring more is refused before a chunk is read',
    ),
  // where backups, plan artifacts and blocked records go (run/stores.ts)
  store: z
    .string()
    .regex(
      STORE_URL,
      "postgres://user@host:port/database (?schema=NAME), postgres (the pg backend's PG_CONN_STR) or s3://bucket/prefix",
    )
    .optional()
    .describe('A URL can hold a password: pass it from a Secret, never in the Job spec'),
  // backups and restore
  backups: Path.optional(),
  backup: Path.optional(),
  force: z.boolean().default(D.force.default),
  allowPlaintextBackups: z.boolean().default(D.allowPlaintextBackups.default).describe(D.allowPlaintextBackups.help),
  keepBackups: z.coerce.number().int().min(1).max(100).default(D.keepBackups.default),
  // faults
  stopGrace: Duration.default(D.stopGrace.default),
  deadline: Duration.optional(),
  lockId: z.string().optional(),
  // in-cluster
  jobName: z.string().optional(),
  jobUid: z.string().optional(),
  serviceAccountDir: Path.default(D.serviceAccountDir.default),
} satisfies Record<SettingName, z.ZodType>);

const settingsOf = <K extends SettingName>(names: readonly K[]) =>
  Settings.pick(
    Object.fromEntries(names.map((n) => [n, true])) as Record<K, true> &
      Record<Exclude<K, keyof typeof Settings.shape>, never>,
  );

/** The reasons of an op's settings rules. */
type SettingsRule =
  | 'PlanNotApproved'
  | 'GuardRequired'
  | 'BackupMissing'
  | 'LockIdMissing'
  | 'StoreNeedsObject'
  | 'SettingsInvalid';

/** A rule of an op's settings (between them, or one it needs), broken: a usage error with its own reason. */
const conflict = (ctx: z.RefinementCtx, reason: SettingsRule, path: SettingName, message: string) =>
  ctx.addIssue({ code: 'custom', path: [path], message, params: { reason } });

/** Rules every op's settings follow. */
const commonRules = (
  s: { store?: string; object?: string; namespace?: string; jobName?: string; jobUid?: string },
  ctx: z.RefinementCtx,
) => {
  // A store keeps each object's artifacts apart by its namespace, kind and name (in a cluster the Job's namespace stands in for --namespace).
  if (s.store && (!s.object || (!s.namespace && !s.jobName && !s.jobUid)))
    conflict(
      ctx,
      'StoreNeedsObject',
      'store',
      `--store keeps backups and plan artifacts per CAPTF object, by its namespace, kind and name: pass ${[
        ...(s.object ? [] : ['--object NAME (CAPTF_OBJECT)']),
        ...(s.namespace || s.jobName || s.jobUid ? [] : ['--namespace NS (CAPTF_NAMESPACE)']),
      ].join(' and ')} too`,
    );
};

/** Every op's rule of --deadline: it must leave the run time before it stops itself (schemas/deadline.ts). */
function deadlineRule(
  s: { deadline?: string; stopGrace: string; jobName?: string; jobUid?: string },
  ctx: z.RefinementCtx,
): void {
  // A value that is no duration is named by its own check.
  if (!s.deadline || !DURATION.test(s.deadline) || !DURATION.test(s.stopGrace)) return;
  const problem = deadlineProblem({
    deadline: s.deadline,
    stopGrace: s.stopGrace,
    inCluster: Boolean(s.jobName || s.jobUid),
  });
  if (problem) conflict(ctx, 'SettingsInvalid', 'deadline', problem);
}

/** The schema of each op's settings. */
export const OP_SCHEMAS = {
  apply: settingsOf(OP_SETTINGS.apply)
    .superRefine(commonRules)
    .superRefine(deadlineRule)
    .superRefine((s, ctx) => {
      // The approval of --plan-artifact binds the plan itself, so the guard is not consulted then.
      if (s.planArtifact && !isSha256(s.approvedPlanHash))
        conflict(
          ctx,
          'PlanNotApproved',
          'approvedPlanHash',
          `--plan-artifact needs --approved-plan-hash: the sha256 (64 lowercase hex) of the plan a person approved, not "${s.approvedPlanHash}"`,
        );
      // A cluster's guard cannot be turned off, with --plan-artifact or without (one rule for a controller
      // to follow); a machine's is always off, a pool's the controller decides per apply.
      if (s.guard === 'off' && s.kind === 'cluster')
        conflict(
          ctx,
          'GuardRequired',
          'guard',
          'the destructive-plan guard cannot be turned off for a cluster: drop --guard off (CAPTF_GUARD), or pass --kind machine or pool (with --plan-artifact the guard is not consulted: the plan approval binds the plan)',
        );
    }),
  plan: settingsOf(OP_SETTINGS.plan).superRefine(commonRules).superRefine(deadlineRule),
  refresh: settingsOf(OP_SETTINGS.refresh).superRefine(commonRules).superRefine(deadlineRule),
  drift: settingsOf(OP_SETTINGS.drift).superRefine(commonRules).superRefine(deadlineRule),
  destroy: settingsOf(OP_SETTINGS.destroy).superRefine(commonRules).superRefine(deadlineRule),
  restore: settingsOf(OP_SETTINGS.restore)
    .superRefine(commonRules)
    .superRefine(deadlineRule)
    .superRefine((s, ctx) => {
      if (!s.backup)
        conflict(
          ctx,
          'BackupMissing',
          'backup',
          'restore needs the backup to restore: pass --backup DIR (or a Secret reference, see contract.md)',
        );
    }),
  unlock: settingsOf(OP_SETTINGS.unlock)
    .superRefine(commonRules)
    .superRefine(deadlineRule)
    .superRefine((s, ctx) => {
      if (!s.lockId)
        conflict(
          ctx,
          'LockIdMissing',
          'lockId',
          'unlock needs --lock-id ID: the lock id terraform reported (result.lock.id of the run that met the lock)',
        );
    }),
} satisfies Record<Op, z.ZodType>;

/**
 * The settings of whichever op runs: those it takes as given, validated by its schema; those it does
 * not take hold their defaults (their flags and variables are not read).
 */
export type Settings = z.output<typeof Settings>;
const CommonSettings = settingsOf(COMMON_SETTINGS);
const DEFAULTS: Settings = Settings.parse({});

const HashSettings = settingsOf(HASH_SETTINGS);
export type HashSettings = z.output<typeof HashSettings>;

/** Variables whose name the contract gave before its flag's: the flag says what to do, the variable what it holds. */
const ENV_NAMES: Record<string, string> = { expectLineage: 'CAPTF_EXPECTED_LINEAGE' };

/** Flag name (camelCase, as commander gives it) → environment variable name. */
export const envName = (key: string) =>
  ENV_NAMES[key] ?? 'CAPTF_' + key.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase();

const LIST_SETTINGS = new Set(['backendConfig']);
/**
 * Settings whose empty flag means none, as an empty CAPTF_* variable does for every setting: the
 * controller passes `--expect-lineage ""` (CAPTF_EXPECTED_LINEAGE="") before the object's first state,
 * and the flag and its variable have one meaning.
 */
const EMPTY_FLAG_IS_NONE = new Set(['expectLineage']);
const BOOLEAN_SETTINGS = new Set(['force', 'allowPlaintextBackups', 'newState']);

/** One setting as given, unvalidated: the flag, else its environment variable, else undefined. */
export function givenSetting(flags: Record<string, unknown>, env: NodeJS.ProcessEnv, key: string): unknown {
  const flag = flags[key];
  const fromFlag = Array.isArray(flag)
    ? flag.length
      ? flag
      : undefined
    : flag === '' && EMPTY_FLAG_IS_NONE.has(key)
      ? undefined
      : flag;
  if (fromFlag !== undefined) return fromFlag;
  const fromEnv = env[envName(key)];
  if (fromEnv === undefined || fromEnv === '') return undefined;
  if (LIST_SETTINGS.has(key)) return fromEnv.split(',').filter(Boolean);
  if (BOOLEAN_SETTINGS.has(key)) return ['1', 'true', 'yes'].includes(fromEnv.toLowerCase());
  return fromEnv;
}

/** The settings a schema takes, as given: flags over CAPTF_* variables; the variables of other settings are not read. */
function givenSettings(
  schema: z.ZodObject,
  flags: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(schema.shape)) {
    const given = givenSetting(flags, env, key);
    if (given !== undefined) raw[key] = given;
  }
  return raw;
}

function parseSettings<S extends z.ZodObject>(
  schema: S,
  flags: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): z.output<S> {
  const parsed = schema.safeParse(givenSettings(schema, flags, env));
  if (parsed.success) return parsed.data;
  const rule = parsed.error.issues.find((issue) => issue.code === 'custom' && typeof issue.params?.reason === 'string');
  if (rule?.code === 'custom' && parsed.error.issues.length === 1)
    throw usageError(rule.params!.reason as SettingsRule, rule.message);
  const problems = parsed.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? '');
    return `${flagName(key)} (or ${envName(key)}): ${issue.message}`;
  });
  throw usageError('SettingsInvalid', `invalid settings: ${problems.join('; ')}`);
}

/** Every CAPTF_* variable the runner reads: one per setting (a report flag has none). */
const SETTING_VARIABLES: readonly string[] = Object.keys(Settings.shape).map(envName);

/**
 * A notice for each CAPTF_* variable that is no setting: a misspelt name (CAPTF_LOCK_TIMOUT) would
 * otherwise leave its setting at the default without a word. It names the variable it is closest
 * to, and a report flag's name as a flag only. The runner never reads such a variable.
 */
export function unknownSettingVariables(env: NodeJS.ProcessEnv): Notice[] {
  const reportFlags = new Map(Object.keys(REPORT_FLAGS).map((key) => [envName(key), flagName(key)]));
  return Object.keys(env)
    .filter((name) => name.startsWith('CAPTF_') && !SETTING_VARIABLES.includes(name))
    .sort()
    .map((name) => {
      const flag = reportFlags.get(name);
      const closest = flag ? undefined : closestName(name, SETTING_VARIABLES);
      const hint = flag
        ? `${flag} is a flag only: no variable sets it`
        : closest
          ? `did you mean ${closest}?`
          : 'the settings and their variables are in contract.md §1';
      return {
        code: 'SettingVariableUnknown',
        message: `${name} is no setting of captf-runner and was ignored: ${hint}`,
      };
    });
}

/** An op's settings: flags over CAPTF_* variables over the defaults, validated once. */
export const loadSettings = (op: Op, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Settings => ({
  ...DEFAULTS,
  ...parseSettings(OP_SCHEMAS[op], flags, env),
});

/** The settings of `hash`, by the same rules. */
export const loadHashSettings = (flags: Record<string, unknown>, env: NodeJS.ProcessEnv): HashSettings =>
  parseSettings(HashSettings, flags, env);

/**
 * The settings of a run whose settings are invalid, for its result: each common setting as given
 * where it is valid on its own (--out and --termination-log above all), else its default.
 */
export function settingsOfInvalidRun(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Settings {
  const valid = Object.entries(givenSettings(CommonSettings, flags, env)).filter(
    ([key, value]) => Settings.shape[key as SettingName].safeParse(value).success,
  );
  return { ...DEFAULTS, ...CommonSettings.parse(Object.fromEntries(valid)) };
}
