// `captf-runner contract check`: does this image (or a directory tree laid out like one) keep the
// runner contract (contract/sections/image.md)? Each check names what is wrong and how to fix it.
// The cheap part (cheapOnly) is what every op checks before it touches any state.
import { execFile } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { asRunnerError, imageError, RunnerError } from '../../errors.ts';
import type { ObjectKind } from '../../object-kind.ts';
import { DEFAULT_POLICY_DIR } from '../../steps/policy.ts';
import { StopHandle } from '../../terraform/stop.ts';
import { checkSupported, resolveExecutable, terraformVersion, type TerraformVersion } from '../../terraform/version.ts';
import { scanModule } from '../../workspace/config-files.ts';
import type { ModuleScan } from '../../workspace/scan.ts';
import { type ImagePaths, imagePaths, MODULE_DIR, PROVIDER_MIRROR } from './image-paths.ts';
import { initAndValidate } from './init-checks.ts';
import {
  backendCheck,
  filesCheck,
  nonsensitiveCheck,
  reservedCheck,
  skipped,
  tfvarsCheck,
  variablesCheck,
} from './module-checks.ts';
import type { CheckRow, ContractCheck, ContractReport } from './report.ts';

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

  if (!options.cheapOnly)
    for (const row of await imageChecks({ inImage, sourceTree, root, env, workdir: options.workdir })) add(...row);

  // Not an op: no signal handling stops a contract check, so nothing interrupts through this handle.
  const stop = new StopHandle();
  const { row: terraformRow, terraform } = await terraformCheck(options.terraformPath ?? 'terraform', env, stop);
  add(...terraformRow);

  // As the terraform found reads it (every file when there is none).
  const scan =
    moduleDir instanceof RunnerError
      ? moduleDir
      : await scanModule(moduleDir, { tool: terraform?.flavor, resolution: paths.resolution }).catch((error: unknown) =>
          asRunnerError(error),
        );
  add(...moduleCheck(moduleDir, scan, moduleNamed, paths));
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
      for (const name of ['tfvars', 'backend', 'variables', 'nonsensitive'] as const)
        add(name, 'skip', 'not checked: no module');
    else {
      add(...(await tfvarsCheck(moduleDir, scan)));
      add(...(await backendCheck(moduleDir, scan, paths.resolution, inModule)));
      add(...variablesCheck(scan, options.kind));
      add(...nonsensitiveCheck(scan, inModule));
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

/** What only the image has (its entrypoint, its user), and the workdir an op would write in. */
async function imageChecks(where: {
  inImage: boolean;
  sourceTree: boolean;
  root: string;
  env: NodeJS.ProcessEnv;
  workdir: string | undefined;
}): Promise<CheckRow[]> {
  const rows: CheckRow[] = [];
  if (!where.inImage) {
    const why = where.sourceTree
      ? 'a module source tree (--module without --root)'
      : `a directory tree (--root ${where.root})`;
    for (const name of ['entrypoint', 'user'] as const)
      rows.push([name, 'skip', `not checked: ${why} is not the image; run contract check inside the image for it`]);
  } else {
    const entrypoint = await checkEntrypoint(where.env);
    rows.push(['entrypoint', entrypoint.ok ? 'pass' : 'fail', entrypoint.message, FIX.entrypoint]);
    const uid = process.getuid?.();
    if (uid === 0) rows.push(['user', 'fail', 'running as root (uid 0)', FIX.user]);
    else rows.push(['user', 'pass', `running as uid ${uid}`]);
  }
  // TMPDIR too when --workdir is elsewhere: the driver makes the sockets it reads terraform's output through there.
  const probed = [checkWritable(where.workdir ?? tmpdir(), where.workdir === undefined)];
  if (where.workdir !== undefined) probed.push(checkWritable(tmpdir(), true));
  rows.push([
    'workdir',
    probed.every((probe) => probe.ok) ? 'pass' : 'fail',
    probed.map((probe) => probe.message).join('; '),
    'mount a writable volume there (with a read-only root filesystem: an emptyDir), or pass --workdir DIR; TMPDIR must be writable either way',
  ]);
  return rows;
}

/** The terraform an op would run; `terraform` undefined when none is found or it is unsupported: nothing runs it. */
async function terraformCheck(
  path: string,
  env: NodeJS.ProcessEnv,
  stop: StopHandle,
): Promise<{ row: CheckRow; terraform?: TerraformVersion }> {
  try {
    const terraform = await terraformVersion(path, { env, stop });
    checkSupported(terraform);
    const name = terraform.flavor === 'opentofu' ? 'OpenTofu' : 'Terraform';
    return { row: ['terraform', 'pass', `${name} ${terraform.version} (${terraform.path})`], terraform };
  } catch (error) {
    return { row: ['terraform', 'fail', asRunnerError(error).message, FIX.terraform] };
  }
}

/** The module dir found and its configuration read (by the terraform found, every file when there is none). */
function moduleCheck(
  moduleDir: string | RunnerError,
  scan: ModuleScan | RunnerError,
  moduleNamed: string,
  paths: ImagePaths,
): CheckRow {
  if (moduleDir instanceof RunnerError) return ['module', 'fail', moduleDir.message, FIX.module];
  if (scan instanceof RunnerError) return ['module', 'fail', scan.message, FIX.module];
  const leadsTo =
    paths.inTree && moduleDir !== moduleNamed ? ` (a link to ${paths.resolution.display(moduleDir)} in the tree)` : '';
  return [
    'module',
    'pass',
    `${moduleNamed}${leadsTo}: ${count(scan.resources.length, 'resource')}, ${count(scan.moduleCalls.length, 'module call')}, ${count(scan.variables.length, 'variable')}`,
  ];
}

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
function checkWritable(dir: string, isTmpdir: boolean): { ok: boolean; message: string } {
  const what = isTmpdir
    ? `TMPDIR ${dir} (where terraform's output is read through sockets, and the default workdir's parent)`
    : `workdir ${dir}`;
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

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
