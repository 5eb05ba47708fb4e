// `captf-runner contract check`: does this image (or a directory tree laid out like one) keep the
// runner contract (contract/sections/image.md)? Each check names what is wrong and how to fix it.
// The cheap part (cheapOnly) is what every op checks before it touches any state.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { ObjectKind } from '../../object-kind.ts';
import type { CheckName, CheckProblem, CheckRow, ContractCheck, ContractReport } from './report.ts';
import { asRunnerError, imageError, RunnerError } from '../../errors.ts';
import { providersInInitOutput, type Diagnosis } from '../../terraform/diagnostics.ts';
import { init } from '../../terraform/init.ts';
import { StopHandle } from '../../terraform/stop.ts';
import { createTerraform, TerraformFailed } from '../../terraform/terraform.ts';
import { validate } from '../../terraform/validate.ts';
import type { TerraformDiagnostic } from '../../schemas/result.ts';
import { errorsOf } from '../../terraform/known-diagnostics.ts';
import { checkSupported, resolveExecutable, terraformVersion, type TerraformVersion } from '../../terraform/version.ts';
import { INPUTS_HASH_RESOURCE, INPUTS_HASH_VARIABLE } from '../../workspace/reserved-names.ts';
import type { ModuleScan } from '../../workspace/scan.ts';
import { scanHcl } from '../../workspace/scan-hcl.ts';
import { copyModuleTree, type ModuleEntry } from '../../workspace/module-tree.ts';
import { inTree, onThisMachine, type PathResolution } from '../../workspace/path-resolution.ts';
import {
  BACKEND_FILE,
  BACKEND_FILE_TOFU,
  moduleFilesProblem,
  overrideBackendBlocks,
  overrideBackendProblem,
  readModule,
  reservedNamesProblem,
  RUNNER_FILES,
  shadowedBackendProblem,
  shippedVariablesFiles,
  shippedVariablesProblem,
  skippedFilesProblem,
} from '../../workspace/workspace.ts';
import { scanModule } from '../../workspace/config-files.ts';
import { LockFileSyntaxError, parseLockFile } from './lock-file.ts';
import { localBackendBlockProblem, STATE_OUTSIDE_WORKDIR_FIX } from '../../workspace/state-location.ts';
import { REQUIRED_VARIABLES } from './module-files.ts';
import { readMirror, unvouched } from './providers.ts';
import { LOCK_FILE } from '../../workspace/terraform-files.ts';
import { DEFAULT_POLICY_DIR } from '../../steps/policy.ts';

export interface ContractCheckOptions {
  /**
   * '/' (default): this machine is the image, and the image-only checks run (entrypoint, non-root).
   * Another directory: a tree laid out like an image; paths in it, symbolic links included, are
   * resolved inside it as they would be in the image (never on this machine), init uses only the
   * tree's provider mirror, and the image-only checks are skipped.
   */
  root?: string;
  /**
   * Default /captf/module. Under a root, resolved inside it.
   */
  moduleDir?: string;
  /** Default `terraform` on PATH. Always a binary on this machine, also with a root. */
  terraformPath?: string;
  kind?: ObjectKind;
  /** The op's workdir; absent: the runner's default, a fresh dir under TMPDIR. */
  workdir?: string;
  /** The policy dir, which must then be one; absent: /captf/policy when it exists. Under a root, resolved inside it. */
  policyDir?: string;
  /** A module source tree (`--module` given, no `--root`): this machine's terraform and CLI configuration, the image-only checks skipped. */
  sourceTree?: boolean;
  /** Only what every op checks before touching state: terraform and the module's files. */
  cheapOnly?: boolean;
  env?: NodeJS.ProcessEnv;
}

const FIX = {
  module:
    'build the image FROM the runner image with the module at /captf/module (see examples/module-image), or pass --module DIR',
  terraform:
    'install a supported terraform or OpenTofu in the image (Dockerfile ARG TERRAFORM_VERSION), or pass --terraform PATH',
  entrypoint: 'build FROM the runner image and keep its ENTRYPOINT ["tini", "--", "captf-runner"] and PATH',
  user: 'do not override the runner image USER (10001); in Kubernetes set securityContext.runAsNonRoot: true and runAsUser: 10001',
  lockfile: `run \`terraform init\` against the image's mirror (or \`terraform providers lock -fs-mirror=DIR -platform=linux_amd64\`) and ship ${LOCK_FILE} next to the module's .tf files`,
  mirror:
    'mirror the provider into the image at /usr/share/terraform/plugins (`terraform providers mirror -platform=linux_amd64 DIR` on the host, then COPY DIR into the module image)',
  providers:
    "lock the module against the registry first (`terraform providers lock -platform=linux_amd64`: the hashes come from the registry's signed checksums), then mirror with that lock file in place (`terraform providers mirror -platform=linux_amd64 DIR`), and carry nothing else in /usr/share/terraform/plugins",
  validate: 'fix the module so that `terraform validate` passes',
} as const;

export async function runContractCheck(options: ContractCheckOptions = {}): Promise<ContractReport> {
  const root = resolve(options.root ?? '/');
  const sourceTree = options.root === undefined && options.sourceTree === true;
  const inImage = root === '/' && !sourceTree;
  const env = options.env ?? process.env;
  const paths = await imagePaths(root);
  const moduleNamed = paths.named(options.moduleDir ?? MODULE_DIR);
  const moduleDir = await paths
    .locate(options.moduleDir ?? MODULE_DIR)
    .catch((error: NodeJS.ErrnoException) => imageError(`the module dir ${moduleNamed} ${paths.unfound(error)}`));
  const checks: ContractCheck[] = [];
  const add = (...[name, status, message, fix, problems, warnings]: CheckRow) =>
    checks.push({
      name,
      status,
      message,
      ...(status === 'fail' && fix ? { fix } : {}),
      ...(status === 'fail' && problems?.length ? { problems } : {}),
      ...(warnings?.length ? { warnings } : {}),
    });

  if (!inImage && !options.cheapOnly) {
    const why = sourceTree ? 'a module source tree (--module without --root)' : `a directory tree (--root ${root})`;
    for (const name of ['entrypoint', 'user'] as const)
      add(name, 'skip', `not checked: ${why} is not the image; run contract check inside the image for it`);
  }
  if (inImage && !options.cheapOnly) {
    const entrypoint = await checkEntrypoint(env);
    add('entrypoint', entrypoint.ok ? 'pass' : 'fail', entrypoint.message, FIX.entrypoint);
    const uid = process.getuid?.();
    if (uid === 0) add('user', 'fail', 'running as root (uid 0)', FIX.user);
    else add('user', 'pass', `running as uid ${uid}`);
  }
  if (!options.cheapOnly) {
    const workdir = checkWritable(options.workdir ?? tmpdir(), options.workdir === undefined);
    add(
      'workdir',
      workdir.ok ? 'pass' : 'fail',
      workdir.message,
      'mount a writable volume there (with a read-only root filesystem: an emptyDir), or pass --workdir DIR',
    );
  }

  // Not an op: no signal handling stops a contract check, so nothing interrupts through this handle.
  const stop = new StopHandle();
  let terraform: TerraformVersion | undefined;
  try {
    terraform = await terraformVersion(options.terraformPath ?? 'terraform', { env, stop });
    checkSupported(terraform);
    add(
      'terraform',
      'pass',
      `${terraform.flavor === 'opentofu' ? 'OpenTofu' : 'Terraform'} ${terraform.version} (${terraform.path})`,
    );
  } catch (error) {
    add('terraform', 'fail', asRunnerError(error).message, FIX.terraform);
    terraform = undefined; // found but unsupported: nothing below runs it
  }

  // As the terraform found reads it (every file when there is none).
  const scan =
    moduleDir instanceof RunnerError
      ? moduleDir
      : await scanModule(moduleDir, { tool: terraform?.flavor, resolution: paths.resolution }).catch((error: unknown) =>
          asRunnerError(error),
        );
  if (scan instanceof RunnerError || moduleDir instanceof RunnerError)
    add('module', 'fail', (moduleDir instanceof RunnerError ? moduleDir : (scan as RunnerError)).message, FIX.module);
  else {
    const leadsTo =
      paths.inTree && moduleDir !== moduleNamed
        ? ` (a link to ${paths.resolution.display(moduleDir)} in the tree)`
        : '';
    add(
      'module',
      'pass',
      `${moduleNamed}${leadsTo}: ${count(scan.resources.length, 'resource')}, ${count(scan.moduleCalls.length, 'module call')}, ${count(scan.variables.length, 'variable')}`,
    );
  }
  // Problems name the module's files relative to the module dir, whatever path reached it.
  const inModule = (file: string) =>
    isAbsolute(file) && typeof moduleDir === 'string' ? relative(moduleDir, file) || '.' : file;
  add(...reservedCheck(scan, inModule));
  const files =
    typeof moduleDir === 'string'
      ? await filesCheck(moduleDir, scan, paths.resolution, inModule)
      : { row: skipped('files') };
  add(...files.row);

  if (!options.cheapOnly) {
    if (scan instanceof RunnerError || moduleDir instanceof RunnerError)
      for (const name of ['tfvars', 'backend', 'variables'] as const) add(name, 'skip', 'not checked: no module');
    else {
      add(...(await tfvarsCheck(moduleDir, scan)));
      add(...(await backendCheck(moduleDir, scan, paths.resolution, inModule)));
      add(...variablesCheck(scan, options.kind));
    }
    // A module whose files cannot be copied (a FIFO would fail the copy) is not init'ed either.
    if (!(scan instanceof RunnerError) && terraform && files.entries) {
      const mirror = sourceTree
        ? undefined
        : await paths
            .locate(PROVIDER_MIRROR)
            .catch((error: NodeJS.ErrnoException) =>
              error.code === 'ENOENT'
                ? null
                : imageError(`the provider mirror ${paths.named(PROVIDER_MIRROR)} ${paths.unfound(error)}`),
            );
      await initAndValidate({ entries: files.entries, terraformPath: terraform.path, env, stop, add, mirror, paths });
    } else
      for (const name of ['lockfile', 'providers', 'init', 'validate'] as const)
        add(
          name,
          'skip',
          `not run: ${!terraform ? 'no supported terraform' : scan instanceof RunnerError ? 'no module' : "the module's files cannot be copied"}`,
        );
    add(...(await policyCheck(options.policyDir, paths)));
  }

  return {
    status: checks.some((c) => c.status === 'fail') ? 'fail' : 'pass',
    module: moduleNamed,
    checks,
    ...(terraform ? { terraform: { version: terraform.version, flavor: terraform.flavor, path: terraform.path } } : {}),
  };
}

const MODULE_DIR = '/captf/module';
/** Where the image keeps its providers (runner/terraformrc). */
const PROVIDER_MIRROR = '/usr/share/terraform/plugins';

/** Where the image's paths are: on this machine (the image itself, a module source tree), or inside a tree laid out like an image. */
interface ImagePaths {
  inTree: boolean;
  resolution: PathResolution;
  /** An image path as this machine names it, before any link is followed (for messages). */
  named(path: string): string;
  /** Where an image path leads, links followed as in the image; on this machine the kernel follows them when the path is used. */
  locate(path: string): Promise<string>;
  /** Why `locate` failed, in words for a message. */
  unfound(error: NodeJS.ErrnoException): string;
}

async function imagePaths(root: string): Promise<ImagePaths> {
  if (root === '/')
    return {
      inTree: false,
      resolution: onThisMachine,
      named: (path) => resolve(path),
      locate: async (path) => resolve(path),
      unfound: (error) => `cannot be read (${error.code})`,
    };
  const resolution: PathResolution = await inTree(root).catch((error: NodeJS.ErrnoException) => ({
    resolve: () => Promise.reject(error),
    display: (path: string) => path,
  }));
  return {
    inTree: true,
    resolution,
    named: (path) => join(root, path),
    locate: (path) => resolution.resolve(join(root, path)),
    unfound: (error) =>
      error.code === 'ENOENT'
        ? `does not exist in the tree ${root} (symbolic links followed inside the tree, as in the image)`
        : `cannot be followed inside the tree ${root} (${error.code}: symbolic links resolve inside the tree, as in the image)`,
  };
}

const skipped = (name: CheckName): CheckRow => [name, 'skip', 'not checked: no module'];

async function checkEntrypoint(env: NodeJS.ProcessEnv): Promise<{ ok: boolean; message: string }> {
  const missing = ['tini', 'captf-runner'].filter((name) => !resolveExecutable(name, env.PATH));
  if (missing.length) return { ok: false, message: `${missing.join(' and ')} not found as an executable on PATH` };
  const runner = resolveExecutable('captf-runner', env.PATH)!;
  try {
    await promisify(execFile)(runner, ['--help'], { env, timeout: 30_000 });
    return { ok: true, message: `tini and ${runner} present; \`captf-runner --help\` runs` };
  } catch (error) {
    return {
      ok: false,
      message: `${runner} is present but \`captf-runner --help\` failed: ${(error as Error).message.split('\n')[0]}`,
    };
  }
}

/**
 * A workdir that exists must be writable; one that does not must be creatable, so its nearest
 * existing parent must be. Probed by writing a file: permission bits do not tell about a read-only mount.
 */
function checkWritable(dir: string, isDefault: boolean): { ok: boolean; message: string } {
  const what = isDefault ? `TMPDIR ${dir} (the default workdir's parent)` : `workdir ${dir}`;
  let probeDir = resolve(dir);
  while (!existsSync(probeDir) && dirname(probeDir) !== probeDir) probeDir = dirname(probeDir);
  try {
    const probe = join(probeDir, `.captf-contract-check-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe);
    return {
      ok: true,
      message: `${what} is writable${probeDir === resolve(dir) ? '' : ` (it will be created in ${probeDir})`}`,
    };
  } catch (error) {
    return {
      ok: false,
      message: `${what} is not writable: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    };
  }
}

/** The backend in backend.tf and nowhere else: restore and unlock build a root of that file alone. */
async function backendCheck(
  moduleDir: string,
  scan: ModuleScan,
  resolution: PathResolution,
  inModule: (file: string) => string,
): Promise<CheckRow> {
  const fix = `put the module's backend alone in ${BACKEND_FILE}: terraform { backend "kubernetes" {} } (its settings come from --backend-config files)`;
  if (!scan.backend)
    return ['backend', 'fail', 'the module declares no backend: its state would be lost with the workdir', fix];
  // Every op refuses this too (prepareWorkspace): an override file's backend wins over backend.tf.
  const override = overrideBackendProblem(scan);
  if (override)
    return [
      'backend',
      'fail',
      override.message,
      override.fix,
      overrideBackendBlocks(scan).map((b) => ({
        file: inModule(b.file),
        line: b.line,
        message: b.type === 'cloud' ? 'cloud block in an override file' : `backend "${b.type}" in an override file`,
      })),
    ];
  const shadowed = await shadowedBackendProblem(moduleDir);
  if (shadowed)
    return [
      'backend',
      'fail',
      shadowed.message,
      shadowed.fix,
      [
        {
          file: BACKEND_FILE_TOFU,
          message: `beside ${BACKEND_FILE}: OpenTofu reads it, terraform reads ${BACKEND_FILE}`,
        },
      ],
    ];
  const text = await resolution
    .resolve(join(moduleDir, BACKEND_FILE))
    .then((real) => readFile(real, 'utf8'))
    .catch(() => undefined);
  const elsewhere = scan.backendBlocks
    .filter((b) => basename(b.file) !== BACKEND_FILE)
    .map((b) => ({ file: inModule(b.file), line: b.line, message: `backend "${b.type}" outside ${BACKEND_FILE}` }));
  if (text === undefined)
    return [
      'backend',
      'fail',
      `the module declares backend "${scan.backend}", but not in ${BACKEND_FILE}`,
      fix,
      elsewhere,
    ];
  const own = scanHcl(text);
  if (!own.backend)
    return [
      'backend',
      'fail',
      `${BACKEND_FILE} holds no backend block (the module declares backend "${scan.backend}" elsewhere)`,
      fix,
      elsewhere,
    ];
  if (own.resources.length + own.moduleCalls.length + own.variables.length > 0)
    return [
      'backend',
      'fail',
      `${BACKEND_FILE} holds more than the backend block (resources, module calls or variables)`,
      fix,
      [{ file: BACKEND_FILE, message: 'holds resources, module calls or variables besides the backend block' }],
    ];
  // Every op refuses it too, after init (StateInWorkdir): the state would be lost with the workdir.
  const block = own.backendBlocks[0]!;
  const inWorkdir = localBackendBlockProblem(block);
  if (inWorkdir)
    return [
      'backend',
      'fail',
      `${BACKEND_FILE}: ${inWorkdir}`,
      STATE_OUTSIDE_WORKDIR_FIX,
      [{ file: BACKEND_FILE, line: block.line, message: inWorkdir }],
    ];
  return [
    'backend',
    'pass',
    `backend "${own.backend}" in ${BACKEND_FILE}${block.path ? ` (the state at ${block.path}, which must be on a volume that outlives the pod)` : ''}`,
  ];
}

/** Every op refuses such a module before terraform runs (prepareWorkspace). */
function reservedCheck(scan: ModuleScan | RunnerError, inModule: (file: string) => string): CheckRow {
  if (scan instanceof RunnerError) return skipped('reserved');
  const problem = reservedNamesProblem(scan);
  if (problem)
    return [
      'reserved',
      'fail',
      problem.message,
      problem.fix,
      scan.reserved.map((use) => ({ file: inModule(use.file), line: use.line, message: use.what })),
    ];
  return ['reserved', 'pass', `names neither ${INPUTS_HASH_RESOURCE} nor var.${INPUTS_HASH_VARIABLE}`];
}

/**
 * The module's files as the workdir copy takes them: apply, plan, refresh and drift refuse what this
 * fails on (prepareWorkspace). `entries`: what the copy holds, when it can be made.
 */
async function filesCheck(
  moduleDir: string,
  scan: ModuleScan | RunnerError,
  resolution: PathResolution,
  inModule: (file: string) => string,
): Promise<{ row: CheckRow; entries?: ModuleEntry[] }> {
  if (scan instanceof RunnerError) return { row: skipped('files') };
  const tree = await readModule(moduleDir, resolution).catch((error: Error) => error);
  if (tree instanceof Error)
    return {
      row: [
        'files',
        'fail',
        `the module dir cannot be read: ${tree.message}`,
        "make the module readable by the runner's uid",
      ],
    };
  const problem = moduleFilesProblem(tree.problems);
  if (problem)
    return {
      row: [
        'files',
        'fail',
        problem.message,
        problem.fix,
        tree.problems.map((p) => ({ file: inModule(p.file), message: p.what })),
      ],
    };
  // Every op refuses these too (prepareWorkspace): files the tool does not read that would change the run.
  const skippedFiles = skippedFilesProblem(scan);
  if (skippedFiles)
    return {
      row: [
        'files',
        'fail',
        skippedFiles.message,
        skippedFiles.fix,
        skippedFiles.files.map((file) => ({ file: inModule(file.file), message: file.why })),
      ],
    };
  return {
    row: [
      'files',
      'pass',
      `no file named like the runner's own (${[...RUNNER_FILES].join(', ')}); no symbolic link leads outside the module`,
    ],
    entries: tree.entries,
  };
}

async function tfvarsCheck(moduleDir: string, scan: ModuleScan | RunnerError): Promise<CheckRow> {
  if (scan instanceof RunnerError) return skipped('tfvars');
  const names = shippedVariablesFiles(
    (await readdir(moduleDir, { withFileTypes: true }).catch(() => []))
      .filter((entry) => !entry.isDirectory())
      .map((entry) => entry.name),
  );
  if (names.length === 0)
    return [
      'tfvars',
      'pass',
      'no terraform.tfvars(.json) or *.auto.tfvars(.json): every variable value comes from the inputs',
    ];
  const problem = shippedVariablesProblem(names);
  return [
    'tfvars',
    'fail',
    problem.message,
    problem.fix,
    names.map((file) => ({ file, message: 'terraform loads this file by itself, outside the inputs hash' })),
  ];
}

/** The image's CLI configuration (runner/terraformrc) for another mirror: providers from it alone, never a registry or this machine's own mirror. */
const mirrorOnlyCliConfig = (mirror: string) =>
  `provider_installation {\n  filesystem_mirror {\n    path    = ${JSON.stringify(mirror)}\n    include = ["*/*/*"]\n  }\n}\ndisable_checkpoint = true\n`;

function variablesCheck(scan: ModuleScan, kind: ObjectKind | undefined): CheckRow {
  if (!kind) return ['variables', 'pass', 'no --kind given: no per-kind variables required'];
  const required = REQUIRED_VARIABLES[kind];
  const missing = required.filter((name) => !scan.variables.includes(name));
  if (missing.length === 0)
    return [
      'variables',
      'pass',
      required.length ? `declares ${required.join(', ')} (required for ${kind})` : `nothing required for ${kind}`,
    ];
  return [
    'variables',
    'fail',
    `a ${kind} module must declare ${missing.map((n) => `variable "${n}"`).join(' and ')}`,
    `add ${missing.map((n) => `variable "${n}" {}`).join(' and ')} to the module (the controller always sets ${missing.length === 1 ? 'it' : 'them'})`,
  ];
}

interface InitOptions {
  /** The module's files, as the workdir copy takes them. */
  entries: readonly ModuleEntry[];
  terraformPath: string;
  env: NodeJS.ProcessEnv;
  stop: StopHandle;
  add: (...row: CheckRow) => void;
  paths: ImagePaths;
  /** The image's provider mirror, located; null: there is none; undefined: a module source tree, whose mirror is this machine's. */
  mirror: string | null | RunnerError | undefined;
}

/**
 * The lock file, the mirror's providers against it, then init and validate: in a temp copy of the
 * module's files (the module dir may be read-only, and a tree's links resolve only in the copy),
 * offline, from the image's mirror: a tree's alone, else what this machine's CLI configuration says.
 */
async function initAndValidate(options: InitOptions): Promise<void> {
  const { env: baseEnv, add, paths, mirror } = options;
  const scratch = mkdtempSync(join(tmpdir(), 'captf-contract-'));
  const copy = join(scratch, 'module');
  let env = baseEnv;
  try {
    await copyModuleTree(options.entries, copy);
    if (paths.inTree) {
      // The tree's mirror alone: never a registry, never this machine's own mirrors.
      const treeMirror = typeof mirror === 'string' ? mirror : join(scratch, 'no-mirror');
      if (treeMirror !== mirror) mkdirSync(treeMirror);
      writeFileSync(join(scratch, 'terraformrc'), mirrorOnlyCliConfig(treeMirror));
      env = { ...baseEnv, TF_CLI_CONFIG_FILE: join(scratch, 'terraformrc') };
    }
    const providers = await providersCheck(copy, mirror, paths);
    if (providers[1] === 'fail') {
      // Nothing from a mirror the lock file does not vouch for is installed, let alone started (validate starts providers).
      add(...lockfileCheck(copy, undefined));
      add(...providers);
      for (const name of ['init', 'validate'] as const)
        add(name, 'skip', 'not run: the provider mirror holds packages the lock file does not vouch for');
      return;
    }
    const initLines: string[] = [];
    const tf = createTerraform({
      path: options.terraformPath,
      cwd: copy,
      env,
      output: { line: (_stream, text) => void initLines.push(text) },
      stop: options.stop,
    });
    const failed = await init(tf, { backend: false, lockfileReadonly: true }).then(
      () => undefined,
      (error: unknown) => {
        if (error instanceof TerraformFailed) return error;
        throw error;
      },
    );
    add(...lockfileCheck(copy, { exitCode: failed?.exitCode ?? 0, providers: providersInInitOutput(initLines) }));
    add(...providers);

    if (failed) {
      add(
        'init',
        'fail',
        `init -backend=false -lockfile=readonly exited ${failed.exitCode}: ${failed.diagnosis.summary ?? 'no error message'}`,
        initFix(failed.diagnosis),
        diagnosticProblems(failed),
      );
      add('validate', 'skip', 'not run: init failed');
      return;
    }
    add('init', 'pass', 'init -backend=false -lockfile=readonly succeeds offline');
    try {
      await validate(tf.withOutput({ line() {} }));
      add('validate', 'pass', 'validate passes');
    } catch (error) {
      const failure = asRunnerError(error);
      add('validate', 'fail', failure.message, FIX.validate, diagnosticProblems(failure));
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Every provider package in the image's mirror is one the module's lock file vouches for: its provider, its version, its hash. */
async function providersCheck(copy: string, mirror: InitOptions['mirror'], paths: ImagePaths): Promise<CheckRow> {
  if (mirror === undefined)
    return [
      'providers',
      'skip',
      'not checked: a module source tree has no image mirror; run contract check inside the image (or with --root) for it',
    ];
  if (mirror instanceof RunnerError) return ['providers', 'fail', mirror.message, FIX.providers];
  if (mirror === null || !(await lstat(mirror).catch(() => undefined))?.isDirectory())
    return [
      'providers',
      'pass',
      `no provider mirror at ${paths.named(PROVIDER_MIRROR)}: the image carries no provider`,
    ];
  let lock: ReturnType<typeof parseLockFile> = [];
  const lockText = await readFile(join(copy, LOCK_FILE), 'utf8').catch(() => undefined);
  try {
    if (lockText !== undefined) lock = parseLockFile(lockText);
  } catch (error) {
    if (!(error instanceof LockFileSyntaxError)) throw error;
    return [
      'providers',
      'fail',
      `${LOCK_FILE} cannot be read as terraform writes it: ${error.message}`,
      FIX.lockfile,
      [{ file: LOCK_FILE, message: error.message }],
    ];
  }
  const found = await readMirror(mirror, paths.resolution, paths.inTree).catch((error: unknown) =>
    asRunnerError(error),
  );
  if (found instanceof RunnerError) return ['providers', 'fail', found.message, FIX.providers];
  const problems: CheckProblem[] = [...found.problems.map((p) => ({ file: p.path, message: p.message }))];
  for (const item of found.packages) {
    const why = unvouched(item, lock);
    if (why) problems.push({ file: item.path, message: why });
  }
  const where = paths.resolution.display(mirror);
  if (problems.length > 0)
    return [
      'providers',
      'fail',
      `the provider mirror ${where} holds what ${LOCK_FILE} does not vouch for: ${problems.map((p) => `${p.file} ${p.message}`).join('; ')}`,
      FIX.providers,
      problems,
    ];
  if (found.packages.length === 0) return ['providers', 'pass', `the provider mirror ${where} holds no provider`];
  return [
    'providers',
    'pass',
    `${LOCK_FILE} vouches for every package in ${where}: ${found.packages.map((p) => `${p.address} ${p.version} ${p.platform}`).join(', ')}`,
  ];
}

/** The policy dir compiles as apply, plan and drift compile it before they plan (contract/sections/policy.md); a tree's is found inside the tree. */
async function policyCheck(given: string | undefined, paths: ImagePaths): Promise<CheckRow> {
  const named = paths.named(given ?? DEFAULT_POLICY_DIR);
  const dir = await paths.locate(given ?? DEFAULT_POLICY_DIR).catch((error: NodeJS.ErrnoException) => error);
  if (given === undefined && (dir instanceof Error || !existsSync(dir)))
    return ['policy', 'pass', `no policy dir at ${named}: plans are held to no policy`];
  const { describeProblem, loadPolicy, POLICY_FIX } = await import('../../policy/index.ts');
  const misnamed =
    "check --policy: it names no policy dir (without it, the image's /captf/policy is checked when there is one)";
  if (dir instanceof Error) return ['policy', 'fail', `the policy dir ${named} ${paths.unfound(dir)}`, misnamed];
  try {
    const policy = await loadPolicy(dir);
    const limit = policy.maxDeletes
      ? `, at most ${policy.maxDeletes.limit} deletes per plan (${policy.maxDeletes.file})`
      : '';
    const warnings = policy.warnings.map(describeProblem);
    return [
      'policy',
      'pass',
      `${dir}: ${count(policy.files.length, 'file')}, ${count(policy.rules.length, 'rule')}${limit}${warnings.length ? `; ${count(warnings.length, 'warning')}` : ''}`,
      undefined,
      undefined,
      warnings,
    ];
  } catch (error) {
    const failure = asRunnerError(error);
    return ['policy', 'fail', failure.message, failure.detail?.setting === 'policy' ? misnamed : POLICY_FIX];
  }
}

/** terraform's errors (error.detail.diagnostics), where it found them: the module as a whole when it names no file. */
function diagnosticProblems(error: RunnerError): CheckProblem[] {
  const diagnostics = (error.detail?.diagnostics ?? []) as TerraformDiagnostic[];
  return errorsOf(diagnostics).map((d) => ({
    file: d.file ?? '.',
    ...(d.line !== undefined ? { line: d.line } : {}),
    message: d.summary + (d.detail ? `: ${d.detail.replace(/\s*\n\s*/g, ' ')}` : ''),
  }));
}

/**
 * A lock file is required when the module uses any provider that is not built in (builtin-only
 * modules get none from init): what init looked for says which; `init` undefined: it did not run.
 */
function lockfileCheck(copy: string, init: { exitCode: number; providers: string[] } | undefined): CheckRow {
  if (existsSync(join(copy, LOCK_FILE))) return ['lockfile', 'pass', `${LOCK_FILE} present`];
  if (!init)
    return ['lockfile', 'skip', 'not checked: init did not run, so which providers the module requires is not known'];
  const providersLookedFor = init.providers;
  if (providersLookedFor.length > 0)
    return [
      'lockfile',
      'fail',
      `${LOCK_FILE} missing; the module requires ${providersLookedFor.join(', ')}`,
      FIX.lockfile,
      [{ file: LOCK_FILE, message: `missing; the module requires ${providersLookedFor.join(', ')}` }],
    ];
  if (init.exitCode === 0)
    return ['lockfile', 'pass', `no ${LOCK_FILE} needed: the module uses only built-in providers`];
  return ['lockfile', 'skip', 'not checked: init failed before it looked for providers'];
}

function initFix(diagnosis: Diagnosis): string {
  if (diagnosis.problem.kind === 'providerNotInstallable') return FIX.mirror;
  if (diagnosis.problem.kind === 'lockFile') return FIX.lockfile;
  return "run `terraform init -backend=false -lockfile=readonly` on the module with the image's CLI configuration (TF_CLI_CONFIG_FILE) and fix what it reports";
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
