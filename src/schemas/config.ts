// Every setting: a flag, else a CAPTF_* environment variable (the flag name upper-cased, - → _),
// else a default. Parsed and validated once, here.
import { z } from 'zod';
import { usageError } from '../errors.ts';
import { DURATION, durationMs } from '../util/duration.ts';
import { DEFAULT_CHUNK_BYTES, DEFAULT_MAX_ARTIFACT_BYTES, MIN_CHUNK_BYTES, MAX_SETTING_CHUNK_BYTES } from '../store/limits.ts';
import { Kind } from './result.ts';

export { durationMs };


/** Durations as terraform writes them: 30s, 5m, 1h30m. Kept as text (terraform takes it) and in ms. */
export const Duration = z
  .string()
  .regex(DURATION, 'a duration such as 30s, 5m or 1h30m')
  .refine((s) => s.length > 0, 'a duration such as 30s, 5m or 1h30m');


const Path = z.string().min(1);

/** Settings shared by every op. Op-specific ones are optional here and checked by the op. */
export const Settings = z.strictObject({
  module: Path.default('/captf/module'),
  inputs: Path.default('/captf/inputs'),
  workdir: Path.optional().describe('Default: a fresh temp dir, removed at the end'),
  out: Path.default('.'),
  state: Path.optional().describe('Local runs: a local state file, overriding the module backend'),
  newState: z.boolean().default(false).describe('--state may name a file in a directory that does not exist yet (a first apply)'),
  image: z.string().default(''),
  kind: Kind.default('cluster'),
  guard: z.enum(['on', 'off']).default('on'),
  approvedHash: z.string().default('').describe('Any value; only the exact inputs/approval hash approves'),
  terraform: Path.default('terraform'),
  lockTimeout: Duration.optional(),
  logFormat: z.enum(['json', 'pretty']).optional().describe('Default: pretty on a TTY, else json'),
  object: z.string().optional(),
  namespace: z.string().optional(),
  backendConfig: z.array(Path).default([]),
  terminationLog: Path.default('/dev/termination-log'),
  policy: Path.optional().describe('The policy dir (contract/sections/policy.md). Default: /captf/policy when it exists; read by apply, plan and drift only'),
  // plan / manual approval
  planArtifact: Path.optional(),
  approvedPlanHash: z.string().default(''),
  artifacts: Path.optional(),
  chunkBytes: z.coerce.number().int().min(MIN_CHUNK_BYTES).max(MAX_SETTING_CHUNK_BYTES).default(DEFAULT_CHUNK_BYTES).describe(`At most ${MAX_SETTING_CHUNK_BYTES}: a chunk must fit a Secret after base64`),
  maxArtifactBytes: z.coerce.number().int().min(1_048_576).max(2 ** 40).default(DEFAULT_MAX_ARTIFACT_BYTES).describe('The most an artifact or backup may hold (payload, and files unpacked): a manifest declaring more is refused before a chunk is read'),
  // backups and restore
  backups: Path.optional(),
  backup: Path.optional(),
  force: z.boolean().default(false),
  allowPlaintextBackups: z.boolean().default(false).describe('OpenTofu state encryption: accept backups and plan artifacts in clear'),
  keepBackups: z.coerce.number().int().min(1).max(100).default(3),
  // faults
  stopGrace: Duration.default('20s'), // with its 5 s to SIGKILL and the result, under Kubernetes' default 30 s grace
  deadline: Duration.optional(),
  lockId: z.string().optional(),
  // in-cluster
  jobName: z.string().optional(),
  jobUid: z.string().optional(),
  serviceAccountDir: Path.default('/var/run/secrets/kubernetes.io/serviceaccount'),
});
export type Settings = z.infer<typeof Settings>;

/** Flag name (camelCase, as commander gives it) → environment variable name. */
export const envName = (key: string) => 'CAPTF_' + key.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase();

const LIST_SETTINGS = new Set(['backendConfig']);
const BOOLEAN_SETTINGS = new Set(['force', 'allowPlaintextBackups', 'newState']);

/** One setting as given, unvalidated: the flag, else its environment variable, else undefined. */
export function givenSetting(flags: Record<string, unknown>, env: NodeJS.ProcessEnv, key: string): unknown {
  const flag = flags[key];
  const fromFlag = Array.isArray(flag) ? (flag.length ? flag : undefined) : flag;
  if (fromFlag !== undefined) return fromFlag;
  const fromEnv = env[envName(key)];
  if (fromEnv === undefined || fromEnv === '') return undefined;
  if (LIST_SETTINGS.has(key)) return fromEnv.split(',').filter(Boolean);
  if (BOOLEAN_SETTINGS.has(key)) return ['1', 'true', 'yes'].includes(fromEnv.toLowerCase());
  return fromEnv;
}

/** Merges flags over CAPTF_* environment variables, then validates once. */
export function loadSettings(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Settings {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(Settings.shape)) {
    const given = givenSetting(flags, env, key);
    if (given !== undefined) raw[key] = given;
  }
  const parsed = Settings.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '');
      const flag = '--' + key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
      return `${flag} (or ${envName(key)}): ${issue.message}`;
    });
    throw usageError('SettingsInvalid', `invalid settings: ${problems.join('; ')}`);
  }
  return parsed.data;
}
