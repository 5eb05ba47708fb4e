// The settings of the ops and of `hash`: each setting's flag, help and default, stated once (the
// command line's help and the zod schemas of config.ts both read them), and which command takes
// which. Without zod: the command line is built before any op (and zod) loads.
import { OBJECT_KINDS } from '../object-kind.ts';
import { DEFAULT_CHUNK_BYTES, DEFAULT_MAX_ARTIFACT_BYTES } from './limits.ts';
import type { Op } from './result.ts';

export interface SettingOption {
  /** The flag's value placeholder, e.g. `<dir>`; none for a boolean flag. */
  value?: string;
  help: string;
  /** The value when neither the flag nor its CAPTF_* variable is given. */
  default?: string | number | boolean | readonly string[];
  /** How the help names a default the schema does not hold (it is decided at run time). */
  defaultText?: string;
  /** Repeatable: each use adds to the list. */
  repeatable?: true;
}

const COMMON = {
  module: { value: '<dir>', help: 'the terraform module', default: '/captf/module' },
  inputs: { value: '<dir>', help: 'the inputs dir', default: '/captf/inputs' },
  workdir: { value: '<dir>', help: 'working directory', defaultText: 'a fresh temp dir' },
  out: { value: '<dir>', help: 'where result.json goes', default: '.' },
  state: { value: '<file>', help: 'local runs: a local state file, overriding the module backend' },
  newState: {
    help: 'with --state: the file (and its directory) may not exist yet: this run starts the state there (a first apply)',
    default: false,
  },
  image: { value: '<ref>', help: 'the image reference: part of the inputs hash', default: '' },
  kind: { value: '<kind>', help: OBJECT_KINDS.join(' | '), default: 'cluster' as const },
  terraform: {
    value: '<path>',
    help: 'terraform or OpenTofu binary',
    default: 'terraform',
    defaultText: 'terraform on PATH',
  },
  lockTimeout: { value: '<duration>', help: 'how long terraform waits for the state lock, e.g. 30s' },
  logFormat: { value: '<format>', help: 'json | pretty', defaultText: 'pretty on a TTY, else json' },
  object: { value: '<name>', help: 'the CAPTF object the Job serves' },
  namespace: { value: '<ns>', help: 'its namespace' },
  backendConfig: {
    value: '<path>',
    help: "terraform's -backend-config file (repeatable)",
    default: [],
    repeatable: true,
  },
  terminationLog: { value: '<path>', help: 'termination message path', default: '/dev/termination-log' },
  // Every op takes it (a Job's environment is the same for every op); destroy, restore, refresh and unlock never read it.
  policy: {
    value: '<dir>',
    help: 'plan policies in CEL: apply, plan and drift read them; refresh, destroy, restore and unlock never do',
    defaultText: '/captf/policy when it exists',
  },
  store: {
    value: '<url>',
    help: "where backups, plan artifacts and blocked records go: postgres://… (tables in ?schema=, default captf), postgres (terraform's pg backend settings: PG_CONN_STR, PG_SCHEMA_NAME) or s3://bucket/prefix; --backups and --artifacts DIR still win for their kind",
    defaultText: 'Secrets in a cluster, else directories',
  },
  backups: {
    value: '<dir>',
    help: 'where state backups go before the op changes anything',
    defaultText: 'the --store, else Secrets in a cluster, else <out>/backups',
  },
  keepBackups: { value: '<n>', help: 'how many backups to keep', default: 3 },
  chunkBytes: { value: '<n>', help: 'chunk size of artifacts and backups', default: DEFAULT_CHUNK_BYTES },
  maxArtifactBytes: {
    value: '<n>',
    help: 'the most an artifact or backup may hold, packed or unpacked',
    default: DEFAULT_MAX_ARTIFACT_BYTES,
    defaultText: `${DEFAULT_MAX_ARTIFACT_BYTES}, ${DEFAULT_MAX_ARTIFACT_BYTES / 2 ** 20} MiB`,
  },
  // With its 5 s to SIGKILL and the result, under Kubernetes' default 30 s grace.
  stopGrace: { value: '<duration>', help: 'after a signal, how long terraform gets to stop', default: '20s' },
  deadline: {
    value: '<duration>',
    help: 'stop by itself before this much time has passed (it must exceed --stop-grace + 5s, in a cluster + 20s)',
  },
  jobName: { value: '<name>', help: 'in-cluster: the Job this run serves' },
  jobUid: { value: '<uid>', help: "in-cluster: that Job's uid" },
  serviceAccountDir: {
    value: '<dir>',
    help: 'in-cluster: the mounted service account',
    default: '/var/run/secrets/kubernetes.io/serviceaccount',
  },
} satisfies Record<string, SettingOption>;

/**
 * The lineage of the object's state, as its last result named it: the ops that plan against the
 * state take it, and refuse any other state (contract.md §1). restore does not: it brings a state back.
 */
const expectLineage = {
  value: '<lineage>',
  help: "the lineage of the object's state (result.state.lineage of its last result): a state of another lineage, or none, is refused",
} satisfies SettingOption;

/** OpenTofu state encryption: the ops that keep copies of the state take this (see contract.md). */
const allowPlaintextBackups = {
  help: 'OpenTofu state encryption: accept backups and plan artifacts in clear',
  default: false,
} satisfies SettingOption;

const APPLY = {
  allowPlaintextBackups,
  expectLineage,
  guard: { value: '<on|off>', help: 'the destructive-plan guard', default: 'on' as const },
  approvedHash: {
    value: '<hash>',
    help: 'the approval the controller passed (an inputs or approval hash)',
    default: '',
  },
  planArtifact: { value: '<dir>', help: 'apply exactly this approved plan artifact instead of planning' },
  approvedPlanHash: { value: '<hash>', help: 'the plan hash a person approved (with --plan-artifact)', default: '' },
} satisfies Record<string, SettingOption>;
const PLAN = {
  allowPlaintextBackups,
  expectLineage,
  artifacts: { value: '<dir>', help: 'where the plan artifact goes' },
} satisfies Record<string, SettingOption>;
/** refresh, drift and destroy: they plan against the state too. */
const PLANS_AGAINST_STATE = { expectLineage } satisfies Record<string, SettingOption>;
const RESTORE = {
  allowPlaintextBackups,
  backup: { value: '<dir>', help: 'the backup to restore' },
  force: { help: 'restore a backup of another lineage', default: false },
} satisfies Record<string, SettingOption>;
const UNLOCK = { lockId: { value: '<id>', help: 'the lock id terraform reported' } } satisfies Record<
  string,
  SettingOption
>;

/** Every setting, by its camelCase name (as commander gives it). */
export const SETTING_OPTIONS = { ...COMMON, ...APPLY, ...PLAN, ...RESTORE, ...UNLOCK } satisfies Record<
  string,
  SettingOption
>;
export type SettingName = keyof typeof SETTING_OPTIONS;

const names = <T extends object>(group: T) => Object.keys(group) as (keyof T & SettingName)[];

/** The settings every op takes. */
export const COMMON_SETTINGS = names(COMMON);

/** The settings each op takes: its flags, and the CAPTF_* variables it reads (it ignores the others). */
export const OP_SETTINGS = {
  apply: [...COMMON_SETTINGS, ...names(APPLY)],
  plan: [...COMMON_SETTINGS, ...names(PLAN)],
  refresh: [...COMMON_SETTINGS, ...names(PLANS_AGAINST_STATE)],
  drift: [...COMMON_SETTINGS, ...names(PLANS_AGAINST_STATE)],
  destroy: [...COMMON_SETTINGS, ...names(PLANS_AGAINST_STATE)],
  restore: [...COMMON_SETTINGS, ...names(RESTORE)],
  unlock: [...COMMON_SETTINGS, ...names(UNLOCK)],
} as const satisfies Record<Op, readonly SettingName[]>;

/**
 * Flags that shape only how a run reports, never what it does: flags only, with no CAPTF_*
 * variable, so a Job's environment cannot turn them on (contract.md §1). classify takes both too.
 */
export const REPORT_FLAGS = {
  summaryMd: {
    value: '<file>',
    help: 'append a Markdown summary of the run to FILE (e.g. $GITHUB_STEP_SUMMARY); a flag only, no CAPTF_* variable',
  },
  detailedExitcode: {
    help: 'an exit code that names the finding: drift found 6 (classify: a gated plan 3); a flag only, no CAPTF_* variable',
  },
} satisfies Record<string, SettingOption>;
export type ReportFlag = keyof typeof REPORT_FLAGS;

/** The reporting flags each op takes. */
export const OP_REPORT_FLAGS = {
  apply: ['summaryMd'],
  plan: ['summaryMd'],
  refresh: [],
  drift: ['summaryMd', 'detailedExitcode'],
  destroy: ['summaryMd'],
  restore: [],
  unlock: [],
} as const satisfies Record<Op, readonly ReportFlag[]>;

/** The settings `hash` takes: the ones the inputs hash covers. */
export const HASH_SETTINGS = ['inputs', 'image', 'kind'] as const satisfies readonly SettingName[];

/** `--lock-timeout` for lockTimeout. */
export const flagName = (name: string) => '--' + name.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());

/** The help of a setting, its default read from the table. */
export function settingHelp(option: SettingOption): string {
  const shown =
    option.defaultText ??
    (typeof option.default === 'string' && option.default !== ''
      ? option.default
      : typeof option.default === 'number'
        ? String(option.default)
        : undefined);
  return shown === undefined ? option.help : `${option.help} (default ${shown})`;
}
