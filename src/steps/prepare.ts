// The prepare steps (preflight, inputs, workspace, init, validate) and prepareRoot, the sequence
// every op that runs the module starts with. Each step takes the run context and one options
// object, and returns what it learned (telling its step record what of that the result reports).
import { resolve } from 'node:path';
import { imageError } from '../errors.ts';
import { SENSITIVE_TFVARS_FILE } from '../inputs/index.ts';
import { loadInputs, type LoadedInputs } from '../inputs/load.ts';
import { ignoredTfVars, undeclaredVariables } from '../inputs/unused.ts';
import { encryptionSettings, plaintextBackupDecision } from '../guard/plaintext-backups.ts';
import { terraformText } from '../output/terraform-text.ts';
import { checkBackend, type ExpectedBackend } from '../terraform/backend.ts';
import { init } from '../terraform/init.ts';
import { createTerraform, type Terraform } from '../terraform/terraform.ts';
import { validate } from '../terraform/validate.ts';
import { checkSupported, terraformVersion, unverifiedWarning, type TerraformVersion } from '../terraform/version.ts';
import { recordBesideEntry } from '../terraform/verified-record.ts';
import type { ModuleScan } from '../workspace/scan.ts';
import { prepareWorkspace, type Workspace } from '../workspace/workspace.ts';
import { readConfigFiles, scanConfigFiles } from '../workspace/config-files.ts';
import { nonsensitiveNotice } from '../workspace/declassified.ts';
import type { RunContext } from '../run/context.ts';
import type { Learned } from '../run/learned.ts';
import { backendConfigArgs, checkRunLocations } from './locations.ts';
import { pullSettled, pullStateBefore, refuseStateInWorkdir, type PulledStateBefore } from './state.ts';

export interface PreflightOptions {
  /** Run after the run locations are checked, before terraform's version is (restore: the backend-only module check). */
  check?: () => Promise<void>;
}

/** The cheap part of the contract check, before anything touches state: usable run locations, a supported terraform (after `check`, when given). */
export async function preflight(ctx: RunContext, options: PreflightOptions = {}): Promise<TerraformVersion> {
  return ctx.step(
    'preflight',
    async () => {
      const stateMissing = await checkRunLocations(ctx.settings, ctx.op);
      if (stateMissing) ctx.warn(stateMissing);
      await options.check?.();
      return checkTerraform(ctx, await terraformVersionOf(ctx));
    },
    { learned: terraformLearned },
  );
}

/** The same for ops that run the module: also a module dir with configuration, read once. */
async function preflightModule(ctx: RunContext): Promise<{ version: TerraformVersion; scan: ModuleScan }> {
  return ctx.step(
    'preflight',
    async () => {
      const stateMissing = await checkRunLocations(ctx.settings, ctx.op);
      if (stateMissing) ctx.warn(stateMissing);
      // terraform's start and the reading of the module overlap; their failures are reported in this order, whichever ends first.
      const [read, found] = await Promise.allSettled([
        readConfigFiles(ctx.settings.module, undefined, ctx.moduleOnCommandLine),
        terraformVersionOf(ctx),
      ]);
      // The files the tool in use reads: what it skips never counts (workspace.ts refuses what it would leave out).
      // Without a tool (its version failed), every file: a module that does not parse is still reported first.
      const scan = scanConfigFiles(settledValue(read), found.status === 'fulfilled' ? found.value.flavor : undefined);
      const version = settledValue(found);
      checkPlaintextBackups(ctx, scan);
      return { version: checkTerraform(ctx, version), scan };
    },
    { learned: ({ version }) => terraformLearned(version) },
  );
}

const settledValue = <T>(settled: PromiseSettledResult<T>): T => {
  if (settled.status === 'rejected') throw settled.reason;
  return settled.value;
};

const terraformLearned = (version: TerraformVersion): Learned => ({
  terraform: { version: version.version, flavor: version.flavor },
});

/** OpenTofu state encryption: refuses (apply, plan, restore) or warns (destroy) before anything touches state; see guard/plaintext-backups.ts. */
export function checkPlaintextBackups(ctx: RunContext, scan: Pick<ModuleScan, 'encryption'>): void {
  const settings = encryptionSettings(scan.encryption, process.env);
  const decision = plaintextBackupDecision(ctx.op, settings, ctx.settings.allowPlaintextBackups);
  if (decision.action === 'refuse') throw imageError(decision.message, { encryption: settings });
  if (decision.action === 'warn') ctx.warn(decision.message);
}

// The image's terraform, still the file its build verified, answers from the build's record (no launch).
const terraformVersionOf = (ctx: RunContext) =>
  terraformVersion(ctx.settings.terraform, { stop: ctx.terraformStop, record: recordBesideEntry() });

function checkTerraform(ctx: RunContext, version: TerraformVersion): TerraformVersion {
  checkSupported(version);
  if (version.fromImageRecord)
    ctx.log.info(
      `terraform ${version.version} at ${version.path}: the binary the image build verified, answered from its record (no version launch)`,
    );
  const unverified = unverifiedWarning(version);
  if (unverified) ctx.warn(unverified);
  return version;
}

/** Reads the inputs dir, computes both hashes and teaches the masker every secret input value. */
async function inputsStep(ctx: RunContext): Promise<LoadedInputs> {
  return ctx.step(
    'inputs',
    async () => {
      const inputs = await loadInputs(ctx.settings.inputs, { image: ctx.settings.image, kind: ctx.settings.kind });
      for (const { value, variable } of inputs.upfrontSecrets)
        ctx.masker.add(value, `variable "${variable}" in ${SENSITIVE_TFVARS_FILE}`);
      for (const notice of [...inputs.notices, ...ignoredTfVars(process.env)]) ctx.notice(notice);
      return inputs;
    },
    { learned: ({ hashes }) => ({ inputsHash: hashes.inputsHash, approvalHash: hashes.approvalHash }) },
  );
}

interface WorkspaceStepOptions {
  scan: ModuleScan;
  inputs: LoadedInputs;
}

async function workspaceStep(ctx: RunContext, { scan, inputs }: WorkspaceStepOptions): Promise<Workspace> {
  return ctx.step('workspace', () =>
    prepareWorkspace({
      moduleDir: ctx.settings.module,
      scan,
      workdir: ctx.settings.workdir,
      statePath: ctx.settings.state,
      inputs: inputs.workspaceInputs,
      teardown: ctx.op === 'destroy',
      warn: (message) => ctx.warn(message),
    }),
  );
}

export interface TerraformInOptions {
  version: TerraformVersion;
  workspace: Workspace;
}

/** The run's terraform in `workspace`: its text printed masked (and counted for progress), stopped through the run's stop handle. */
export function terraformIn(ctx: RunContext, { version, workspace }: TerraformInOptions): Terraform {
  const text = terraformText({ masker: ctx.masker, log: ctx.log, step: () => ctx.currentStep, stdout: process.stdout });
  return createTerraform({
    path: version.path,
    cwd: workspace.root,
    output: {
      lines: (stream, lines, command, keep, step) => {
        for (const line of lines) ctx.progress.saw(line, 'printed');
        return text.lines(stream, lines, command, keep, step);
      },
      end: text.end,
    },
    stop: ctx.terraformStop,
    masker: ctx.masker,
  });
}

export interface InitStepOptions {
  tf: Terraform;
  workspace: Workspace;
}

/** init, then the backend it recorded (the module's own, or exactly the local state --state names) and where it keeps the state (never in the workdir), before any state is read. */
export async function initStep(ctx: RunContext, { tf, workspace }: InitStepOptions): Promise<void> {
  const statePath = ctx.settings.state;
  const expected: ExpectedBackend = statePath
    ? { type: 'local', path: resolve(statePath) }
    : { type: workspace.scan.backend ?? 'unknown' };
  await ctx.step(
    'init',
    async () => {
      const result = await init(tf, {
        backendConfigs: backendConfigArgs(ctx.settings.backendConfig),
        lockfileReadonly: true,
      });
      await checkBackend(tf, expected, [...new Set(workspace.scan.backendBlocks.map((block) => block.file))]);
      await refuseStateInWorkdir(tf, workspace, statePath);
      return result;
    },
    { exitCode: (r) => r.exitCode },
  );
}

async function validateStep(ctx: RunContext, { tf }: { tf: Terraform }): Promise<void> {
  await ctx.step('validate', () => validate(tf), { exitCode: (r) => r.exitCode });
}

/** What every op that runs the module starts with: the contract preflight, the inputs, the workdir, init and validate. */
export interface PreparedRoot {
  version: TerraformVersion;
  inputs: LoadedInputs;
  workspace: Workspace;
  tf: Terraform;
  /** The state before the op, pulled beside validate: stateBeforeStep reads it (before any plan runs). */
  stateBefore?: Promise<PulledStateBefore>;
}

export interface PrepareRootOptions {
  validate?: boolean;
  /** false: no pull of the state before beside validate (a guarded apply and a plan read it from the saved plan: state-planned.ts). */
  pullStateBefore?: boolean;
  /** Runs in the fresh workdir before init (e.g. to put an approved plan's lock file in place). */
  beforeInit?: (workspace: Workspace, inputs: LoadedInputs) => Promise<void>;
}

export async function prepareRoot(ctx: RunContext, options: PrepareRootOptions = {}): Promise<PreparedRoot> {
  const { version, scan } = await preflightModule(ctx);
  const inputs = await inputsStep(ctx);
  // Variables the module declares sensitive (or ephemeral) are masked from the first byte, not only once the plan says so.
  inputs.maskSensitiveVariables(scan.sensitiveVariables, ctx.masker);
  inputs.maskSensitiveVariables(scan.ephemeralVariables, ctx.masker, 'the module declares it ephemeral');
  for (const notice of undeclaredVariables(inputs.snapshot, scan.variables)) ctx.notice(notice);
  const declassified = nonsensitiveNotice(ctx.settings.module, scan.nonsensitive);
  if (declassified) ctx.notice(declassified);
  const workspace = await workspaceStep(ctx, { scan, inputs });
  const tf = terraformIn(ctx, { version, workspace });
  let stateBefore: Promise<PulledStateBefore> | undefined;
  try {
    await options.beforeInit?.(workspace, inputs);
    await initStep(ctx, { tf, workspace });
    if (options.validate !== false) {
      // The pull reads the backend init checked; validate reads only the configuration: one need not wait for the other.
      if (options.pullStateBefore !== false) stateBefore = pullStateBefore(tf, workspace);
      await validateStep(ctx, { tf });
    }
  } catch (error) {
    await pullSettled(ctx, stateBefore); // its file is in the workdir: settled before it goes
    await workspace.dispose();
    throw error;
  }
  return { version, inputs, workspace, tf, stateBefore };
}
