// The steps ops share, each a short function over the driver. An op is a readable sequence of these.
import { join } from 'node:path';
import { chmod, copyFile, rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Classification } from '../contract/classification.ts';
import { RunnerError } from '../errors.ts';
import type { ArtifactRef, OutputValue } from '../contract/result.ts';
import { pruneObjects, writeArtifact } from '../store/chunked.ts';
import { backupStore } from './stores.ts';
import { makeDirs } from '../util/mkdirs.ts';
import type { ChunkStore } from '../store/store.ts';
import { terraformEnv } from '../terraform/exec.ts';
import type { Terraform } from '../terraform/terraform.ts';
import { terraformVersion, checkSupported, type TerraformVersion } from '../terraform/version.ts';
import { init } from '../terraform/init.ts';
import { validate } from '../terraform/validate.ts';
import { plan, type PlanOptions } from '../terraform/plan.ts';
import { showPlan } from '../terraform/show.ts';
import { output } from '../terraform/output.ts';
import { apply as terraformApply } from '../terraform/apply.ts';
import { statePull, statePush } from '../terraform/state.ts';
import { classifyPlanStream } from '../plan/stream.ts';
import { summarizeState, type StateSummary } from '../plan/state.ts';
import { maskStateSecrets } from '../state/secrets.ts';
import { loadInputs, type LoadedInputs } from './inputs.ts';
import { INPUTS_HASH_RESOURCE, INPUTS_HASH_VARIABLE, missedDeclarations, prepareWorkspace, scanModule, type Workspace } from '../workspace/workspace.ts';
import type { ModuleScan } from '../workspace/scan.ts';
import { stringLeaves, type Masker } from '../output/mask.ts';
import type { RunContext } from './context.ts';
import { SENSITIVE_TFVARS_FILE } from '../inputs/index.ts';
import type { ResultFields } from './run.ts';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { once } from 'node:events';

/** The cheap part of the contract check, before anything touches state: a module with .tf files, a supported terraform. */
/** The cheap part of the contract check, before anything touches state: a supported terraform. */
export async function preflight(ctx: RunContext, fields: ResultFields): Promise<TerraformVersion> {
  return ctx.step('preflight', () => checkTerraform(ctx, fields));
}

/** The same for ops that run the module: also a module dir with configuration, read once. */
export async function preflightModule(ctx: RunContext, fields: ResultFields): Promise<{ version: TerraformVersion; scan: ModuleScan }> {
  return ctx.step('preflight', async () => {
    const scan = await scanModule(ctx.settings.module);
    return { version: await checkTerraform(ctx, fields), scan };
  });
}

async function checkTerraform(ctx: RunContext, fields: ResultFields): Promise<TerraformVersion> {
  const version = await terraformVersion(ctx.settings.terraform);
  checkSupported(version);
  fields.terraform = { version: version.version, flavor: version.flavor };
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
    }),
  );
}

export function terraformIn(ctx: RunContext, version: TerraformVersion, workspace: Workspace): Terraform {
  return {
    path: version.path,
    cwd: workspace.root,
    env: terraformEnv(process.env),
    output: {
      line: (stream, text) => {
        const out = stream === 'stdout' ? process.stdout : process.stderr;
        // A full pipe (a slow log reader) is backpressure: terraform waits instead of the runner buffering.
        if (!out.write(ctx.masker.mask(text) + '\n')) return once(out, 'drain').then(() => undefined);
      },
    },
  };
}

export async function initStep(ctx: RunContext, tf: Terraform): Promise<void> {
  await ctx.step('init', () => init(tf, { backendConfigs: ctx.settings.backendConfig, lockfileReadonly: true }), (r) => r.exitCode);
}

export async function validateStep(ctx: RunContext, tf: Terraform): Promise<void> {
  await ctx.step('validate', () => validate(tf), (r) => r.exitCode);
}

/** The state as it is now: serial, lineage and the inputs hash it records. */
export async function readStateStep(ctx: RunContext, tf: Terraform, workspace: Workspace, name: 'state before' | 'state after'): Promise<StateSummary & { file: string }> {
  return ctx.step(name, async () => {
    const state = await pullState(tf, workspace, name);
    // The state holds secrets no input names any more (an old value of a rotated secret): terraform's
    // plan prints them through derived attributes, so the masker learns them before any plan runs.
    if (name === 'state before') await maskStateSecrets(state.file, ctx.masker);
    return state;
  });
}

/** The state before the op: recorded in the result at once, so a later failure still reports it. */
export async function stateBeforeStep(ctx: RunContext, tf: Terraform, workspace: Workspace, fields: ResultFields): Promise<StateSummary & { file: string }> {
  const before = await readStateStep(ctx, tf, workspace, 'state before');
  fields.state = { serialBefore: before.serial, serialAfter: before.serial, lineage: before.lineage };
  fields.stateInputsHash = before.recordedInputsHash;
  return before;
}

async function pullState(tf: Terraform, workspace: Workspace, name: 'state before' | 'state after'): Promise<StateSummary & { file: string }> {
  const file = join(workspace.privateDir, name === 'state before' ? 'state-before.json' : 'state-after.json');
  await statePull(tf, file);
  return { ...(await summarizeState(createReadStream(file))), file };
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

/**
 * show -json, classified as it streams; the runner's own inputs-hash resource never counts. Also
 * checks the runner's reading of the module against terraform's: the inputs-hash resource must
 * depend on every root resource and module call, or a failed apply could record the new hash.
 */
export async function showStep(ctx: RunContext, tf: Terraform, workspace: Workspace, fields: ResultFields): Promise<Classification> {
  const declared = new Set<string>();
  const shown = await ctx.step(
    'show',
    async () => {
      const { value: plan, exitCode } = await showPlan(tf, workspace.planFile, (stdout: Readable) =>
        classifyPlanStream(stdout, {
          ignoreAddresses: new Set([INPUTS_HASH_RESOURCE]),
          onRootDeclaration: (address) => declared.add(address),
          // Every one, beyond the bounded list in the result.
          onDestructive: (d) => ctx.log.warn({ address: d.address, deposed: d.deposed, action: d.action }, `destructive: ${d.address}${d.deposed ? ` (deposed ${d.deposed})` : ''} (${d.action})`),
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
  const full: Record<string, OutputValue> = {};
  for (const [name, o] of Object.entries(read.outputs)) {
    const known = o.value !== undefined;
    if (o.sensitive) for (const leaf of stringLeaves(o.value)) ctx.masker.add(leaf, `sensitive output ${name}`);
    full[name] = { sensitive: o.sensitive, known, type: o.type, value: o.value };
    result[name] = o.sensitive ? { sensitive: true, known, type: o.type } : { sensitive: false, known, type: o.type, value: o.value };
  }
  ctx.fullOutputs = full;
  return result;
}

/** Secret material does not outlive the run. */
export async function removePlanFile(workspace: Workspace): Promise<void> {
  await rm(workspace.planFile, { force: true });
}


/**
 * terraform's human plan can print secrets it no longer marks (derived attributes), and the runner
 * learns which variables are sensitive only from the plan JSON. So the plan's stdout is held in a
 * private file and printed, masked, once the classification has taught the masker.
 */
export const PLAN_TEXT_LIMIT = 64 * 1024;

export function heldPlanOutput(tf: Terraform, workspace: Workspace, masker: Masker): { terraform: Terraform; text(): string; around<T>(body: () => Promise<T>): Promise<T> } {
  const file = join(workspace.privateDir, 'plan.txt');
  const held = createWriteStream(file, { mode: 0o600 });
  let text = '';
  return {
    terraform: {
      ...tf,
      output: {
        line: (stream, line) => {
          if (stream !== 'stdout') return tf.output.line(stream, line);
          if (!held.write(line + '\n')) return once(held, 'drain').then(() => undefined);
        },
      },
    },
    /** The first PLAN_TEXT_LIMIT characters of the plan, masked, once `around` has finished. */
    text: () => text,
    /** Runs the plan and classification, then prints what was held, whether they succeeded or not. */
    async around(body) {
      try {
        return await body();
      } finally {
        await new Promise<void>((resolve) => held.end(resolve));
        const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
        for await (const line of lines) {
          const wait = tf.output.line('stdout', line);
          if (wait) await wait;
          if (text.length < PLAN_TEXT_LIMIT) text += masker.mask(line) + '\n';
        }
        text = text.slice(0, PLAN_TEXT_LIMIT);
        await rm(file, { force: true });
      }
    },
  };
}

/**
 * After a failed or interrupted apply: save the state terraform could not persist (errored.tfstate:
 * pushed when the backend takes it, else kept with the backups), then report what the state holds.
 * Damage control runs even after a stop request; its own failures are warnings, the apply's error is
 * what counts.
 */
export async function stateAfterFailure(ctx: RunContext, tf: Terraform, workspace: Workspace, fields: ResultFields): Promise<void> {
  await rescueErroredState(ctx, tf, workspace, fields);
  try {
    const after = await ctx.step('state after', () => pullState(tf, workspace, 'state after'), undefined, { cleanup: true });
    fields.state = { serialBefore: fields.state?.serialBefore ?? null, serialAfter: after.serial, lineage: after.lineage };
    fields.stateInputsHash = after.recordedInputsHash;
  } catch (error) {
    ctx.warn(`could not read the state after the failed apply: ${(error as Error).message}`);
  }
}

export const ERRORED_STATE_FILE = 'errored.tfstate';

async function rescueErroredState(ctx: RunContext, tf: Terraform, workspace: Workspace, fields: ResultFields): Promise<void> {
  const errored = join(workspace.root, ERRORED_STATE_FILE);
  if (!existsSync(errored)) return;
  try {
    await ctx.step('state push', () => statePush(tf, errored, { lockTimeout: ctx.settings.lockTimeout }), (r) => r.exitCode, { cleanup: true });
    fields.erroredState = { pushed: true };
    ctx.warn(`terraform could not save the state and left ${ERRORED_STATE_FILE}: the runner pushed it to the backend`);
  } catch (pushError) {
    try {
      const keptAt = await keepErroredState(ctx, errored);
      fields.erroredState = { pushed: false, keptAt };
      ctx.warn(`terraform could not save the state and the backend refused ${ERRORED_STATE_FILE} (${(pushError as Error).message}): it is kept at ${keptAt}; push it with terraform state push once the backend is back`);
    } catch (keepError) {
      fields.erroredState = { pushed: false };
      ctx.log.error(`terraform left ${ERRORED_STATE_FILE} and it could be neither pushed nor kept (${(keepError as Error).message}): the workdir ${workspace.dir} is left in place`);
      workspace.keep();
    }
  }
}

/** With the backups (Secrets in a cluster, where the out dir dies with the pod), else in the out dir. */
async function keepErroredState(ctx: RunContext, errored: string): Promise<string> {
  const store = backupStore(ctx);
  if (store) {
    const summary = await summarizeState(createReadStream(errored));
    const object = `errored-${new Date().toISOString().replace(/[-:.]/g, '').toLowerCase()}`;
    await writeArtifact(
      store,
      object,
      [{ name: STATE_FILE_NAME, path: errored }],
      { kind: 'StateBackup', terraformVersion: summary.terraformVersion ?? 'unknown', op: ctx.op, stateFile: STATE_FILE_NAME, serial: summary.serial ?? 0, lineage: summary.lineage || 'unknown' },
      { chunkBytes: ctx.settings.chunkBytes },
    );
    return `${store.location}/${object}`;
  }
  const kept = join(ctx.settings.out, `errored-${Date.now()}.tfstate`);
  await makeDirs(ctx.settings.out);
  await copyFile(errored, kept);
  await chmod(kept, 0o600);
  return kept;
}

/**
 * Before an op changes anything: the state as it is, packed and verified in the backup store. Not
 * best effort: a backup that cannot be written stops the op before it changes anything.
 */
export async function backupStep(ctx: RunContext, before: StateSummary & { file: string }, inputsHash: string | undefined, terraformVersion: string): Promise<ArtifactRef | undefined> {
  const store = backupStore(ctx);
  if (!store) {
    ctx.warn('no backup store is configured (--backups DIR, or in-cluster Secrets): no state backup was taken');
    return undefined;
  }
  if (before.serial === null || !before.lineage) {
    ctx.skip('backup', 'there is no state yet');
    return undefined;
  }
  return ctx.step('backup', async () => {
    const object = `backup-${new Date().toISOString().replace(/[-:.]/g, '').toLowerCase()}-s${before.serial}`;
    const manifest = await writeArtifact(
      store,
      object,
      [{ name: STATE_FILE_NAME, path: before.file }],
      { kind: 'StateBackup', terraformVersion, op: ctx.op, stateFile: STATE_FILE_NAME, serial: before.serial!, lineage: before.lineage!, ...(inputsHash ? { inputsHash } : {}) },
      { chunkBytes: ctx.settings.chunkBytes },
    );
    await pruneQuietly(ctx, store, { keep: ctx.settings.keepBackups, prefix: 'backup-', protect: [object] });
    return { location: store.location, object, sha256: manifest.sha256, chunks: manifest.chunkCount, bytes: manifest.totalBytes };
  });
}

export const STATE_FILE_NAME = 'terraform.tfstate';

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
    await initStep(ctx, tf);
    if (options.validate !== false) await validateStep(ctx, tf);
  } catch (error) {
    await workspace.dispose();
    throw error;
  }
  return { version, inputs, workspace, tf };
}

/**
 * plan with a saved plan file, then show -json classified as it streams. terraform's human plan is
 * held and printed masked afterwards. `recordHash` is the inputs hash the plan records in the state.
 */
/** terraform marked the plan errored: it is never applied, packed or reported as a finding. */
export function refuseErrored(plan: Classification): void {
  if (plan.errored) throw new RunnerError({ kind: 'plan', reason: 'PlanErrored', message: 'terraform marked the plan errored (incomplete): it is not used. Fix the errors the plan printed and run again.' });
}

export async function planAndClassify(ctx: RunContext, root: PreparedRoot, fields: ResultFields, recordHash: string, extra: Partial<PlanOptions> = {}) {
  const held = heldPlanOutput(root.tf, root.workspace, ctx.masker);
  const { planned, plan } = await held.around(async () => {
    const planned = await planStep(ctx, held.terraform, root.workspace, recordHash, extra);
    const plan = await showStep(ctx, root.tf, root.workspace, fields);
    root.inputs.maskSensitiveVariables(plan.sensitiveVariables, ctx.masker);
    return { planned, plan };
  });
  return { planned, plan, planText: held.text() };
}

/**
 * Backup, then apply the saved plan, then read outputs and the state. A failed apply still reports
 * what the state holds afterwards.
 */
export async function applySavedPlan(ctx: RunContext, root: PreparedRoot, before: StateSummary & { file: string }, fields: ResultFields, failureReason = 'ApplyFailed'): Promise<void> {
  const { tf, workspace } = root;
  fields.backup = await backupStep(ctx, before, root.inputs.hashes.inputsHash, root.version.version);
  try {
    await ctx.step(
      'apply',
      () => {
        // Set as terraform starts, not before: a stop during the backup applies nothing.
        ctx.mutationStarted = true;
        fields.applied = true;
        return terraformApply(tf, { planFile: workspace.planFile, lockTimeout: ctx.settings.lockTimeout }, failureReason);
      },
      (r) => r.exitCode,
    );
  } catch (error) {
    await stateAfterFailure(ctx, tf, workspace, fields);
    throw error;
  } finally {
    await removePlanFile(workspace);
  }
  // The apply is done: its outputs and the state it left are read even if a stop came meanwhile.
  fields.outputs = await outputsStep(ctx, tf, { cleanup: true });
  const after = await ctx.step('state after', () => pullState(tf, workspace, 'state after'), undefined, { cleanup: true });
  fields.state = { serialBefore: before.serial, serialAfter: after.serial, lineage: after.lineage };
  fields.stateInputsHash = after.recordedInputsHash;
}

/** Retention runs after the new object is complete: a failure to delete old ones is a warning, never a failed op. */
export async function pruneQuietly(ctx: RunContext, store: ChunkStore, options: Parameters<typeof pruneObjects>[1]): Promise<void> {
  try {
    const { deleted } = await pruneObjects(store, options);
    if (deleted.length) ctx.log.info({ deleted, location: store.location }, `retention: deleted ${deleted.length} older objects`);
  } catch (error) {
    ctx.warn(`could not delete older objects in ${store.location}: ${(error as Error).message}`);
  }
}
