// Which backend `terraform init` configured in a working directory. terraform applies a saved plan
// to the backend recorded in the plan, whatever the working directory says, so a plan artifact is
// bound to this identity: applied anywhere else it would change another object's state. And the run
// checks it right after init, before any state is read: the backend the module declares, or exactly
// the local state --state names.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RunnerError } from '../errors.ts';
import { canonicalJson, type JsonValue } from '../inputs/canonical.ts';
import { parseExactJson } from '../inputs/json.ts';
import { sha256Hex } from '../util/sha256.ts';
import { DEFAULT_WORKSPACE, type LocalBackendSettings } from '../workspace/state-location.ts';
import { DATA_DIR, STATE_FILE, WORKSPACE_FILE } from '../workspace/terraform-files.ts';
import type { Terraform } from './terraform.ts';

/** Written by init; the runner strips TF_DATA_DIR, so it is always under .terraform. */
const BACKEND_RECORD = join(DATA_DIR, STATE_FILE);

/** The backend as init recorded it. Its config can hold credentials (a pg conn_str): never shown. */
async function recordedBackend(
  tf: Terraform,
): Promise<{ path: string; type: JsonValue | undefined; config: JsonValue | undefined }> {
  const path = join(tf.cwd, BACKEND_RECORD);
  let backend: JsonValue | undefined;
  try {
    const record = parseExactJson(await readFile(path));
    backend = record instanceof Map ? record.get('backend') : undefined;
  } catch (error) {
    throw backendUnknown(`${path} cannot be read (${(error as Error).message})`);
  }
  if (!(backend instanceof Map)) throw backendUnknown(`${path} names no backend`);
  return { path, type: backend.get('type'), config: backend.get('config') };
}

/**
 * sha256 of the canonical JSON of `{"config":…,"type":…}` as init recorded them. Only a digest:
 * the config can hold credentials (a pg conn_str).
 */
export async function backendIdentity(tf: Terraform): Promise<string> {
  const { type, config } = await recordedBackend(tf);
  const identity = new Map([
    ['config', config ?? null],
    ['type', type ?? null],
  ]);
  return sha256Hex(canonicalJson(identity));
}

/** The backend a run may use: the type the module declares, or a local backend at exactly this path (--state). */
export type ExpectedBackend = { type: string } | { type: 'local'; path: string };

/** Refuses a recorded backend other than the expected one (BackendMismatch). Messages name types and files, never a config value. */
export async function checkBackend(
  tf: Terraform,
  expected: ExpectedBackend,
  declaredIn: readonly string[],
): Promise<void> {
  const found = await recordedBackend(tf);
  const foundType = typeof found.type === 'string' ? found.type : 'unknown';
  const where = declaredIn.length ? ` (the module declares its backend in ${declaredIn.join(', ')})` : '';
  const mismatch = (problem: string) =>
    new RunnerError({
      kind: 'image',
      reason: 'BackendMismatch',
      message: `terraform init configured ${problem}, recorded in ${found.path}${where}: the run would read and change another state than the one it reports. Nothing was read or applied. Keep the module's backend alone in backend.tf, with no backend or cloud block in any other file.`,
      detail: { expectedType: expected.type, foundType },
    });
  if (foundType !== expected.type)
    throw mismatch(
      `the backend "${foundType}", not the "${expected.type}" ${'path' in expected ? 'local state --state names' : 'backend the module declares'}`,
    );
  if (!('path' in expected)) return;
  // The runner's local backend sets the path and nothing else (workspace_dir would move other workspaces' states).
  const config = found.config instanceof Map ? found.config : new Map<string, JsonValue>();
  const others = [...config].filter(([key, value]) => key !== 'path' && value !== null).map(([key]) => key);
  if (config.get('path') !== expected.path || others.length)
    throw mismatch(
      `a local backend that is not the local state --state names (${expected.path})${others.length ? `: it also sets ${others.join(', ')}` : ': its path differs'}`,
    );
}

/**
 * The local backend init recorded (its settings that place the state, with -backend-config files
 * merged) and the workspace terraform selected; undefined for any other backend.
 */
export async function recordedLocalBackend(
  tf: Terraform,
): Promise<(LocalBackendSettings & { workspace: string }) | undefined> {
  const { type, config } = await recordedBackend(tf);
  if (type !== 'local') return undefined;
  const setting = (key: string) => {
    const value = config instanceof Map ? config.get(key) : undefined;
    return typeof value === 'string' && value !== '' ? value : null;
  };
  // The runner strips TF_WORKSPACE; a selected workspace is named in this file (the module copy never ships one).
  const selected = await readFile(join(tf.cwd, DATA_DIR, WORKSPACE_FILE), 'utf8').catch(() => '');
  return {
    path: setting('path'),
    workspaceDir: setting('workspace_dir'),
    workspace: selected.trim() || DEFAULT_WORKSPACE,
  };
}

const backendUnknown = (problem: string) =>
  new RunnerError({
    kind: 'terraform',
    reason: 'BackendUnknown',
    message: `the backend terraform init configured is unknown: ${problem}. Run the op again; report it if it persists.`,
  });
