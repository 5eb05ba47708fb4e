// The steps ops share, each a short function over the driver that returns what it learned (and
// tells its step record what of that the result reports). An op is a readable sequence of these.
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { Classification, DestructiveChange, PlannedAction } from '../schemas/classification.ts';
import type { OutputValue } from '../schemas/result.ts';
import { imageError, RunnerError } from '../errors.ts';
import { SENSITIVE_TFVARS_FILE } from '../inputs/index.ts';
import { reconcilePlanExit } from '../guard/gate.ts';
import { encryptionSettings, plaintextBackupDecision } from '../guard/plaintext-backups.ts';
import { actionText, changeText } from '../plan/actions.ts';
import { terraformText } from '../output/terraform-text.ts';
import { classifyPlanStream } from '../plan/stream.ts';
import { apply as terraformApply, type ApplyFailure, type ApplyOptions } from '../terraform/apply.ts';
import { checkBackend, type ExpectedBackend } from '../terraform/backend.ts';
import { init } from '../terraform/init.ts';
import type { PlanOptions } from '../terraform/plan.ts';
import { showPlan } from '../terraform/show.ts';
import { createTerraform, type Terraform, type TerraformFailed } from '../terraform/terraform.ts';
import { validate } from '../terraform/validate.ts';
import { checkSupported, terraformVersion, unverifiedWarning, type TerraformVersion } from '../terraform/version.ts';
import type { HeldPlanFile } from '../workspace/plan-file.ts';
import type { PlanJudgement } from '../policy/judge.ts';
import type { ModuleScan } from '../workspace/scan.ts';
import { INPUTS_HASH_VARIABLE } from '../workspace/reserved-names.ts';
import { ERRORED_STATE_FILE } from '../workspace/terraform-files.ts';
import { missedDeclarations, prepareWorkspace, readConfigFiles, scanConfigFiles, type Workspace } from '../workspace/workspace.ts';
import { runnerClassifyOptions } from '../plan/runner-options.ts';
import type { RunContext } from '../run/context.ts';
import { heldPlanOutput, type HeldPlanOutput } from './held-output.ts';
import { checkRunLocations } from './locations.ts';
import { loadInputs, type LoadedInputs } from '../inputs/load.ts';
import { ignoredTfVars, undeclaredVariables } from '../inputs/unused.ts';
import type { Learned } from '../run/learned.ts';
import { backupStep, pullSettled, pullStateBefore, refuseStateInWorkdir, stateAfterFailure, stateAfterStep, type PulledState } from './state.ts';

/** The cheap part of the contract check, before anything touches state: usable run locations, a supported terraform (after `check`, when given). */
export async function preflight(ctx: RunContext, check?: () => Promise<void>): Promise<TerraformVersion> {
  return ctx.step(
    'preflight',
    async () => {
      await checkRunLocations(ctx.settings);
      await check?.();
      return checkTerraform(ctx, await terraformVersionOf(ctx));
    },
    { learned: terraformLearned },
  );
}

/** The same for ops that run the module: also a module dir with configuration, read once. */
export async function preflightModule(ctx: RunContext): Promise<{ version: TerraformVersion; scan: ModuleScan }> {
  return ctx.step(
    'preflight',
    async () => {
      await checkRunLocations(ctx.settings);
      // terraform's start and the reading of the module overlap; their failures are reported in this order, whichever ends first.
      const [read, found] = await Promise.allSettled([readConfigFiles(ctx.settings.module), terraformVersionOf(ctx)]);
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

const terraformLearned = (version: TerraformVersion): Learned => ({ terraform: { version: version.version, flavor: version.flavor } });

/** OpenTofu state encryption: refuses (apply, plan, restore) or warns (destroy) before anything touches state; see guard/plaintext-backups.ts. */
export function checkPlaintextBackups(ctx: RunContext, scan: Pick<ModuleScan, 'encryption'>): void {
  const settings = encryptionSettings(scan.encryption, process.env);
  const decision = plaintextBackupDecision(ctx.op, settings, ctx.settings.allowPlaintextBackups);
  if (decision.action === 'refuse') throw imageError(decision.message, { encryption: settings });
  if (decision.action === 'warn') ctx.warn(decision.message);
}

const terraformVersionOf = (ctx: RunContext) => terraformVersion(ctx.settings.terraform, { stop: ctx.terraformStop });

function checkTerraform(ctx: RunContext, version: TerraformVersion): TerraformVersion {
  checkSupported(version);
  const unverified = unverifiedWarning(version);
  if (unverified) ctx.warn(unverified);
  return version;
}

/** Reads the inputs dir, computes both hashes and teaches the masker every secret input value. */
export async function inputsStep(ctx: RunContext): Promise<LoadedInputs> {
  return ctx.step(
    'inputs',
    async () => {
      const inputs = await loadInputs(ctx.settings.inputs, { image: ctx.settings.image, kind: ctx.settings.kind });
      for (const value of inputs.upfrontSecrets) ctx.masker.add(value, `a value in ${SENSITIVE_TFVARS_FILE}`);
      for (const notice of [...inputs.notices, ...ignoredTfVars(process.env)]) ctx.notice(notice);
      return inputs;
    },
    { learned: ({ hashes }) => ({ inputsHash: hashes.inputsHash, approvalHash: hashes.approvalHash }) },
  );
}

export async function workspaceStep(ctx: RunContext, scan: ModuleScan, inputs: LoadedInputs): Promise<Workspace> {
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

export function terraformIn(ctx: RunContext, version: TerraformVersion, workspace: Workspace): Terraform {
  const text = terraformText({ masker: ctx.masker, log: ctx.log, step: () => ctx.currentStep, stdout: process.stdout });
  return createTerraform({
    path: version.path,
    cwd: workspace.root,
    output: {
      line: (stream, line, command) => {
        ctx.progress.saw(line, 'printed');
        return text.line(stream, line, command);
      },
      end: text.end,
    },
    stop: ctx.terraformStop,
    mask: (text) => ctx.masker.mask(text),
  });
}

/** init, then the backend it recorded (the module's own, or exactly the local state --state names) and where it keeps the state (never in the workdir), before any state is read. */
export async function initStep(ctx: RunContext, tf: Terraform, workspace: Workspace): Promise<void> {
  const statePath = ctx.settings.state;
  const expected: ExpectedBackend = statePath ? { type: 'local', path: resolve(statePath) } : { type: workspace.scan.backend ?? 'unknown' };
  await ctx.step(
    'init',
    async () => {
      const result = await init(tf, { backendConfigs: ctx.settings.backendConfig, lockfileReadonly: true });
      await checkBackend(tf, expected, [...new Set(workspace.scan.backendBlocks.map((block) => block.file))]);
      await refuseStateInWorkdir(tf, workspace, statePath);
      return result;
    },
    { exitCode: (r) => r.exitCode },
  );
}

export async function validateStep(ctx: RunContext, tf: Terraform): Promise<void> {
  await ctx.step('validate', () => validate(tf), { exitCode: (r) => r.exitCode });
}

/** terraform plan, its human output held (printed masked once the classification has taught the masker). */
export async function planStep(ctx: RunContext, held: HeldPlanOutput, workspace: Workspace, inputsHash: string, extra: Partial<PlanOptions> = {}) {
  return ctx.step(
    'plan',
    () =>
      held.plan({
        out: workspace.planFile,
        varFiles: workspace.varFiles,
        vars: { [INPUTS_HASH_VARIABLE]: inputsHash },
        lockTimeout: ctx.settings.lockTimeout,
        ...extra,
      }),
    { exitCode: (r) => r.exitCode },
  );
}

export interface ShowOptions {
  destroyPlan?: boolean;
  /** Told every destructive entry, also those beyond the result's bounded list. */
  onDestructive?: (entry: DestructiveChange) => void;
  /** Told every provider action, also those beyond the result's bounded list. */
  onAction?: (action: PlannedAction) => void;
  /** The policy's judgement of this plan (steps/policy.ts): fed as the plan streams, its findings in plan.policy. */
  judgement?: PlanJudgement;
}

/**
 * show -json, classified as it streams; what the runner itself plans at its inputs-hash resource never
 * counts (anything else there is destructive: src/plan/classify.ts). Also
 * checks the runner's reading of the module against terraform's: the inputs-hash resource must
 * depend on every root resource and module call, or a failed apply could record the new hash.
 */
export async function showStep(ctx: RunContext, tf: Terraform, workspace: Workspace, options: ShowOptions = {}): Promise<Classification> {
  const declared = new Set<string>();
  const shown = await ctx.step(
    'show',
    async () => {
      const shown = showPlan(tf, heldPlan(workspace), (stdout: Readable) =>
        classifyPlanStream(stdout, {
          // A value of sensitive.tfvars.json the module does not declare sensitive: the plan shows its old value beside it.
          onChangedValues: (before, after) => ctx.masker.addOldValues(before, after),
          ...runnerClassifyOptions({
            destroyPlan: options.destroyPlan,
            onRootDeclaration: (address) => declared.add(address),
            // Every one, beyond the bounded lists in the result.
            onDestructive: (d) => {
              ctx.log.warn({ address: d.address, deposed: d.deposed, action: d.action }, `destructive: ${changeText(d)}`);
              options.onDestructive?.(d);
            },
            onAction: (a) => {
              ctx.log.warn({ address: a.address, trigger: a.trigger, triggeringResource: a.triggeringResource, onFailure: a.onFailure, deferred: a.deferred }, `provider action: ${actionText(a)}`);
              options.onAction?.(a);
              options.judgement?.onAction(a);
            },
            ...(options.judgement && { onChange: options.judgement.onChange }),
          }),
          ...(options.judgement && { pace: options.judgement.drain }),
        }),
      );
      // A stop that ended the policy's evaluation says so; terraform's show, interrupted with it, only that it was killed.
      const { value: classified, exitCode } = await shown.catch((error: unknown) => {
        throw options.judgement?.interruption ?? error;
      });
      const plan = options.judgement ? await options.judgement.judge(classified) : classified;
      // Kept before the checks: a plan that is then refused is still reported, it says why.
      ctx.keep({ plan });
      refuseErrored(plan);
      refuseMissedDeclarations(declared, workspace.scan);
      refuseUnmarkedSecrets(plan, workspace);
      return { plan, exitCode };
    },
    { exitCode: (r) => r.exitCode },
  );
  return shown.plan;
}

function refuseMissedDeclarations(declared: Set<string>, scan: ModuleScan): void {
  const missed = missedDeclarations(declared, scan);
  if (missed.length)
    throw new RunnerError({
      kind: 'plan',
      reason: 'ModuleReadIncomplete',
      message: `the runner's reading of the module missed ${missed.join(', ')}: its inputs-hash record would not wait for them, so nothing is applied. Please report this with the module's configuration.`,
      detail: { missed },
    });
}

/**
 * Every variable of sensitive.tfvars.json the module declares is sensitive to terraform (the
 * runner's override): an override file of the module's own, merged after it, can say otherwise.
 */
function refuseUnmarkedSecrets(plan: Classification, workspace: Workspace): void {
  const sensitive = new Set(plan.sensitiveVariables);
  const unmarked = workspace.madeSensitive.filter((name) => !sensitive.has(name));
  if (unmarked.length)
    throw imageError(
      `the plan does not hold ${unmarked.map((name) => `var.${name}`).join(', ')} sensitive, though ${SENSITIVE_TFVARS_FILE} sets ${unmarked.length === 1 ? 'it' : 'them'} and the runner's override marks ${unmarked.length === 1 ? 'it' : 'them'} so: an override file of the module sets sensitive = false (or the plan was made without the runner's override). Nothing was applied; remove that argument from the module's override files, and plan again`,
      { variables: unmarked },
    );
}

/** Secret material does not outlive the run. */
export async function removePlanFile(workspace: Workspace): Promise<void> {
  await workspace.releasePlan();
}

/** The saved plan held open since it was hashed: shown, checked and applied through that one open file. */
export function heldPlan(workspace: Workspace): HeldPlanFile {
  const plan = workspace.heldPlan();
  // A caller that never hashed its plan is a bug: without the hash nothing says what will be applied.
  if (!plan) throw new RunnerError({ kind: 'internal', reason: 'InternalError', message: 'internal error: the saved plan was not hashed before it was used; nothing was applied' });
  return plan;
}

/** What every op that runs the module starts with: the contract preflight, the inputs, the workdir, init and validate. */
export interface PreparedRoot {
  version: TerraformVersion;
  inputs: LoadedInputs;
  workspace: Workspace;
  tf: Terraform;
  /** The state before the op, pulled beside validate: stateBeforeStep reads it (before any plan runs). */
  stateBefore?: Promise<PulledState>;
}

export interface PrepareRootOptions {
  validate?: boolean;
  /** Runs in the fresh workdir before init (e.g. to put an approved plan's lock file in place). */
  beforeInit?: (workspace: Workspace, inputs: LoadedInputs) => Promise<void>;
}

export async function prepareRoot(ctx: RunContext, options: PrepareRootOptions = {}): Promise<PreparedRoot> {
  const { version, scan } = await preflightModule(ctx);
  const inputs = await inputsStep(ctx);
  // Variables the module declares sensitive (or ephemeral) are masked from the first byte, not only once the plan says so.
  inputs.maskSensitiveVariables(scan.sensitiveVariables, ctx.masker);
  inputs.maskSensitiveVariables(scan.ephemeralVariables, ctx.masker, 'a variable the module declares ephemeral');
  for (const notice of undeclaredVariables(inputs.snapshot, scan.variables)) ctx.notice(notice);
  const workspace = await workspaceStep(ctx, scan, inputs);
  const tf = terraformIn(ctx, version, workspace);
  let stateBefore: Promise<PulledState> | undefined;
  try {
    await options.beforeInit?.(workspace, inputs);
    await initStep(ctx, tf, workspace);
    if (options.validate !== false) {
      // The pull reads the backend init checked; validate reads only the configuration: one need not wait for the other.
      stateBefore = pullStateBefore(tf, workspace);
      await validateStep(ctx, tf);
    }
  } catch (error) {
    await pullSettled(ctx, stateBefore); // its file is in the workdir: settled before it goes
    await workspace.dispose();
    throw error;
  }
  return { version, inputs, workspace, tf, stateBefore };
}

/** terraform marked the plan errored: it is never applied, packed or reported as a finding. */
export function refuseErrored(plan: Classification): void {
  if (plan.errored) throw new RunnerError({ kind: 'plan', reason: 'PlanErrored', message: 'terraform marked the plan errored (incomplete): it is not used. Fix the errors the plan printed and run again.' });
}

/**
 * plan with a saved plan file, then show -json classified as it streams. terraform's human plan is
 * held and printed masked afterwards. `recordHash` is the inputs hash the plan records in the state.
 * `planned.hasChanges` is the exit code's word unless the classification means more change (reconcilePlanExit);
 * `planHash` is what the apply must find in the file (applySavedPlan). `before`: the state the plan is made against.
 */
export async function planAndClassify(ctx: RunContext, root: PreparedRoot, before: Pick<PulledState, 'recordedInputsHash'>, recordHash: string, extra: Partial<PlanOptions> = {}, show: Omit<ShowOptions, 'destroyPlan'> = {}) {
  const held = heldPlanOutput(root.tf, root.workspace, ctx.masker, ctx.progress);
  const { planned, planHash, plan } = await held.around(async () => {
    const planned = await planStep(ctx, held, root.workspace, recordHash, extra);
    // Taken before show reads the file, through the open file terraform shows and applies: the apply must run exactly the plan that was classified.
    const planHash = await ctx.step('plan hash', async () => (await root.workspace.holdPlan()).sha256(), { learned: (planHash) => ({ planHash }) });
    const plan = await showStep(ctx, root.tf, root.workspace, { destroyPlan: extra.destroy, ...show });
    root.inputs.maskSensitiveVariables(plan.sensitiveVariables, ctx.masker);
    return { planned, planHash, plan };
  });
  // A destroy deletes the record, a refresh-only plan leaves it: only other plans set it to recordHash.
  const recordChanges = !extra.destroy && !extra.refreshOnly && before.recordedInputsHash !== recordHash;
  const reconciled = reconcilePlanExit(planned.hasChanges, plan, { recordChanges, destroyPlan: extra.destroy === true });
  if (reconciled.warning) ctx.warn(reconciled.warning);
  return { planned: { ...planned, hasChanges: reconciled.hasChanges }, planHash, plan, planText: held.text() };
}

export interface ApplySavedPlanOptions {
  /** What a failed apply is called for the op (ApplyFailed, RefreshFailed, DestroyFailed). */
  failureReason?: ApplyFailure;
  backup?: boolean;
  /**
   * What a stale saved plan (refused by terraform before it changed anything) means; without it, an
   * ordinary failure of the apply. Called in the apply step: what it keeps (ctx.keep) is terraform's later word.
   */
  onStalePlan?: (stale: TerraformFailed) => RunnerError;
}

/** What an apply left: its outputs and the state after it. */
export interface Applied {
  outputs: Record<string, OutputValue>;
  after: PulledState;
}

/**
 * Backup, then apply the saved plan (see applyStep) once its sha256 is still `planHash`, the
 * plan that was classified or approved. The plan file does not outlive the apply.
 */
export async function applySavedPlan(ctx: RunContext, root: PreparedRoot, before: PulledState, planHash: string, options: ApplySavedPlanOptions = {}): Promise<Applied> {
  if (options.backup !== false) await backupStep(ctx, before, root.inputs.hashes.inputsHash, root.version.version);
  try {
    const plan = await ctx.step('plan check', async () => {
      const held = heldPlan(root.workspace);
      await checkPlanFile(held, planHash);
      return held;
    });
    return await applyStep(ctx, root, before, { planFile: plan, lockTimeout: ctx.settings.lockTimeout, varFiles: root.workspace.applyVarFiles }, options);
  } finally {
    await removePlanFile(root.workspace);
  }
}

/** Just before apply, through the open file terraform will read: a plan written in place since it was hashed is refused. */
async function checkPlanFile(plan: HeldPlanFile, classifiedHash: string): Promise<void> {
  const now = await plan.sha256();
  if (now !== classifiedHash)
    throw new RunnerError({
      kind: 'plan',
      reason: 'PlanFileChanged',
      message: `the saved plan file changed after it was classified (sha256 ${classifiedHash}, now ${now}): something else writes to the workdir. Nothing was applied. Give the runner a workdir only it can write (an emptyDir volume) and run again.`,
      detail: { classified: classifiedHash, found: now },
    });
}

/**
 * terraform apply of a saved plan, then the outputs and the state it left. A failed
 * apply still saves what terraform could not (errored.tfstate) and reports what the state holds.
 */
async function applyStep(ctx: RunContext, root: PreparedRoot, before: PulledState, apply: ApplyOptions, options: ApplySavedPlanOptions): Promise<Applied> {
  const { tf, workspace } = root;
  // Only an errored.tfstate this apply writes is terraform's unsaved state (code run at plan time could leave one).
  await rm(join(workspace.root, ERRORED_STATE_FILE), { force: true });
  try {
    await ctx.step(
      'apply',
      async () => {
        // As terraform's apply process starts, not before: a stop before it (during the backup, the plan check) applies nothing.
        const onStart = () => ctx.keep({ applied: true, mayHaveChanged: true });
        const applied = await terraformApply(tf, apply, { failureReason: options.failureReason, onStart });
        if (applied.outcome === 'stalePlan') throw options.onStalePlan?.(applied.failure) ?? applied.failure;
        return applied;
      },
      { exitCode: (r) => r.exitCode },
    );
  } catch (error) {
    await stateAfterFailure(ctx, tf, workspace, before);
    throw error;
  }
  // The apply is done: the state it left, and its outputs from that state, are read even if a stop came meanwhile.
  const after = await stateAfterStep(ctx, tf, workspace, before, { cleanup: true, outputs: true });
  return { outputs: after.reported?.outputs ?? {}, after };
}
