// The engine of the capture: a case's temp dir laid out like the runner's workdir, terraform run in it
// as the runner runs it, and the captured command written into the corpus. The cases (cases.ts) say
// what to build and which command to capture; nothing here knows a case by name.
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyArgs as runnerApplyArgs } from '../../../src/terraform/apply.ts';
import { initArgs as runnerInitArgs, type InitOptions } from '../../../src/terraform/init.ts';
import { planArgs as runnerPlanArgs } from '../../../src/terraform/plan.ts';
import { validateArgs } from '../../../src/terraform/validate.ts';
import { killProcessGroup, runProcess, startInBackground } from '../../../test/support/exec.ts';
import type { PostgresServer } from '../../../test/support/pg.ts';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const OUT_DIR = join(REPO, 'test', 'fixtures', 'terraform-output');
const TERRAFORM = process.env.CAPTF_TERRAFORM ?? 'terraform';
const WORKDIR_PLACEHOLDER = '/WORKDIR';
/** A command that has not exited by then is killed and recorded as timed out (none should come near it). */
const COMMAND_TIMEOUT_MS = 120_000;
/** How long a lock holder's provisioner sleeps: it is interrupted as soon as the capture is done. */
const HOLD_SECONDS = 120;
/** The state push cases set this lineage first, so terraform's refusals name the same lineage on every run. */
const FIXED_LINEAGE = '11111111-2222-4333-8444-555555555555';

/** What a case records beside the output in command.json (`observed`). */
export type Observed = Record<string, unknown>;

export interface CaptureCase {
  name: string;
  /** One line for people: what the case makes terraform do. */
  what: string;
  /** The module (root/), or a function of the workdir for one that names its paths. */
  files: Record<string, string> | ((w: Workdir) => Record<string, string>);
  /** The image's CLI configuration (runner/terraformrc) with an empty filesystem mirror, instead of /dev/null. */
  imageCliConfig?: boolean;
  /** Providers (host/namespace/type/version) put in that mirror. */
  mirrorProviders?: string[];
  /** A PostgreSQL database of its own, passed to init as a -backend-config file. */
  pg?: boolean;
  /** The setup, then w.capture(argv) once (and w.captureJson(argv) for the -json form). */
  run(w: Workdir): Promise<Observed | void>;
}

/** A local state file as JSON: the fields the cases read, and the rest as it is. */
export interface StateFile {
  serial: number;
  lineage: string;
  outputs: Record<string, unknown>;
  [key: string]: unknown;
}

export interface CaptureContext {
  /** The one PostgreSQL server of the whole capture, started on first use. */
  postgres(): Promise<PostgresServer>;
}

export interface TerraformRun {
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface CapturedRun extends TerraformRun {
  argv: string[];
}

// ---- the runner's argv: its own builders (src/terraform/*.ts) -----------------------------------

export const initArgs = (options: InitOptions = {}) => runnerInitArgs(options);
/** The runner's validate is its -json form; the text form is captured beside it, for people. */
export const validateJsonArgs = () => validateArgs();
export const validateTextArgs = () => validateArgs().filter((arg) => arg !== '-json');

export interface PlanArgOptions {
  varFiles?: string[];
  lockTimeout?: string;
  /** Adds -json after -no-color (the corpus's second form, not the runner's). */
  json?: boolean;
  out?: string;
}

/** The runner's plan. */
export const planArgs = (
  w: Workdir,
  { varFiles = [], lockTimeout, json = false, out = w.planFile }: PlanArgOptions = {},
) => {
  const argv = runnerPlanArgs({ out, varFiles, lockTimeout });
  return json ? [...argv.slice(0, 3), '-json', ...argv.slice(3)] : argv;
};
export const applyArgs = (planFile: string) => runnerApplyArgs({ planFile });

// ---- running terraform ----------------------------------------------------------------------------

export class Workdir {
  readonly root: string;
  readonly privateDir: string;
  readonly home: string;
  readonly statePath: string;
  readonly localLockInfo: string;
  readonly planFile: string;
  /** [text, placeholder]: what differs from machine to machine, replaced in everything written. */
  readonly redactions: [string, string][];
  captured: CapturedRun | undefined;
  capturedJson: CapturedRun | undefined;
  /** The variables file of whileLocked's holder (hold_seconds), for a case to plan with. */
  holdVarFile = '';
  pg: { server: PostgresServer; database: string } | undefined;
  private initialized = false;
  private cliConfigFile: string | undefined;
  private backendConfig: string | undefined;

  readonly case: CaptureCase;

  constructor(
    readonly dir: string,
    testCase: CaptureCase,
    private readonly context: CaptureContext,
  ) {
    this.case = testCase;
    this.root = join(dir, 'root');
    this.privateDir = join(dir, 'private');
    this.home = join(dir, 'home');
    this.statePath = join(dir, 'state', 'terraform.tfstate');
    this.localLockInfo = join(dir, 'state', '.terraform.tfstate.lock.info');
    this.planFile = join(this.privateDir, 'plan.tfplan');
    this.redactions = [[dir, WORKDIR_PLACEHOLDER]];
  }

  async prepare(): Promise<void> {
    for (const sub of [this.root, this.privateDir, this.home, dirname(this.statePath)])
      await mkdir(sub, { recursive: true });
    const files = typeof this.case.files === 'function' ? this.case.files(this) : this.case.files;
    for (const [name, content] of Object.entries(files)) {
      await mkdir(dirname(join(this.root, name)), { recursive: true });
      await writeFile(join(this.root, name), content);
    }
    if (this.case.imageCliConfig) {
      // The image's CLI configuration (runner/terraformrc) with its mirror dir here, and empty.
      const mirrorDir = join(this.dir, 'plugins');
      await mkdir(mirrorDir);
      const config = (await readFile(join(REPO, 'runner', 'terraformrc'), 'utf8')).replace(
        '/usr/share/terraform/plugins',
        mirrorDir,
      );
      if (config.indexOf(mirrorDir) < 0)
        throw new Error('runner/terraformrc no longer names /usr/share/terraform/plugins: update this script');
      this.cliConfigFile = join(this.dir, 'terraformrc');
      await writeFile(this.cliConfigFile, config);
      // A provider in the mirror's unpacked layout: init installs it without running it, so any executable will do.
      for (const provider of this.case.mirrorProviders ?? []) {
        const [host, namespace, type, version] = provider.split('/') as [string, string, string, string];
        const dir = join(mirrorDir, host, namespace, type, version, 'linux_amd64');
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, `terraform-provider-${type}_v${version}`), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
      }
    }
    if (this.case.pg) {
      const server = await this.context.postgres();
      const database = `capture_${this.case.name.replace(/-/g, '_')}`;
      const connString = await server.createDatabase(database);
      this.pg = { server, database };
      this.redactions.push([`127.0.0.1:${server.port}`, '127.0.0.1:PGPORT']);
      // Like the runner: the backend settings come as a -backend-config file.
      this.backendConfig = join(this.privateDir, 'backend.hcl');
      await writeFile(this.backendConfig, `conn_str = ${JSON.stringify(connString)}\n`);
    }
  }

  get initArgs(): string[] {
    return initArgs(this.backendConfig ? { backendConfigs: [this.backendConfig] } : {});
  }

  env(): Record<string, string> {
    // The runner's environment rules; HOME is the case's own, so nothing of this machine's
    // ~/.terraform.d (plugin dirs, credentials) takes part.
    return {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: this.home,
      TF_IN_AUTOMATION: '1',
      TF_INPUT: '0',
      CHECKPOINT_DISABLE: '1',
      TF_CLI_CONFIG_FILE: this.cliConfigFile ?? '/dev/null',
    };
  }

  /** terraform in its own process group, ended with whatever local-exec left behind. */
  async run(argv: string[]): Promise<TerraformRun> {
    const started = Date.now();
    const run = await runProcess(TERRAFORM, argv, {
      cwd: this.root,
      env: this.env(),
      timeoutMs: COMMAND_TIMEOUT_MS,
      ownGroup: true,
      keepFinalNewline: true,
    });
    return {
      exitCode: run.exitCode ?? null,
      timedOut: run.timedOut,
      stdout: run.stdout,
      stderr: run.stderr,
      ms: Date.now() - started,
    };
  }

  /** A setup step: it must exit with one of `exits`, or the case fails with terraform's output. */
  async ok(argv: string[], exits: number[] = [0]): Promise<TerraformRun> {
    const result = await this.run(argv);
    if (result.exitCode === null || !exits.includes(result.exitCode)) {
      throw new Error(
        `setup step terraform ${argv.join(' ')} exited ${result.exitCode} (expected ${exits.join(' or ')}):\n${result.stdout}${result.stderr}`,
      );
    }
    if (argv[0] === 'init') this.initialized = true;
    return result;
  }

  async capture(argv: string[]): Promise<void> {
    if (this.captured) throw new Error(`case ${this.case.name} captures more than one command`);
    this.captured = { argv, ...(await this.run(argv)) };
  }

  async captureJson(argv: string[]): Promise<void> {
    if (this.capturedJson) throw new Error(`case ${this.case.name} captures more than one -json command`);
    this.capturedJson = { argv, ...(await this.run(argv)) };
  }

  /** init (unless done), then plan (text and -json, the latter to a second plan file): records whether the text plan wrote its plan file. */
  async capturePlan(options: PlanArgOptions = {}): Promise<{ planFileWritten: boolean }> {
    if (!this.initialized) await this.ok(this.initArgs);
    await this.capture(planArgs(this, options));
    const planFileWritten = existsSync(this.planFile);
    await this.captureJson(planArgs(this, { ...options, json: true, out: join(this.privateDir, 'plan-json.tfplan') }));
    return { planFileWritten };
  }

  /** capturePlan with `secret` as the value of `variable` in a variables file: records whether terraform printed it (either form). */
  async capturePlanWithSecret(variable: string, secret: string, fileName = 'terraform.tfvars.json'): Promise<Observed> {
    const observed = await this.capturePlan({ varFiles: [await this.varFile({ [variable]: secret }, fileName)] });
    const valuePrinted = [this.captured!, this.capturedJson!].some(
      (run) => run.stdout.includes(secret) || run.stderr.includes(secret),
    );
    return { ...observed, valuePrinted };
  }

  /** init, a plan with changes, then the captured apply of it. */
  async captureApplyOfNewPlan(): Promise<void> {
    await this.ok(this.initArgs);
    await this.ok(planArgs(this), [2]);
    await this.capture(applyArgs(this.planFile));
  }

  /** Writes a variables file into private/ as the runner does (terraform.tfvars.json), or under another name. */
  async varFile(values: Record<string, unknown>, name = 'terraform.tfvars.json'): Promise<string> {
    const path = join(this.privateDir, name);
    await writeFile(path, `${JSON.stringify(values, null, 2)}\n`);
    return path;
  }

  /** init, plan (changes expected) and apply of the saved plan: the runner's way to apply. */
  async applyOnce({ varFiles = [] }: { varFiles?: string[] } = {}): Promise<void> {
    if (!this.initialized) await this.ok(this.initArgs);
    const setupPlan = join(this.privateDir, 'setup.tfplan');
    await this.ok(planArgs(this, { varFiles, out: setupPlan }), [2]);
    await this.ok(applyArgs(setupPlan));
  }

  /** Applies the module twice (serial > 1), then gives the local state the fixed lineage. */
  async stateWithFixedLineage(): Promise<StateFile> {
    await this.applyOnce({ varFiles: [await this.varFile({ round: 1 })] });
    await this.applyOnce({ varFiles: [await this.varFile({ round: 2 })] });
    const state = JSON.parse(await readFile(this.statePath, 'utf8'));
    state.lineage = FIXED_LINEAGE;
    await writeFile(this.statePath, `${JSON.stringify(state, null, 2)}\n`);
    return state;
  }

  /**
   * Runs `body` while another terraform apply holds the state lock: the holder's local-exec sleeps,
   * and is interrupted (one SIGINT, as the runner stops terraform) once body is done. Except with
   * `fresh`, the workspace exists first (applied with a zero sleep).
   */
  async whileLocked(
    backend: 'local' | 'pg',
    body: () => Promise<Observed | void>,
    { fresh = false } = {},
  ): Promise<Observed> {
    this.holdVarFile = await this.varFile({ hold_seconds: HOLD_SECONDS }, 'hold.tfvars.json');
    if (!fresh) await this.applyOnce({ varFiles: [await this.varFile({ hold_seconds: 0 })] });
    else await this.ok(this.initArgs);
    const holdPlan = join(this.privateDir, 'hold.tfplan');
    await this.ok(planArgs(this, { varFiles: [this.holdVarFile], out: holdPlan }), [2]);
    // The holder's provisioner starts once apply holds the lock: from then on the lock is held until it is interrupted.
    const holder = await startInBackground(TERRAFORM, applyArgs(holdPlan), {
      cwd: this.root,
      env: this.env(),
      mark: "Provisioning with 'local-exec'",
      killAfterMs: COMMAND_TIMEOUT_MS,
    });
    try {
      await waitUntil(async () => {
        if (backend === 'local') return existsSync(this.localLockInfo);
        return (await this.pg!.server.advisoryLocks(this.pg!.database)).some((lock) => lock.granted);
      }, `the ${backend} state lock to be held`);
      const observed: Observed = (await body()) ?? {};
      if (backend === 'local' && this.captured!.stderr.includes('Lock Info:')) {
        // lock.ts takes the printed ID for the holder's: check that it is the one in the holder's lock info.
        const holderId = JSON.parse(await readFile(this.localLockInfo, 'utf8')).ID;
        observed.printedLockIdIsHolders = this.captured!.stderr.includes(`ID:        ${holderId}`);
      }
      return observed;
    } finally {
      try {
        process.kill(holder.child.pid!, 'SIGINT');
      } catch {
        // already gone
      }
      await holder.exited;
      killProcessGroup(holder.child.pid);
    }
  }
}

async function waitUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ---- writing the corpus ---------------------------------------------------------------------------

export const redact = (text: string, redactions: readonly [string, string][]) =>
  redactions.reduce((out, [from, to]) => out.split(from).join(to), text);

/** Writes the case's dir of the corpus: command.json, stdout.txt, stderr.txt and the -json form's files. */
export async function writeCase(w: Workdir, version: string, observed: Observed | void): Promise<void> {
  const dir = join(OUT_DIR, w.case.name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const r = (text: string) => redact(text, w.redactions);
  const { captured, capturedJson } = w;
  if (!captured) throw new Error(`case ${w.case.name} captured nothing`);
  const command = {
    case: w.case.name,
    what: w.case.what,
    terraformVersion: version,
    cwd: r(w.root),
    env: Object.fromEntries(
      Object.entries(w.env())
        .filter(([name]) => name !== 'PATH')
        .map(([name, value]) => [name, r(value)]),
    ),
    argv: captured.argv.map(r),
    exitCode: captured.exitCode,
    ...(captured.timedOut ? { timedOut: true } : {}),
    ...(capturedJson
      ? {
          json: {
            argv: capturedJson.argv.map(r),
            exitCode: capturedJson.exitCode,
            ...(capturedJson.timedOut ? { timedOut: true } : {}),
          },
        }
      : {}),
    ...(observed && Object.keys(observed).length > 0 ? { observed } : {}),
  };
  await writeFile(join(dir, 'command.json'), `${JSON.stringify(command, null, 2)}\n`);
  await writeFile(join(dir, 'stdout.txt'), r(captured.stdout));
  await writeFile(join(dir, 'stderr.txt'), r(captured.stderr));
  if (capturedJson) {
    await writeFile(join(dir, 'json-stdout.txt'), r(capturedJson.stdout));
    await writeFile(join(dir, 'json-stderr.txt'), r(capturedJson.stderr));
  }
}

/** terraform's first `Error:` or `Warning:` line, else the last line: the summary printed per case. */
export function keyLine({ stdout, stderr }: { stdout: string; stderr: string }): string {
  const lines = `${stderr}\n${stdout}`.split('\n').map((line) => line.trim());
  return (
    lines.find((line) => /^Error:/.test(line)) ??
    lines.find((line) => /^Warning:/.test(line)) ??
    lines.filter(Boolean).at(-1) ??
    ''
  );
}

export async function terraformVersion(): Promise<string> {
  const run = await runProcess(TERRAFORM, ['version', '-json'], {
    env: { PATH: process.env.PATH ?? '', CHECKPOINT_DISABLE: '1', TF_CLI_CONFIG_FILE: '/dev/null' },
  });
  if (run.exitCode !== 0) throw new Error(`${TERRAFORM} version -json failed: ${run.stderr}`);
  return JSON.parse(run.stdout).terraform_version;
}
