// The checks that run terraform on the module (lockfile, providers, init, validate): in a temp copy of its
// files, offline, from the image's provider mirror, after the mirror's packages are checked against the lock file.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asRunnerError, RunnerError } from '../../errors.ts';
import type { TerraformDiagnostic } from '../../schemas/result.ts';
import { providersInInitOutput, type Diagnosis } from '../../terraform/diagnostics.ts';
import { init } from '../../terraform/init.ts';
import { errorsOf } from '../../terraform/known-diagnostics.ts';
import type { StopHandle } from '../../terraform/stop.ts';
import { createTerraform, TerraformFailed } from '../../terraform/terraform.ts';
import { validate } from '../../terraform/validate.ts';
import { copyModuleTree, type ModuleEntry } from '../../workspace/module-tree.ts';
import { LOCK_FILE } from '../../workspace/terraform-files.ts';
import { type ImagePaths, PROVIDER_MIRROR } from './image-paths.ts';
import { LockFileSyntaxError, parseLockFile } from './lock-file.ts';
import { readMirror, unvouched } from './providers.ts';
import type { CheckProblem, CheckRow } from './report.ts';

const FIX = {
  lockfile: `run \`terraform init\` against the image's mirror (or \`terraform providers lock -fs-mirror=DIR -platform=linux_amd64\`) and ship ${LOCK_FILE} next to the module's .tf files`,
  mirror:
    'mirror the provider into the image at /usr/share/terraform/plugins (`terraform providers mirror -platform=linux_amd64 DIR` on the host, then COPY DIR into the module image)',
  providers:
    "lock the module against the registry first (`terraform providers lock -platform=linux_amd64`: the hashes come from the registry's signed checksums), then mirror with that lock file in place (`terraform providers mirror -platform=linux_amd64 DIR`), and carry nothing else in /usr/share/terraform/plugins",
  validate: 'fix the module so that `terraform validate` passes',
} as const;

/** The image's CLI configuration (runner/terraformrc) for another mirror: providers from it alone, never a registry or this machine's own mirror. */
const mirrorOnlyCliConfig = (mirror: string) =>
  `provider_installation {\n  filesystem_mirror {\n    path    = ${JSON.stringify(mirror)}\n    include = ["*/*/*"]\n  }\n}\ndisable_checkpoint = true\n`;

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
export async function initAndValidate(options: InitOptions): Promise<void> {
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
      output: { lines: (_stream, texts) => void initLines.push(...texts) },
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
      await validate(tf.withOutput({ lines() {} }));
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
