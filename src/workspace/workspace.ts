// The workdir a run works in: a copy of the module (the module dir may be read-only), the input
// files as data, the variable files outside the module (so terraform never loads an input as
// configuration), the injected inputs-hash resource and, for local runs, a local backend.
import { lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve, sep } from 'node:path';
import { RunnerError, imageError, usageError } from '../errors.ts';
import { copyModuleTree, readModuleTree, type ModuleProblem } from './module-tree.ts';
import type { PathResolution } from './path-resolution.ts';
import { makeWorkdir, type Workdir } from './workdir.ts';
import { ERRORED_STATE_FILE, LOCAL_RUN_FILES } from './terraform-files.ts';
import {
  BACKEND_OVERRIDE_FILE,
  INJECTED_FILE,
  INPUT_FILES_DIR,
  INPUTS_HASH_RESOURCE,
  INPUTS_HASH_RESOURCE_NAME,
  INPUTS_HASH_RESOURCE_TYPE,
  INPUTS_HASH_VARIABLE,
  RUNNER_FILES,
  SENSITIVE_OVERRIDE_FILE,
} from './reserved-names.ts';

export { RUNNER_FILES };
import { emptyScan, type ModuleScan, type SkippedFile } from './scan.ts';
import { scanHcl } from './scan-hcl.ts';

/** In the private dir: the values of the ephemeral variables, for the apply of a saved plan. */
const EPHEMERAL_TFVARS_FILE = 'ephemeral.tfvars.json';
/**
 * Left behind by earlier local runs of the module; never copied into the workdir. An errored.tfstate
 * the module ships is not terraform's unsaved state of this run: it must never be pushed or kept as one.
 */
const NOT_COPIED: ReadonlySet<string> = new Set([...LOCAL_RUN_FILES, ERRORED_STATE_FILE]);

/** The module as the workdir copy takes it (module-tree.ts), with the names the runner keeps out. */
export const readModule = (moduleDir: string, resolution?: PathResolution) =>
  readModuleTree(moduleDir, { notCopied: NOT_COPIED, runnerFiles: RUNNER_FILES, resolution });

/**
 * Why a module's files cannot be copied as they are, and the fix (prepareWorkspace and contract
 * check). In a destroy only `outsideLink` is copied (as content); the rest is left out.
 */
export function moduleFilesProblem(problems: readonly ModuleProblem[]): { message: string; fix: string } | undefined {
  if (problems.length === 0) return undefined;
  const fixes = [
    problems.some((p) => p.kind === 'runnerFile') &&
      `rename or remove the files named like the runner's own (${[...RUNNER_FILES].join(', ')})`,
    problems.some((p) => p.kind === 'outsideLink') &&
      'put what the links outside the module lead to into the module dir (or make them links inside it)',
    problems.some((p) => p.kind === 'unusable') && 'remove the broken links and special files',
  ].filter(Boolean);
  return {
    message: `the module's files cannot be used as they are: ${problems.map((p) => `${p.file} ${p.what}`).join('; ')}`,
    fix: fixes.join('; '),
  };
}

/** terraform loads these from the root module dir by itself: their values would reach terraform outside the inputs hash. */
const AUTO_LOADED_VARIABLES = /^(?:terraform\.tfvars|.+\.auto\.tfvars)(?:\.json)?$/;

/** The variables files the module ships that terraform would load by itself, in name order (`names`: the root module dir's files). */
export const shippedVariablesFiles = (names: Iterable<string>) =>
  [...names].filter((name) => AUTO_LOADED_VARIABLES.test(name)).sort();

/** Why a module may not ship `files` (shippedVariablesFiles), and the fix (prepareWorkspace and contract check). */
export function shippedVariablesProblem(files: readonly string[]): { message: string; fix: string } {
  const one = files.length === 1;
  return {
    message: `the module ships ${files.join(', ')}: terraform loads ${one ? 'it' : 'them'} by itself, so ${one ? 'its' : 'their'} values reach terraform outside the inputs hash (an approval would not cover a change to them)`,
    fix: "move the values into the inputs (terraform.tfvars.json of the inputs dir) or into the variables' defaults, and remove the files",
  };
}

export interface Workspace extends Workdir {
  /** The root module terraform runs in. */
  root: string;
  varFiles: string[];
  /** The variables files the apply of a saved plan is given: the values of the ephemeral variables (none when there are none). */
  applyVarFiles: string[];
  /** The variables the runner's override makes sensitive (those of sensitive.tfvars.json the module declares): the plan must say they are. */
  madeSensitive: string[];
  scan: ModuleScan;
}

export interface WorkspaceInputs {
  /** Variable files passed with -var-file, in order (terraform.tfvars.json, sensitive.tfvars.json). */
  varFiles: { name: string; content: Buffer }[];
  /** Every other input file: copied to captf-inputs/<name>. */
  files: { name: string; content: Buffer }[];
  /** The variables sensitive.tfvars.json sets. */
  sensitiveVariables: readonly string[];
  /** The variables file of just these variables, or undefined when the inputs set none of them. */
  varFileOf(names: readonly string[]): Buffer | undefined;
}

/**
 * Files the tool in use does not read, refused (prepareWorkspace and contract check): a backend
 * block there is not the backend the run would use (terraform would run with none, and keep the
 * state in the workdir), and a file without a twin for this tool that declares resources, module
 * calls or variables would leave them out of the run. A twin (foo.tf for terraform beside foo.tofu
 * for OpenTofu) is a module written for both tools: the other tool's file is skipped, as the tool does.
 */
export function skippedFilesProblem(
  scan: ModuleScan,
): { message: string; fix: string; files: SkippedFile[] } | undefined {
  const backends = scan.skipped.flatMap((file) =>
    file.backendBlocks.map(
      (block) =>
        `${block.file}:${block.line}: ${block.type === 'cloud' ? 'cloud' : `backend "${block.type}"`} (${file.why})`,
    ),
  );
  const declarations = scan.skipped
    .filter((file) => file.declares && !file.twin)
    .map((file) => `${file.file} declares resources, module calls or variables (${file.why})`);
  if (backends.length === 0 && declarations.length === 0) return undefined;
  const used = scan.backend
    ? `the backend "${scan.backend}" of ${scan.backendBlocks[0]!.file}`
    : "no backend of the module's own (without --state, the state would stay in the workdir and be lost with it)";
  const problems = [
    ...(backends.length
      ? [`the tool in use does not read the backend block in ${backends.join('; ')}: it would run with ${used}`]
      : []),
    ...(declarations.length
      ? [
          `the tool in use does not read ${declarations.join('; ')}: what ${declarations.length === 1 ? 'it declares' : 'they declare'} would be left out of the run`,
        ]
      : []),
  ];
  const fixes = [
    ...(backends.length
      ? [`put the module's backend alone in ${BACKEND_FILE}, which terraform and OpenTofu both read`]
      : []),
    ...(declarations.length
      ? ['rename the file to .tf (or .tf.json), give it a .tf twin for terraform, or run the module with OpenTofu']
      : []),
  ];
  return {
    message: problems.join('; '),
    fix: fixes.join('; '),
    files: scan.skipped.filter((file) => file.backendBlocks.length > 0 || (file.declares && !file.twin)),
  };
}

/**
 * Why a module that names what the runner reserves is refused, and the fix (prepareWorkspace and
 * contract check). A moved, removed or import block at the record would let terraform move, forget
 * or import another object there: with a state that has no record yet, a move replaced the object.
 */
export function reservedNamesProblem(scan: ModuleScan): { message: string; fix: string } | undefined {
  if (scan.reserved.length === 0) return undefined;
  const uses = scan.reserved.map((use) => `${use.file}:${use.line}: ${use.what}`);
  return {
    message: `the module names what the runner reserves for its inputs-hash record (${INPUTS_HASH_RESOURCE}, var.${INPUTS_HASH_VARIABLE}): ${uses.join('; ')}`,
    fix: `rename or remove ${uses.length === 1 ? 'that block' : 'those blocks'}: no resource or variable may take these names, and no moved, removed or import block may name ${INPUTS_HASH_RESOURCE}, with or without an index`,
  };
}

/** terraform's override files (and OpenTofu's .tofu forms): merged over the rest, in name order. */
const OVERRIDE_FILE = /^(?:.*_)?override\.(?:tf|tofu)(?:\.json)?$/;

/** The backend and cloud blocks in override files. */
export const overrideBackendBlocks = (scan: ModuleScan) =>
  scan.backendBlocks.filter((block) => OVERRIDE_FILE.test(basename(block.file)));

/**
 * A backend or cloud block in an override file would win over the module's backend.tf, and one
 * named after captf_runner_backend_override.tf over the runner's --state: the run would change
 * another state and report it as the object's. Refused (prepareWorkspace and contract check).
 */
export function overrideBackendProblem(scan: ModuleScan): { message: string; fix: string } | undefined {
  const found = overrideBackendBlocks(scan);
  if (found.length === 0) return undefined;
  return {
    message: `the module sets its backend in an override file: ${found.map((b) => `${b.file}:${b.line}: ${b.type === 'cloud' ? 'cloud' : `backend "${b.type}"`}`).join('; ')}`,
    fix: `remove ${found.length === 1 ? 'that block' : 'those blocks'}: the module's backend belongs in ${BACKEND_FILE} alone (its settings come from --backend-config files), and --state replaces it for local runs`,
  };
}

/** What terraform says the root module declares and the scan did not find (pure). */
export function missedDeclarations(declared: Iterable<string>, scan: ModuleScan): string[] {
  const known = new Set([...scan.resources, ...scan.moduleCalls, INPUTS_HASH_RESOURCE]);
  return [...declared].filter((address) => !known.has(address));
}

/** The injected configuration: a resource that changes only when an apply of everything else succeeded. */
export function inputsHashConfig(scan: ModuleScan): string {
  const dependsOn = [...scan.resources, ...scan.moduleCalls].sort();
  return [
    '# Written by captf-runner. It records the inputs hash of the last successful apply in the state:',
    '# it depends on every resource and module call, so a failed apply leaves the old value.',
    `variable "${INPUTS_HASH_VARIABLE}" {`,
    '  type     = string',
    '  nullable = false',
    '}',
    '',
    `resource "${INPUTS_HASH_RESOURCE_TYPE}" "${INPUTS_HASH_RESOURCE_NAME}" {`,
    `  input      = var.${INPUTS_HASH_VARIABLE}`,
    `  depends_on = [${dependsOn.join(', ')}]`,
    '}',
    '',
  ].join('\n');
}

/**
 * Every variable of sensitive.tfvars.json is sensitive to terraform, whatever the module declares:
 * terraform then redacts every value derived from it (a base64encode, a URL, an upper) and refuses
 * an output that shows one without `sensitive = true`. An override file merges the argument into
 * each declaration, in whichever syntax it is.
 */
export function sensitiveOverrideConfig(names: readonly string[]): string {
  const variable = Object.fromEntries(names.map((name) => [name, { sensitive: true }]));
  return `${JSON.stringify({ '//': 'Written by captf-runner: every variable of sensitive.tfvars.json is sensitive.', variable }, null, 2)}\n`;
}

export const localBackendConfig = (statePath: string) =>
  [
    "# Written by captf-runner for --state: a local backend replaces the module's.",
    'terraform {',
    '  backend "local" {',
    `    path = ${JSON.stringify(statePath)}`,
    '  }',
    '}',
    '',
  ].join('\n');

export interface PrepareOptions {
  moduleDir: string;
  /**
   * A teardown never wedges on the module's files: files named like the runner's own, broken links and
   * special files are left out, links leading outside the module copied as content, each with a warning.
   */
  teardown?: boolean;
  warn?: (message: string) => void;
  /** The module as scanModule read it. */
  scan: ModuleScan;
  workdir?: string;
  statePath?: string;
  inputs: WorkspaceInputs;
  /** false for roots that must not record a hash (none today besides restore's backend-only root). */
  injectInputsHash?: boolean;
}

export async function prepareWorkspace(options: PrepareOptions): Promise<Workspace> {
  const { scan } = options;
  const reserved = reservedNamesProblem(scan);
  if (reserved)
    throw imageError(`${reserved.message}. Nothing was planned or applied; ${reserved.fix}`, {
      reserved: scan.reserved,
    });
  const overrideBackend =
    overrideBackendProblem(scan) ?? (await shadowedBackendProblem(options.moduleDir)) ?? skippedFilesProblem(scan);
  if (overrideBackend)
    throw imageError(`${overrideBackend.message}. Nothing was planned or applied; ${overrideBackend.fix}`);
  if (!scan.backend && !options.statePath)
    throw usageError(
      'StateLocationMissing',
      'the module has no backend block and no --state FILE was given: the state would be lost with the workdir. Add a backend to the module or pass --state FILE',
    );

  const tree = await readModule(options.moduleDir).catch((error: NodeJS.ErrnoException) => {
    if (error instanceof RunnerError) throw error;
    throw imageError(
      `the module dir ${options.moduleDir} cannot be read (${error.code ?? error.message}): the image must carry a module the runner's uid can read`,
    );
  });
  const problem = moduleFilesProblem(tree.problems);
  if (problem && !options.teardown)
    throw imageError(`${problem.message}. Nothing was planned or applied; ${problem.fix}`, { files: tree.problems });
  for (const p of tree.problems)
    options.warn?.(
      `${p.file} ${p.what}: ${p.kind === 'outsideLink' ? 'the destroy copies what it leads to' : 'the destroy leaves it out'}`,
    );
  const shipped = shippedVariablesFiles(
    tree.entries.filter((e) => e.kind === 'file' && !e.path.includes(sep)).map((e) => e.path),
  );
  if (shipped.length) {
    const variables = shippedVariablesProblem(shipped);
    if (!options.teardown)
      throw imageError(`${variables.message}. Nothing was planned or applied; ${variables.fix}`, {
        files: shipped.map((file) => join(options.moduleDir, file)),
      });
    options.warn?.(`${variables.message}: the destroy leaves ${shipped.length === 1 ? 'it' : 'them'} out`);
  }
  const entries = options.teardown ? tree.entries.filter((e) => !shipped.includes(e.path)) : tree.entries;

  const workdir = await makeWorkdir(options.workdir);
  const root = join(workdir.dir, 'root');
  await rm(root, { recursive: true, force: true });
  await copyModuleTree(entries, root);

  // Every file below is the runner's own: created exclusively (never over a file, never through a link).
  const inputsDir = join(root, INPUT_FILES_DIR);
  await mkdir(inputsDir, { mode: 0o700 });
  for (const file of options.inputs.files) await writeNewFile(join(inputsDir, file.name), file.content);

  const varFiles: string[] = [];
  for (const file of options.inputs.varFiles) {
    const path = join(workdir.privateDir, file.name);
    await writeNewFile(path, file.content);
    varFiles.push(path);
  }
  const applyVarFile = options.inputs.varFileOf(scan.ephemeralVariables);
  const applyVarFiles = applyVarFile === undefined ? [] : [join(workdir.privateDir, EPHEMERAL_TFVARS_FILE)];
  if (applyVarFile) await writeNewFile(applyVarFiles[0]!, applyVarFile);
  const declared = new Set(scan.variables);
  const madeSensitive = options.inputs.sensitiveVariables.filter((name) => declared.has(name));
  if (madeSensitive.length > 0)
    await writeNewFile(join(root, `${SENSITIVE_OVERRIDE_FILE}.json`), sensitiveOverrideConfig(madeSensitive));
  if (options.injectInputsHash !== false) await writeNewFile(join(root, INJECTED_FILE), inputsHashConfig(scan));
  if (options.statePath)
    await writeNewFile(join(root, BACKEND_OVERRIDE_FILE), localBackendConfig(resolve(options.statePath)));

  return { ...workdir, root, varFiles, applyVarFiles, madeSensitive, scan };
}

/** A file of the runner's own, 0600: it must not exist yet (O_EXCL never follows a link). */
export const writeNewFile = (path: string, content: string | Buffer) =>
  writeFile(path, content, { mode: 0o600, flag: 'wx' });

/** The module contract keeps the backend block in this file, so restore can build a root of it alone. */
export const BACKEND_FILE = 'backend.tf';
/** What OpenTofu reads instead of backend.tf when both exist: terraform and OpenTofu would use different backends. */
export const BACKEND_FILE_TOFU = 'backend.tofu';

/** Refused wherever the module's backend is used (prepareWorkspace, prepareBackendWorkspace, contract check). */
export async function shadowedBackendProblem(moduleDir: string): Promise<{ message: string; fix: string } | undefined> {
  const present = async (name: string) => (await lstat(join(moduleDir, name)).catch(() => undefined)) !== undefined;
  if (!(await present(BACKEND_FILE_TOFU)) || !(await present(BACKEND_FILE))) return undefined;
  return {
    message: `the module ships ${join(moduleDir, BACKEND_FILE_TOFU)} beside ${join(moduleDir, BACKEND_FILE)}: OpenTofu reads the first and terraform the second, so the backend would depend on the tool`,
    fix: `keep the backend in ${BACKEND_FILE} alone and remove ${BACKEND_FILE_TOFU}`,
  };
}

/**
 * A root that holds nothing but the module's backend (restore and unlock touch the state, never
 * the module's resources): backend.tf, or a local backend for --state.
 */
export async function prepareBackendWorkspace(options: {
  moduleDir: string;
  workdir?: string;
  statePath?: string;
}): Promise<Workspace> {
  const workdir = await makeWorkdir(options.workdir);
  const root = join(workdir.dir, 'backend-root');
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true, mode: 0o700 });
  // The scan of the root: what init must then have configured (initStep).
  let scan = emptyScan();
  if (options.statePath) await writeNewFile(join(root, BACKEND_FILE), localBackendConfig(resolve(options.statePath)));
  else {
    const shadowed = await shadowedBackendProblem(options.moduleDir);
    if (shadowed) throw imageError(`${shadowed.message}. Nothing was read or changed; ${shadowed.fix}`);
    const backendPath = join(options.moduleDir, BACKEND_FILE);
    const backend = await readFile(backendPath, 'utf8').catch(() => undefined);
    if (backend !== undefined) scan = scanHcl(backend, scan, backendPath);
    if (!scan.backend)
      throw imageError(
        `${backendPath} does not hold the module's backend block: the module contract keeps it in a file of its own (or pass --state FILE for a local state)`,
      );
    await writeNewFile(join(root, BACKEND_FILE), backend!);
  }
  return { ...workdir, root, varFiles: [], applyVarFiles: [], madeSensitive: [], scan };
}
