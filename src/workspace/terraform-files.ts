// The names terraform (and OpenTofu) give the files of a working directory, and the names of the
// terraform files the runner keeps (a saved plan, a state): one place, so that what the runner
// leaves out of its copy of a module, packs into an artifact or looks for is always the same file.

/** terraform's data dir in the root module: providers, modules and the backend init configured (the runner strips TF_DATA_DIR). */
export const DATA_DIR = '.terraform';
/** What terraform (`.tf`, `.tf.json`) and OpenTofu (also `.tofu`, `.tofu.json`) read as configuration in a module dir. */
export const CONFIG_FILE = /\.(?:tf|tofu)(?:\.json)?$/;
/** The tools that read a module: terraform and OpenTofu (terraform/version.ts says which one runs). */
export type Tool = 'terraform' | 'opentofu';
const TOFU_FILE = /\.tofu(?:\.json)?$/;
const TF_FILE = /\.tf(?:\.json)?$/;

/**
 * Whether `tool` skips the configuration file `name` of a dir holding `names`, and what it reads
 * instead (`twin`, the same name with the other extension, when the dir has it). terraform reads
 * only `.tf` and `.tf.json`; OpenTofu reads `.tofu` and `.tofu.json` too, and skips `foo.tf`
 * (`foo.tf.json`) beside `foo.tofu` (`foo.tofu.json`). Undefined: the tool reads it.
 */
export function skippedConfigFile(
  tool: Tool,
  name: string,
  names: ReadonlySet<string>,
): { twin?: string; why: string } | undefined {
  if (tool === 'terraform') {
    if (!TOFU_FILE.test(name)) return undefined;
    const twin = name.replace(/\.tofu((?:\.json)?)$/, '.tf$1');
    return {
      ...(names.has(twin) && { twin }),
      why: 'terraform reads only .tf and .tf.json files; .tofu files are for OpenTofu',
    };
  }
  if (!TF_FILE.test(name)) return undefined;
  const twin = name.replace(/\.tf((?:\.json)?)$/, '.tofu$1');
  return names.has(twin) ? { twin, why: `OpenTofu reads ${twin} instead` } : undefined;
}
/** In DATA_DIR: the workspace `terraform workspace select` chose (absent: the default workspace). */
export const WORKSPACE_FILE = 'environment';
/** The dependency lock file init writes beside the module's .tf files. */
export const LOCK_FILE = '.terraform.lock.hcl';
/** The local backend's state file; also the backend record in DATA_DIR, and the state's name inside a backup. */
export const STATE_FILE = 'terraform.tfstate';
/** The local backend's copy of the state before its last write. */
const STATE_BACKUP_FILE = 'terraform.tfstate.backup';
/** What terraform writes in its working dir when it cannot save the state. */
export const ERRORED_STATE_FILE = 'errored.tfstate';
/** The saved plan: in the workdir's private dir, and inside a plan artifact. */
export const PLAN_FILE = 'plan.tfplan';

/** Where the local backend writes who holds the lock of a state file: `.<state file>.lock.info`, beside it. */
export const localLockInfoName = (stateFile: string): string => `.${stateFile}.lock.info`;

/** What an author's own terraform runs leave in a module dir: never part of the module the runner copies. */
export const LOCAL_RUN_FILES: readonly string[] = [
  DATA_DIR,
  STATE_FILE,
  STATE_BACKUP_FILE,
  localLockInfoName(STATE_FILE),
];
