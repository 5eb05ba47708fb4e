// The plan steps (plan, plan hash, show) and planAndClassify, the sequence that makes a saved plan
// and classifies it. Each step takes the run context and one options object, and returns what it
// learned (telling its step record what of that the result reports).
import type { Classification } from '../schemas/classification.ts';
import { imageError, RunnerError } from '../errors.ts';
import { SENSITIVE_TFVARS_FILE } from '../inputs/index.ts';
import { reconcilePlanExit } from '../plan/gate.ts';
import { actionText, changeText } from '../plan/actions.ts';
import { sensitiveModuleInputs } from '../plan/module-inputs.ts';
import { classifyPlanStream } from '../plan/stream.ts';
import { observers, type PlanObserver } from '../plan/observer.ts';
import { runnerClassifyOptions } from '../plan/runner-options.ts';
import type { PlanJudgement } from '../policy/judge.ts';
import type { Logger } from '../output/log.ts';
import type { Masker } from '../masking/mask.ts';
import type { PlanOptions } from '../terraform/plan.ts';
import { showPlan } from '../terraform/show.ts';
import type { RunExtras, Terraform } from '../terraform/terraform.ts';
import type { HeldPlanFile } from '../workspace/plan-file.ts';
import type { ModuleScan } from '../workspace/scan.ts';
import { INPUTS_HASH_VARIABLE } from '../workspace/reserved-names.ts';
import { missedDeclarations, type Workspace } from '../workspace/workspace.ts';
import type { RunContext } from '../run/context.ts';
import { maskedPlanText, type MaskedPlanText } from './plan-text.ts';
import type { PreparedRoot } from './prepare.ts';
import type { StateSummary } from '../state/summary.ts';
import { stateLearning, statePlannedStep } from './state-planned.ts';

export interface PlanStepOptions {
  /** Where terraform's human plan goes until the classification has taught the masker (plan-text.ts). */
  text: MaskedPlanText;
  workspace: Workspace;
  /** The inputs hash the plan records in the state. */
  inputsHash: string;
  /** The kind of plan (destroy, refresh-only) and what else terraform plan is told. */
  plan?: Partial<PlanOptions>;
  /** Awaited once terraform has ended, before its stderr's tail is masked (state-planned.ts). */
  beforeTail?: RunExtras['beforeTail'];
}

/** terraform plan, its human output kept back (printed masked once the classification has taught the masker). */
async function planStep(ctx: RunContext, { text, workspace, inputsHash, plan, beforeTail }: PlanStepOptions) {
  return ctx.step(
    'plan',
    () =>
      text.plan(
        {
          out: workspace.planFile,
          varFiles: workspace.varFiles,
          vars: { [INPUTS_HASH_VARIABLE]: inputsHash },
          lockTimeout: ctx.settings.lockTimeout,
          ...plan,
        },
        { beforeTail },
      ),
    {
      exitCode: (r) => r.exitCode,
      exitMeaning: (r) => (r.hasChanges ? 'exitCode 2: changes present' : 'exitCode 0: no changes'),
    },
  );
}

/** The saved plan's sha256, taken through the file the runner then holds open: show, the plan check and the apply read that one file. */
async function planHashStep(ctx: RunContext, { workspace }: { workspace: Workspace }): Promise<string> {
  return ctx.step('plan hash', async () => (await workspace.holdPlan()).sha256(), {
    learned: (planHash) => ({ planHash }),
  });
}

interface ShowOptions {
  destroyPlan?: boolean;
  /** Told what the plan's reading meets, after the log and before the policy (the approval's coverage: ops/apply.ts). */
  observer?: PlanObserver;
  /** The policy's judgement of this plan (steps/policy.ts): an observer fed as the plan streams, its findings in plan.policy. */
  judgement?: PlanJudgement;
}

export interface ShowStepOptions extends ShowOptions {
  tf: Terraform;
  workspace: Workspace;
  /** The run's inputs: the values of the root variables the root passes to a module's sensitive variable are masked from them. */
  inputs: Pick<PreparedRoot['inputs'], 'maskSensitiveVariables'>;
}

/**
 * show -json, classified as it streams; what the runner itself plans at its inputs-hash resource never
 * counts (anything else there is destructive: src/plan/classify.ts). Also
 * checks the runner's reading of the module against terraform's: the inputs-hash resource must
 * depend on every root resource and module call, or a failed apply could record the new hash.
 */
export async function showStep(ctx: RunContext, options: ShowStepOptions): Promise<Classification> {
  const { tf, workspace } = options;
  const declared = new Set<string>();
  const moduleSecrets = new Set<string>();
  const observer = observers(
    { onRootDeclaration: (address) => declared.add(address) },
    maskerLessons(ctx.masker, moduleSecrets),
    loggedPlan(ctx.log),
    options.observer,
    options.judgement,
  );
  const shown = await ctx.step(
    'show',
    async () => {
      const shown = showPlan(tf, heldPlan(workspace), (stdout) =>
        classifyPlanStream(stdout, { ...observer, ...runnerClassifyOptions({ destroyPlan: options.destroyPlan }) }),
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
      options.inputs.maskSensitiveVariables(
        [...moduleSecrets],
        ctx.masker,
        'passed to a sensitive variable of a module',
      );
      return { plan, exitCode };
    },
    { exitCode: (r) => r.exitCode },
  );
  return shown.plan;
}

/** What the masker learns as the plan streams (module calls' secrets are masked from the inputs once it is read: `moduleSecrets`). */
function maskerLessons(masker: Masker, moduleSecrets: Set<string>): PlanObserver {
  return {
    // A value of sensitive.tfvars.json the module does not declare sensitive: the plan shows its old value beside it.
    onChangedValues: (before, after) => masker.addOldValues(before, after),
    // What the root passes to a child module's sensitive variable: the root may print it (a DSN built from it).
    onModuleCall: (call) => {
      const inputs = sensitiveModuleInputs(call);
      for (const name of inputs.variables) moduleSecrets.add(name);
      for (const value of inputs.constants) masker.add(value, 'a value passed to a sensitive variable of a module');
    },
  };
}

/** Every destructive entry and provider action logged, beyond the bounded lists in the result. */
function loggedPlan(log: Logger): PlanObserver {
  return {
    onDestructive: (d) =>
      log.warn({ address: d.address, deposed: d.deposed, action: d.action }, `destructive: ${changeText(d)}`),
    onAction: (a) =>
      log.warn(
        {
          address: a.address,
          trigger: a.trigger,
          triggeringResource: a.triggeringResource,
          onFailure: a.onFailure,
          deferred: a.deferred,
        },
        `provider action: ${actionText(a)}`,
      ),
  };
}

/** terraform marked the plan errored: it is never applied, packed or reported as a finding. */
export function refuseErrored(plan: Classification): void {
  if (plan.errored)
    throw new RunnerError({
      kind: 'plan',
      reason: 'PlanErrored',
      message:
        'terraform marked the plan errored (incomplete): it is not used. Fix the errors the plan printed and run again.',
    });
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
  if (!plan)
    throw new RunnerError({
      kind: 'internal',
      reason: 'InternalError',
      message: 'internal error: the saved plan was not hashed before it was used; nothing was applied',
    });
  return plan;
}

export interface PlanAndClassifyOptions {
  root: PreparedRoot;
  /**
   * The state the plan is made against, read before it: whether the plan changes the record it holds.
   * Without it, the state is read from the saved plan (state-planned.ts); either is returned as `before`.
   */
  before?: StateSummary;
  /** The inputs hash the plan records in the state. */
  recordHash: string;
  /** The kind of plan (destroy, refresh-only) and what else terraform plan is told. */
  plan?: Partial<PlanOptions>;
  show?: Omit<ShowOptions, 'destroyPlan'>;
}

/**
 * plan with a saved plan file, then show -json classified as it streams. terraform's human plan is
 * kept back and printed masked afterwards. `planned.hasChanges` is the exit code's word unless the
 * classification means more change (reconcilePlanExit); `planHash` is what the apply must find in
 * the file (applySavedPlan).
 */
export async function planAndClassify(ctx: RunContext, options: PlanAndClassifyOptions) {
  const { root, recordHash, plan: planOptions = {}, show = {} } = options;
  const learning = options.before ? undefined : stateLearning(ctx, root);
  const text = maskedPlanText(root.tf, root.workspace, ctx.progress, {
    withheld: learning?.withheld,
    warn: (message) => ctx.warn(message),
  });
  const { planned, planHash, plan, before } = await text.around(async () => {
    const planned = await planStep(ctx, {
      text,
      workspace: root.workspace,
      inputsHash: recordHash,
      plan: planOptions,
      beforeTail: learning?.beforeTail,
    });
    // Taken before show reads the file, through the open file terraform shows and applies: the apply must run exactly the plan that was classified.
    const planHash = await planHashStep(ctx, { workspace: root.workspace });
    const before =
      options.before ?? (await statePlannedStep(ctx, { root, held: heldPlan(root.workspace), learning: learning! }));
    const plan = await showStep(ctx, {
      tf: root.tf,
      workspace: root.workspace,
      inputs: root.inputs,
      destroyPlan: planOptions.destroy,
      ...show,
    });
    root.inputs.maskSensitiveVariables(plan.sensitiveVariables, ctx.masker);
    return { planned, planHash, plan, before };
  });
  // A destroy deletes the record, a refresh-only plan leaves it: only other plans set it to recordHash.
  const recordChanges = !planOptions.destroy && !planOptions.refreshOnly && before.recordedInputsHash !== recordHash;
  const reconciled = reconcilePlanExit(planned.hasChanges, plan, {
    recordChanges,
    destroyPlan: planOptions.destroy === true,
  });
  if (reconciled.warning) ctx.warn(reconciled.warning);
  return {
    planned: { ...planned, hasChanges: reconciled.hasChanges },
    planHash,
    plan,
    planText: text.text(),
    before,
  };
}
