// Terraform in tests: module trees built only from builtin pieces (terraform_data, local-exec), so
// `terraform init` needs no download; the environment terraform must run with; readers of local
// state; and the glue to put the fake terraform (fake-terraform.mjs) in place of the real one.
//
// Every module is a variant of `modules.base` and keeps its addresses, so a test can apply the base
// and then plan a variant against the same state. tf-modules.test.ts proves each variant's actions.
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runProcess } from './exec.ts';

/** Relative path → file content. */
export type FileTree = Readonly<Record<string, string>>;

// ---- which terraform ------------------------------------------------------------------------

/**
 * The terraform (or OpenTofu) binary the tests run: the path in CAPTF_TEST_TERRAFORM, else
 * `terraform` on PATH. Its directory goes first on this process's PATH (a symlink named
 * `terraform` when the binary has another name), so the runner under test, wrapper scripts and
 * every test that starts `terraform` run this one. scripts/test.sh runs the e2e suite once per
 * binary named in CAPTF_TEST_TERRAFORMS.
 */
export const TERRAFORM = chooseTerraform(process.env.CAPTF_TEST_TERRAFORM);

function chooseTerraform(path: string | undefined): string {
  if (path === undefined || path === '') return 'terraform';
  try {
    if (!isAbsolute(path)) throw new Error('not an absolute path');
    accessSync(path, constants.X_OK);
  } catch (error) {
    throw new Error(
      `CAPTF_TEST_TERRAFORM=${path}: ${(error as Error).message}. Set it to the absolute path of a terraform or OpenTofu binary, or unset it to use terraform on PATH`,
    );
  }
  let binDir = dirname(path);
  if (basename(path) !== 'terraform') {
    binDir = mkdtempSync(join(tmpdir(), 'captf-test-terraform-'));
    symlinkSync(path, join(binDir, 'terraform'));
    process.once('exit', () => rmSync(binDir, { recursive: true, force: true }));
  }
  process.env.PATH = `${binDir}${delimiter}${process.env.PATH ?? ''}`;
  return join(binDir, 'terraform');
}

// ---- files and processes --------------------------------------------------------------------

/** A fresh temp dir, removed when the test (or the suite whose context is given) ends; kept when none is. */
export async function tempDir(t?: { after(fn: () => Promise<void>): void }, prefix = 'captf-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t?.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export async function writeTree(dir: string, tree: FileTree): Promise<void> {
  for (const [path, content] of Object.entries(tree)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

/** Writes the tree into a fresh temp dir (removed after the test) and returns the dir. */
export async function writeModule(tree: FileTree, t?: TestContext): Promise<string> {
  const dir = await tempDir(t, 'captf-module-');
  await writeTree(dir, tree);
  return dir;
}

/**
 * Swaps the configuration in a working dir for another variant's: removes the `.tf` files and the
 * `modules/` dir, keeps everything else (state, `.terraform/`, plan files). Run `init` again after.
 */
export async function replaceConfiguration(dir: string, tree: FileTree): Promise<void> {
  for (const entry of await readdir(dir)) {
    if (entry.endsWith('.tf') || entry === 'modules') await rm(join(dir, entry), { recursive: true, force: true });
  }
  await writeTree(dir, tree);
}

/**
 * The environment for any terraform a test starts, directly or through the runner: the parent's
 * environment without the TF_* variables that change what terraform does and the test harness's own
 * CAPTF_TEST_* (the runner would warn of each as a setting it does not know), plus quiet automation
 * settings. The machine's CLI config file is missing and terraform would warn about it.
 */
export function testTerraformEnv(extra: Record<string, string> = {}): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    (entry): entry is [string, string] => entry[1] !== undefined && !/^(TF_|CAPTF_TEST_)/.test(entry[0]),
  );
  return {
    ...Object.fromEntries(inherited),
    TF_CLI_CONFIG_FILE: '/dev/null',
    TF_IN_AUTOMATION: '1',
    TF_INPUT: '0',
    CHECKPOINT_DISABLE: '1', // no version check over the network
    ...extra,
  };
}

export interface TerraformRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the real terraform in `dir` (never throws on a non-zero exit; check exitCode). */
export async function runTestTerraform(
  dir: string,
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<TerraformRun> {
  const run = await runProcess(TERRAFORM, args, {
    cwd: dir,
    env: testTerraformEnv(options.env),
    timeoutMs: options.timeoutMs ?? 120_000,
  });
  if (run.exitCode === undefined)
    throw new Error(
      `terraform ${args.join(' ')} did not exit: ${run.timedOut ? 'timed out' : `ended by ${run.signal}`}`,
    );
  return { exitCode: run.exitCode, stdout: run.stdout, stderr: run.stderr };
}

/** True while the process exists and is not a zombie (Linux /proc). */
export function isProcessRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Whether the process has ended within `withinMs`. A killed process closes its files before the
 * kernel marks it ended: read at once after its pipes closed, it can still look alive for a moment.
 */
export async function processEnds(pid: number, withinMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (isProcessRunning(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

// ---- the module catalogue -------------------------------------------------------------------

/** The value the base module's sensitive variable defaults to; tests pass their own canary. */
export const BASE_ADMIN_TOKEN = 'base-admin-token';

interface ClusterOptions {
  /** In `input`: a change is an in-place update. */
  generation?: number;
  /** `triggers_replace`: a change replaces the resource. */
  replaceTrigger?: string;
  createBeforeDestroy?: boolean;
  failingPrecondition?: boolean;
}

function cluster({
  generation = 1,
  replaceTrigger = 'v1',
  createBeforeDestroy = false,
  failingPrecondition = false,
}: ClusterOptions = {}) {
  const lifecycle = [
    createBeforeDestroy ? '    create_before_destroy = true' : '',
    failingPrecondition
      ? [
          '    precondition {',
          '      condition     = var.cluster_name == "a-name-nobody-uses"',
          '      error_message = "The cluster name fails the precondition on purpose."',
          '    }',
        ].join('\n')
      : '',
  ]
    .filter(Boolean)
    .join('\n');
  return `resource "terraform_data" "cluster" {
  input            = { name = var.cluster_name, generation = ${generation} }
  triggers_replace = "${replaceTrigger}"
${lifecycle ? `  lifecycle {\n${lifecycle}\n  }\n` : ''}}
`;
}

const nodes = (keys: string[]) => `resource "terraform_data" "node" {
  for_each = toset(${JSON.stringify(keys)})
  input    = "node-\${each.key}"
}
`;

const replicas = (count: number) => `resource "terraform_data" "replica" {
  count = ${count}
  input = "replica-\${count.index}"
}
`;

const network = (name = 'network') => `resource "terraform_data" "${name}" {
  input = "10.0.0.0/16"
}
`;

const credentials = `resource "terraform_data" "credentials" {
  input = var.admin_token
}
`;

const addonCall = `module "addon" {
  source = "./modules/addon"
}
`;

const addonModule = `resource "terraform_data" "this" {
  input = "addon"
}

output "id" {
  value = terraform_data.this.id
}
`;

const variables = `variable "cluster_name" {
  type    = string
  default = "demo"
}

variable "admin_token" {
  type      = string
  sensitive = true
  default   = "${BASE_ADMIN_TOKEN}"
}
`;

const outputs = `output "cluster_id" {
  value = terraform_data.cluster.id
}

output "node_ids" {
  value = { for key, node in terraform_data.node : key => node.id }
}

output "admin_token" {
  value     = var.admin_token
  sensitive = true
}
`;

interface BaseParts {
  cluster?: string;
  nodes?: string;
  replicas?: string;
  /** Blocks in place of `terraform_data.network` (or '' to remove it). */
  network?: string;
  addonCall?: string;
  /** Blocks appended to main.tf. */
  extra?: string;
  outputs?: string;
}

/** The base module with some of its parts swapped: every variant is one of these. */
function baseWith(parts: BaseParts = {}): FileTree {
  const main = [
    parts.cluster ?? cluster(),
    parts.nodes ?? nodes(['a', 'b']),
    parts.replicas ?? replicas(3),
    parts.network ?? network(),
    credentials,
    parts.addonCall ?? addonCall,
    parts.extra ?? '',
  ]
    .filter(Boolean)
    .join('\n');
  return {
    'main.tf': main,
    'variables.tf': variables,
    'outputs.tf': parts.outputs ?? outputs,
    'modules/addon/main.tf': addonModule,
  };
}

/**
 * The catalogue. `base` creates (addresses): terraform_data.cluster, terraform_data.node["a"|"b"],
 * terraform_data.replica[0..2], terraform_data.network, terraform_data.credentials (input = the
 * sensitive var.admin_token), module.addon.terraform_data.this; outputs cluster_id, node_ids and
 * admin_token (sensitive). Each other entry, planned over an applied base, does what its name says.
 */
export const modules = {
  base: baseWith(),
  /** terraform_data.cluster: update (input changes). */
  update: baseWith({ cluster: cluster({ generation: 2 }) }),
  /**
   * terraform_data.forger: create, and its local-exec prints what terraform prints for a stale saved
   * plan and a held state lock, then fails: terraform quotes it in its own error on stderr.
   */
  forgesTerraformErrors: baseWith({
    extra: String.raw`resource "terraform_data" "forger" {
  provisioner "local-exec" {
    command = "printf '%s\\n' '' 'Error: Saved plan is stale' '' 'Error: Error acquiring the state lock' '' 'Lock Info:' '  ID:        forged-lock-id' '  Who:       mallory@module'; exit 1"
  }
}
`,
  }),
  /** terraform_data.cluster: delete, create (triggers_replace changes). */
  replace: baseWith({ cluster: cluster({ replaceTrigger: 'v2' }) }),
  /** terraform_data.cluster: create, delete. */
  replaceCreateBeforeDestroy: baseWith({ cluster: cluster({ replaceTrigger: 'v2', createBeforeDestroy: true }) }),
  /** terraform_data.network: delete (delete_because_no_resource_config). */
  deleteByRemoval: baseWith({ network: '' }),
  /** terraform_data.replica[1], [2]: delete (delete_because_count_index). */
  shrinkCount: baseWith({ replicas: replicas(1) }),
  /** terraform_data.node["b"]: delete (delete_because_each_key). */
  removeForEachKey: baseWith({ nodes: nodes(['a']) }),
  /** module.addon.terraform_data.this: delete (delete_because_no_resource_config). */
  removeModuleCall: baseWith({ addonCall: '' }),
  /** terraform_data.network: forget (removed block with destroy = false). */
  forget: baseWith({
    network: `removed {
  from = terraform_data.network
  lifecycle {
    destroy = false
  }
}
`,
  }),
  /** terraform_data.network renamed to terraform_data.vpc: no-op with previous_address. */
  moved: baseWith({
    network: `${network('vpc')}
moved {
  from = terraform_data.network
  to   = terraform_data.vpc
}
`,
  }),
  /** terraform_data.imported: no-op while importing id "imported-id-123". */
  importBlock: baseWith({
    extra: `import {
  to = terraform_data.imported
  id = "imported-id-123"
}

resource "terraform_data" "imported" {}
`,
  }),
  /** Resources no-op, output `region` created: plan exit 2. */
  outputOnly: baseWith({ outputs: `${outputs}\noutput "region" {\n  value = "eu-west-1"\n}\n` }),
  /** Plan fails (exit 1): terraform_data.cluster's precondition is false. */
  failingPrecondition: baseWith({ cluster: cluster({ failingPrecondition: true }) }),
  /**
   * Apply fails half way (exit 1): creates terraform_data.step["first"|"failing"|"last"]; the
   * "failing" one's local-exec exits 1 (it ends tainted), the other two succeed.
   */
  failingApply: baseWith({
    extra: `resource "terraform_data" "step" {
  for_each = toset(["first", "failing", "last"])
  input    = each.key

  provisioner "local-exec" {
    command = each.key == "failing" ? "echo step failed on purpose >&2; exit 1" : "true"
  }
}
`,
  }),
  /** The base module with its state in PostgreSQL; pass `-backend-config=conn_str=...` to init. */
  pgBackend: withPgBackend(baseWith()),
  /**
   * A machine pool's module: the pool contract's `bootstrap_data` (sensitive; a change updates
   * terraform_data.bootstrap) and `captf_cluster_outputs` (a change replaces every
   * terraform_data.machine[N]: the destructive case the pool guard is about).
   */
  pool: {
    'main.tf': `variable "bootstrap_data" {
  type      = string
  sensitive = true
  default   = "bootstrap-v1"
}

variable "captf_cluster_outputs" {
  type    = any
  default = { endpoint = "https://cluster.example:6443" }
}

variable "replicas" {
  type    = number
  default = 2
}

resource "terraform_data" "bootstrap" {
  input = var.bootstrap_data
}

resource "terraform_data" "machine" {
  count            = var.replicas
  input            = "machine-\${count.index}"
  triggers_replace = var.captf_cluster_outputs
}

output "machine_ids" {
  value = terraform_data.machine[*].id
}
`,
  },
} satisfies Record<string, FileTree>;

/**
 * The base module plus `terraform_data.slow[0..resources-1]`, each with a local-exec that sleeps:
 * an apply that takes about `seconds` (terraform creates up to 10 at once), for signal tests.
 */
export function slowApply({ resources = 4, seconds = 5 }: { resources?: number; seconds?: number } = {}): FileTree {
  return baseWith({
    extra: `resource "terraform_data" "slow" {
  count = ${resources}
  input = count.index

  provisioner "local-exec" {
    command = "sleep ${seconds}"
  }
}
`,
  });
}

/**
 * modules.base and `terraform_data.slow[0..resources-1]`, each with a local-exec that appends
 * `created N` to the file `runs`, then runs `then` (a shell command: the slow part): which objects
 * an apply created, and how many times, for tests that stop or kill an apply.
 */
export function countedSlowApply(runs: string, { resources, then }: { resources: number; then: string }): FileTree {
  return {
    ...modules.base,
    'main.tf': `${modules.base['main.tf']}
resource "terraform_data" "slow" {
  count = ${resources}
  input = count.index

  provisioner "local-exec" {
    command = "echo created ${'$'}{self.input} >> ${runs}; ${then}"
  }
}
`,
  };
}

/**
 * terraform_data.this taking var.greeting, with a precondition `condition` (false for a greeting of
 * 10 characters or fewer): terraform's failed precondition. `shout`: a local value
 * upper(var.greeting) beside it, for a condition to read.
 */
export function greetingPrecondition(condition: string, { shout = false } = {}): FileTree {
  const lines = [
    'variable "greeting" {',
    '  type = string',
    '}',
    '',
    ...(shout ? ['locals {', '  shout = upper(var.greeting)', '}', ''] : []),
    'resource "terraform_data" "this" {',
    '  input = var.greeting',
    '',
    '  lifecycle {',
    '    precondition {',
    `      condition     = ${condition}`,
    '      error_message = "The greeting must be longer than 10 characters."',
    '    }',
    '  }',
    '}',
  ];
  return { 'main.tf': `${lines.join('\n')}\n` };
}

/** Adds `backend.tf` with an empty pg backend block (the module contract keeps it in its own file). */
export function withPgBackend(tree: FileTree): FileTree {
  return { ...tree, 'backend.tf': 'terraform {\n  backend "pg" {}\n}\n' };
}

// ---- state ----------------------------------------------------------------------------------

export interface StateInstance {
  index_key?: number | string;
  status?: 'tainted';
  /** Set on an object kept after a create_before_destroy replace failed. */
  deposed?: string;
  attributes: Record<string, unknown> & { id?: string };
}

export interface StateResource {
  module?: string;
  mode: 'managed' | 'data';
  type: string;
  name: string;
  instances: StateInstance[];
}

export interface TerraformState {
  version: number;
  terraform_version: string;
  serial: number;
  lineage: string;
  outputs: Record<string, { value: unknown; type: unknown; sensitive?: boolean }>;
  resources: StateResource[];
}

/** Parses a state file (terraform.tfstate, or the output of `state pull` written to a file). */
export async function readLocalState(path: string): Promise<TerraformState> {
  return JSON.parse(await readFile(path, 'utf8')) as TerraformState;
}

/** Address → id of every current object (deposed objects are left out), tainted ones included. */
export function resourceIds(state: TerraformState): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const [address, instance] of currentInstances(state)) ids[address] = String(instance.attributes.id);
  return ids;
}

/** Addresses of the objects a failed create left tainted (the next apply replaces them). */
export function taintedAddresses(state: TerraformState): string[] {
  return currentInstances(state)
    .filter(([, instance]) => instance.status === 'tainted')
    .map(([address]) => address);
}

function currentInstances(state: TerraformState): Array<[string, StateInstance]> {
  return state.resources.flatMap((resource) =>
    resource.instances
      .filter((instance) => instance.deposed === undefined)
      .map((instance): [string, StateInstance] => [instanceAddress(resource, instance), instance]),
  );
}

function instanceAddress(resource: StateResource, instance: StateInstance): string {
  const key =
    instance.index_key === undefined
      ? ''
      : typeof instance.index_key === 'number'
        ? `[${instance.index_key}]`
        : `[${JSON.stringify(instance.index_key)}]`;
  return `${resource.module ? `${resource.module}.` : ''}${resource.mode === 'data' ? 'data.' : ''}${resource.type}.${resource.name}${key}`;
}

// ---- the fake terraform ---------------------------------------------------------------------

/** The fake terraform script (see the table at its top). */
export const FAKE_TERRAFORM = join(dirname(fileURLToPath(import.meta.url)), 'fake-terraform.mjs');

/**
 * A temp dir holding `terraform` → the fake: put `binDir` first on PATH, or give `terraformPath`
 * wherever the runner takes the terraform binary.
 */
export async function installFakeTerraform(t?: TestContext): Promise<{ binDir: string; terraformPath: string }> {
  const binDir = await tempDir(t, 'captf-fake-tf-');
  const terraformPath = join(binDir, 'terraform');
  await symlink(FAKE_TERRAFORM, terraformPath);
  return { binDir, terraformPath };
}

export interface FakeTerraformOptions {
  /** FAKE_TF_LOG: JSON lines of what ran (readFakeTerraformLog). */
  log?: string;
  /** FAKE_TF_FAULT entries, e.g. ['plan:exit=1', 'show:truncate', '*:leak-secret']. */
  faults?: string[];
  version?: string;
  /** A file holding the plan document the fake plans. */
  planJson?: string;
  /** Actions of the generated plan's one resource change, e.g. ['delete', 'create']. */
  planActions?: string[];
  secret?: string;
  state?: string;
  orphanPidFile?: string;
}

/** The FAKE_TF_* variables for the options (add them to the env the runner gets). */
export function fakeTerraformEnv(options: FakeTerraformOptions): Record<string, string> {
  const entries: Array<[string, string | undefined]> = [
    ['FAKE_TF_LOG', options.log],
    ['FAKE_TF_FAULT', options.faults?.join(',')],
    ['FAKE_TF_VERSION', options.version],
    ['FAKE_TF_PLAN_JSON', options.planJson],
    ['FAKE_TF_PLAN_ACTIONS', options.planActions?.join(',')],
    ['FAKE_TF_SECRET', options.secret],
    ['FAKE_TF_STATE', options.state],
    ['FAKE_TF_ORPHAN_PID_FILE', options.orphanPidFile],
  ];
  return Object.fromEntries(entries.filter((entry): entry is [string, string] => entry[1] !== undefined));
}

export type FakeTerraformEvent =
  | {
      event: 'start';
      pid: number;
      step: string;
      argv: string[];
      cwd: string;
      chdir: string | null;
      pgid: number;
      env: Record<string, string | null>;
      tfCliArgs: string[];
      tfVars: string[];
    }
  | { event: 'signal'; pid: number; signal: 'SIGINT' | 'SIGTERM' /** Date.now() as the fake got it. */; at: number }
  | {
      event: 'exit';
      pid: number;
      step: string;
      code: number;
      maxRssKiB: number /** Date.now() as the fake exited. */;
      at: number;
    }
  | {
      /** A huge-* fault's stream ended: its bytes, the longest write blocked on the pipe, the reader's (the runner's) peak RSS after each MiB and at the end. */
      event: 'streamed';
      pid: number;
      step: string;
      stream: 'stdout' | 'stderr';
      bytes: number;
      longestWrite: { from: number; to: number };
      readerPeakRssKiB: Array<number | null>;
      readerPeakRssKiBAtEnd: number | null /** huge-plan: the resource changes printed. */;
      resourceChanges?: number;
    };

/** The events the fake logged; an absent log means terraform never ran. */
export async function readFakeTerraformLog(path: string): Promise<FakeTerraformEvent[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as FakeTerraformEvent);
}

/** The steps that started, in order, e.g. ['version', 'init', 'validate', 'plan', 'show']. */
export function stepsRun(events: FakeTerraformEvent[]): string[] {
  return events.flatMap((event) => (event.event === 'start' ? [event.step] : []));
}

// ---- the newer terraform (real terraform 1.11 with a newer one's plan documents) ----------------

/** The wrapper script (see the table at its top): the real terraform, with what newer versions add to plan documents. */
export const NEWER_TERRAFORM = join(dirname(fileURLToPath(import.meta.url)), 'newer-terraform.sh');

export interface NewerTerraformOptions {
  /** NEWER_TF_LOG: every command it ran (readNewerTerraformLog). */
  log?: string;
  /** A file holding the top-level keys `show -json PLANFILE` adds (NEWER_TF_SHOW_ADD). */
  showAdd?: string;
  /** What `plan -detailed-exitcode` exits with when the real plan succeeded (NEWER_TF_PLAN_EXIT). */
  planExit?: 0 | 2;
  /** The version it reports (NEWER_TF_VERSION). */
  version?: string;
}

/** The NEWER_TF_* variables for the options (add them to the env the runner gets). */
export function newerTerraformEnv(options: NewerTerraformOptions): Record<string, string> {
  const entries: Array<[string, string | undefined]> = [
    ['NEWER_TF_LOG', options.log],
    ['NEWER_TF_SHOW_ADD', options.showAdd],
    ['NEWER_TF_PLAN_EXIT', options.planExit === undefined ? undefined : String(options.planExit)],
    ['NEWER_TF_VERSION', options.version],
  ];
  return Object.fromEntries(entries.filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** The subcommands the wrapper ran, in order (`plan`, `show`, `apply`, …; `state pull` as `state`); none when the log is absent. */
export async function readNewerTerraformLog(path: string): Promise<string[]> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { argv: string[] }).argv.find((a) => !a.startsWith('-')) ?? '');
}
