// Where a local backend keeps the state, and whether that place outlives the run. The runner works
// in a workdir it removes (or clears) at the end, on a copy of the module: a local backend whose
// path lands there keeps the object's state in a file that vanishes with the run, so every run
// would start from an empty state and create everything again.
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { BackendBlock } from './scan.ts';
import { STATE_FILE } from './terraform-files.ts';

/** How to keep a local backend's state where it outlives the run. */
export const STATE_OUTSIDE_WORKDIR_FIX =
  'give the local backend an absolute path on a volume that outlives the pod (path = "/var/lib/captf/terraform.tfstate", in backend.tf or a --backend-config file), use a remote backend (pg, s3, kubernetes, …), or pass --state FILE for a local run';

/** The local backend's settings that place the state, as init recorded them (null: not set). */
export interface LocalBackendSettings {
  path: string | null;
  workspaceDir: string | null;
}

/** terraform's default workspace: the only one whose state is at `path`. */
export const DEFAULT_WORKSPACE = 'default';
/** Where the local backend keeps the states of other workspaces when workspace_dir is not set. */
const DEFAULT_WORKSPACE_DIR = 'terraform.tfstate.d';

/**
 * The state file terraform's local backend uses, relative paths resolved against `cwd` as terraform
 * resolves them (against the directory it runs in): `path` (default terraform.tfstate) in the default
 * workspace, `<workspace_dir>/<name>/terraform.tfstate` in any other (pure).
 */
export function localStateFile(settings: LocalBackendSettings, workspace: string, cwd: string): string {
  const file =
    workspace === DEFAULT_WORKSPACE
      ? (settings.path ?? STATE_FILE)
      : join(settings.workspaceDir ?? DEFAULT_WORKSPACE_DIR, workspace, STATE_FILE);
  return resolve(cwd, file);
}

/** How the backend's settings placed the state, in words for a message. */
export function stateFileSource(settings: LocalBackendSettings, workspace: string): string {
  if (workspace !== DEFAULT_WORKSPACE)
    return `workspace "${workspace}" under ${settings.workspaceDir === null ? `the default workspace_dir ${DEFAULT_WORKSPACE_DIR}` : `workspace_dir = ${JSON.stringify(settings.workspaceDir)}`}`;
  return settings.path === null
    ? `no path: terraform's default ${STATE_FILE} in the module dir`
    : `path = ${JSON.stringify(settings.path)}`;
}

/** `child` is `parent` or lies below it (both absolute, normalised). */
export const isWithin = (child: string, parent: string): boolean => {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/**
 * The path with every symbolic link of its longest existing part resolved (the rest may not exist
 * yet: a first apply creates the file): a link into the workdir is still the workdir.
 */
async function realPathOf(path: string): Promise<string> {
  const missing: string[] = [];
  let current = resolve(path);
  for (;;) {
    try {
      return join(await realpath(current), ...missing);
    } catch {
      const parent = dirname(current);
      if (parent === current) return resolve(path);
      missing.unshift(basename(current));
      current = parent;
    }
  }
}

/** Whether the state file lies inside the workdir (the module copy, the private dir and all the runner removes are in it). */
export async function stateInWorkdir(stateFile: string, workdir: string): Promise<boolean> {
  return isWithin(await realPathOf(stateFile), await realPathOf(workdir));
}

/**
 * contract check's reading of a local backend block (the runner checks the path init recorded): a
 * path that is not absolute lands in the runner's copy of the module, in its workdir (pure).
 */
export function localBackendBlockProblem(block: BackendBlock): string | undefined {
  if (block.type !== 'local' || (block.path !== undefined && isAbsolute(block.path))) return undefined;
  const where =
    block.path === undefined
      ? `sets no path: terraform keeps the state in ${STATE_FILE} in the module dir`
      : `keeps the state at path = ${JSON.stringify(block.path)}, relative to the module dir`;
  return `backend "local" ${where}, which in a run is the runner's copy of the module in its workdir, removed at the end: the state would vanish with the run, and every run would create everything again`;
}
