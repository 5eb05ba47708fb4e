// The steps ops share, each a short function over the driver. An op is a readable sequence of these.
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
import { LineMasker, stringLeaves } from '../output/mask.ts';
import { writeWithBackpressure } from '../output/std-streams.ts';
import { classifyPlanStream } from '../plan/stream.ts';
import { apply as terraformApply, type ApplyOptions } from '../terraform/apply.ts';
import { checkBackend, type ExpectedBackend } from '../terraform/backend.ts';
import { init } from '../terraform/init.ts';
import { output } from '../terraform/output.ts';
import { plan, type PlanOptions } from '../terraform/plan.ts';
import { showPlan } from '../terraform/show.ts';
import { createTerraform, type Terraform, type TerraformFailed } from '../terraform/terraform.ts';
import { validate } from '../terraform/validate.ts';
import { checkSupported, terraformVersion, unverifiedWarning, type TerraformVersion } from '../terraform/version.ts';
import type { HeldPlanFile } from '../workspace/plan-file.ts';
import type { ModuleScan } from '../workspace/scan.ts';
import { INPUTS_HASH_VARIABLE } from '../workspace/reserved-names.ts';
import { ERRORED_STATE_FILE } from '../workspace/terraform-files.ts';
import { missedDeclarations, prepareWorkspace, scanModule, type Workspace } from '../workspace/workspace.ts';
import { runnerClassifyOptions } from '../commands/classify.ts';
import type { RunContext } from '../run/context.ts';
import { heldPlanOutput } from './held-output.ts';
import { checkRunLocations } from './locations.ts';
import { loadInputs, type LoadedInputs } from '../inputs/load.ts';
import type { ResultFields } from '../run/finish.ts';
import { backupStep, readStateStep, stateAfterFailure, type PulledState } from './state.ts';

/** The cheap part of the contract check, before anything touches state: usable run locations, a supported terraform (after `check`, when given). */
export async function preflight(ctx: RunContext, fields: ResultFields, check?: () => Promise<void>): Promise<TerraformVersion> {
  return ctx.step('preflight', async () => {
    await checkRunLocations(ctx.settings);
    await check?.();
    return checkTerraform(ctx, fields);
  });
}

/** The same for ops that run the module: also a module dir with configuration, read once. */
export async function preflightModule(ctx: RunContext, fields: ResultFields): Promise<{ version: TerraformVersion; scan: ModuleScan }> {
  return ctx.step('preflight', async () => {
    await checkRunLocations(ctx.settings);
    const scan = await scanModule(ctx.settings.module);
    checkPlaintextBackups(ctx, scan);
    return { version: await checkTerraform(ctx, fields), scan };
  });
}

/** OpenTofu state encryption: refuses (apply, plan, restore) or warns (destroy) before anything touches state; see guard/plaintext-backups.ts. */
export function checkPlaintextBackups(ctx: RunContext, scan: Pick<ModuleScan, 'encryption'>): void {
  const settings = encryptionSettings(scan.encryption, process.env);
  const decision = plaintextBackupDecision(ctx.op, settings, ctx.settings.allowPlaintextBackups);
  if (decision.action === 'refuse') throw imageError(decision.message, { encryption: settings });
  if (decision.action === 'warn') ctx.warn(decision.message);
}

async function checkTerraform(ctx: RunContext, fields: ResultFields): Promise<TerraformVersion> {
  const version = await terraformVersion(ctx.settings.terraform, { stop: ctx.terraformStop });
  checkSupported(version);
  fields.terraform = { version: version.version, flavor: version.flavor };
  const unverified = unverifiedWarning(version);
  if (unverified) ctx.warn(unverified);
  return version;
}

/** Reads the inputs dir, computes both hashes and teaches the masker every secret input value. */
export async function inputsStep(ctx: RunContext, fields: ResultFields): Promise<LoadedInputs> {
  return ctx.step('inputs', async () => {
    const inputs = await loadInputs(ctx.settings.inputs, { image: ctx.settings.image, kind: ctx.settings.kind });
    for (const value of inputs.upfrontSecrets) ctx.masker.add(value, `a value in ${SENSITIVE_TFVARS_FILE}`);
    fields.inputsHash = inputs.hashes.inputsHash;
    fields.approvalHash = inputs.hashes.approvalHash;
    return inputs;
  });
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
  // One masker per stream: a secret can span lines of one stream (a wrapped diagnostic, a heredoc).
  const maskers = { stdout: new LineMasker(ctx.masker), stderr: new LineMasker(ctx.masker) };
  // A full pipe (a slow log reader) is backpressure: terraform waits instead of the runner buffering.
  const write = (stream: 'stdout' | 'stderr', masked: string | undefined) =>
    masked === undefined ? undefined : writeWithBackpressure(stream === 'stdout' ? process.stdout : process.stderr, masked + '\n');
  return createTerraform({
    path: version.path,
    cwd: workspace.root,
    output: {
      line: (stream, text) => write(stream, maskers[stream].push(text)),
      end: (stream) => write(stream, maskers[stream].end()),
    },
    stop: ctx.terraformStop,
  });
}

/** init, then the backend it recorded: the module's own, or exactly the local state --state names, before any state is read. */
export async function initStep(ctx: RunContext, tf: Terraform, workspace: Workspace): Promise<void> {
  const statePath = ctx.settings.state;
  const expected: ExpectedBackend = statePath ? { type: 'local', path: resolve(statePath) } : { type: workspace.scan.backend ?? 'unknown' };
  await ctx.step(
    'init',
    async () => {
      const result = await init(tf, { backendConfigs: ctx.settings.backendConfig, lockfileReadonly: true });
      await checkBackend(tf, expected, [...new Set(workspace.scan.backendBlocks.map((block) => block.file))]);
      return result;
    },
    (r) => r.exitCode,
  );
}

export async function validateStep(ctx: RunContext, tf: Terraform): Promise<void> {
  await ctx.step('validate', () => validate(tf), (r) => r.exitCode);
}

export async function planStep(ctx: RunContext, tf: Terraform, workspace: Workspace, inputsHash: string, extra: Partial<PlanOptions> = {}) {
  return ctx.step(
    'plan',
    () =>
      plan(tf, {
        out: workspace.planFile,
        varFiles: workspace.varFiles,
        vars: { [INPUTS_HASH_VARIABLE]: inputsHash },
        lockTimeout: ctx.settings.lockTimeout,
        ...extra,
      }),
    (r) => r.exitCode,
  );
}

export interface ShowOptions {
  destroyPlan?: boolean;
  /** Told every destructive entry, also those beyond the result's bounded list. */
  onDestructive?: (entry: DestructiveChange) => void;
  /** Told every provider action, also those beyond the result's bounded list. */
  onAction?: (action: PlannedAction) => void;
}

/**
 * show -json, classified as it streams; what the runner itself plans at its inputs-hash resource never
 * counts (anything else there is destructive: src/plan/classify.ts). Also
 * checks the runner's reading of the module against terraform's: the inputs-hash resource must
 * depend on every root resource and module call, or a failed apply could record the new hash.
 */
export async function showStep(ctx: RunContext, tf: Terraform, workspace: Workspace, fields: ResultFields, options: ShowOptions = {}): Promise<Classification> {
  const declared = new Set<string>();
  const shown = await ctx.step(
    'show',
    async () => {
      const { value: plan, exitCode } = await showPlan(tf, heldPlan(workspace), (stdout: Readable) =>
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
            },
          }),
        }),
      );
      fields.plan = plan;
      refuseErrored(plan);
      const missed = missedDeclarations(declared, workspace.scan);
      if (missed.length)
        throw new RunnerError({
          kind: 'plan',
          reason: 'ModuleReadIncomplete',
          message: `the runner's reading of the module missed ${missed.join(', ')}: its inputs-hash record would not wait for them, so nothing is applied. Please report this with the module's configuration.`,
          detail: { missed },
        });
      return { plan, exitCode };
    },
    (r) => r.exitCode,
  );
  return shown.plan;
}

/** Every output; sensitive values are never in the result (they go only to the result Secret). */
export async function outputsStep(ctx: RunContext, tf: Terraform, options: { cleanup?: boolean } = {}): Promise<Record<string, OutputValue>> {
  const read = await ctx.step('output', () => output(tf), (r) => r.exitCode, options);
  const result: Record<string, OutputValue> = {};
  const sensitive: Record<string, OutputValue> = {};
  for (const [name, o] of Object.entries(read.outputs)) {
    const known = o.value !== undefined;
    if (o.sensitive) for (const leaf of stringLeaves(o.value)) ctx.masker.add(leaf, `sensitive output ${name}`);
    if (o.sensitive) sensitive[name] = { sensitive: true, known, type: o.type, value: o.value };
    result[name] = o.sensitive ? { sensitive: true, known, type: o.type } : { sensitive: false, known, type: o.type, value: o.value };
  }
  ctx.sensitiveOutputs = sensitive;
  return result;
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
}

export interface PrepareRootOptions {
  validate?: boolean;
  /** Runs in the fresh workdir before init (e.g. to put an approved plan's lock file in place). */
  beforeInit?: (workspace: Workspace, inputs: LoadedInputs) => Promise<void>;
}

export async function prepareRoot(ctx: RunContext, fields: ResultFields, options: PrepareRootOptions = {}): Promise<PreparedRoot> {
  const { version, scan } = await preflightModule(ctx, fields);
  const inputs = await inputsStep(ctx, fields);
  // Variables the module declares sensitive are masked from the first byte, not only once the plan says so.
  inputs.maskSensitiveVariables(scan.sensitiveVariables, ctx.masker);
  const workspace = await workspaceStep(ctx, scan, inputs);
  const tf = terraformIn(ctx, version, workspace);
  try {
    await options.beforeInit?.(workspace, inputs);
    await initStep(ctx, tf, workspace);
    if (options.validate !== false) await validateStep(ctx, tf);
  } catch (error) {
    await workspace.dispose();
    throw error;
  }
  return { version, inputs, workspace, tf };
}

/** terraform marked the plan errored: it is never applied, packed or reported as a finding. */
export function refuseErrored(plan: Classification): void {
  if (plan.errored) throw new RunnerError({ kind: 'plan', reason: 'PlanErrored', message: 'terraform marked the plan errored (incomplete): it is not used. Fix the errors the plan printed and run again.' });
}

/**
 * plan with a saved plan file, then show -json classified as it streams. terraform's human plan is
 * held and printed masked afterwards. `recordHash` is the inputs hash the plan records in the state.
 * `planned.hasChanges` is the exit code's word unless the classification means more change (reconcilePlanExit).
 */
export async function planAndClassify(ctx: RunContext, root: PreparedRoot, fields: ResultFields, recordHash: string, extra: Partial<PlanOptions> = {}, show: Pick<ShowOptions, 'onDestructive' | 'onAction'> = {}) {
  const held = heldPlanOutput(root.tf, root.workspace, ctx.masker);
  const { planned, plan } = await held.around(async () => {
    const planned = await planStep(ctx, held.terraform, root.workspace, recordHash, extra);
    // Taken before show reads the file, through the open file terraform shows and applies: the apply must run exactly the plan that was classified.
    fields.planHash = await ctx.step('plan hash', async () => (await root.workspace.holdPlan()).sha256());
    const plan = await showStep(ctx, root.tf, root.workspace, fields, { destroyPlan: extra.destroy, ...show });
    root.inputs.maskSensitiveVariables(plan.sensitiveVariables, ctx.masker);
    return { planned, plan };
  });
  const reconciled = reconcilePlanExit(planned.hasChanges, plan);
  if (reconciled.warning) ctx.warn(reconciled.warning);
  return { planned: { ...planned, hasChanges: reconciled.hasChanges }, plan, planText: held.text() };
}

export interface ApplySavedPlanOptions {
  backup?: boolean;
  /** What a stale saved plan (refused by terraform before it changed anything) means; without it, an ordinary failure of the apply. */
  onStalePlan?: (stale: TerraformFailed) => RunnerError;
}

/**
 * Backup, then apply the saved plan (see applyStep) once its sha256 is still `fields.planHash`, the
 * plan that was classified or approved. The plan file does not outlive the apply.
 */
export async function applySavedPlan(ctx: RunContext, root: PreparedRoot, before: PulledState, fields: ResultFields, failureReason = 'ApplyFailed', options: ApplySavedPlanOptions = {}): Promise<void> {
  if (options.backup !== false) fields.backup = await backupStep(ctx, before, root.inputs.hashes.inputsHash, root.version.version);
  try {
    const plan = await ctx.step('plan check', async () => {
      const held = heldPlan(root.workspace);
      await checkPlanFile(held, fields.planHash);
      return held;
    });
    await applyStep(ctx, root, before, fields, { planFile: plan, lockTimeout: ctx.settings.lockTimeout }, failureReason, options.onStalePlan);
  } finally {
    await removePlanFile(root.workspace);
  }
}

/** Just before apply, through the open file terraform will read: a plan written in place since it was hashed is refused. */
async function checkPlanFile(plan: HeldPlanFile, classifiedHash: string | undefined): Promise<void> {
  if (classifiedHash === undefined)
    throw new RunnerError({ kind: 'internal', reason: 'InternalError', message: 'internal error: the saved plan was not hashed when it was classified; nothing was applied' });
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
async function applyStep(ctx: RunContext, root: PreparedRoot, before: PulledState, fields: ResultFields, options: ApplyOptions, failureReason: string, onStalePlan: ApplySavedPlanOptions['onStalePlan']): Promise<void> {
  const { tf, workspace } = root;
  // Only an errored.tfstate this apply writes is terraform's unsaved state (code run at plan time could leave one).
  await rm(join(workspace.root, ERRORED_STATE_FILE), { force: true });
  try {
    await ctx.step(
      'apply',
      async () => {
        // Set as terraform starts, not before: a stop during the backup applies nothing.
        ctx.mutationStarted = true;
        fields.applied = true;
        const applied = await terraformApply(tf, options, failureReason);
        if (applied.outcome === 'stalePlan') throw onStalePlan?.(applied.failure) ?? applied.failure;
        return applied;
      },
      (r) => r.exitCode,
    );
  } catch (error) {
    await stateAfterFailure(ctx, tf, workspace, fields);
    throw error;
  }
  // The apply is done: its outputs and the state it left are read even if a stop came meanwhile.
  fields.outputs = await outputsStep(ctx, tf, { cleanup: true });
  const after = await readStateStep(ctx, tf, workspace, 'state after', { cleanup: true });
  fields.state = { serialBefore: before.serial, serialAfter: after.serial, lineage: after.lineage };
  fields.stateInputsHash = after.recordedInputsHash;
}
