// One op, start to finish: settings, logger, signal and deadline handling, the op's body, the
// result and its sinks. main.ts loads this module only for an op, so that `--version`, `--help` and
// the other commands never load zod, pino or the ops: every Job pays for what loads at start.
import {
  givenSetting,
  loadSettings,
  durationMs,
  settingsOfInvalidRun,
  unknownSettingVariables,
  type Settings as SettingsT,
} from './schemas/config.ts';
import type { Op } from './schemas/result.ts';
import { RunnerError } from './errors.ts';
import { createLogger } from './output/log.ts';
import { Masker } from './masking/mask.ts';
import { maskResult } from './masking/mask-result.ts';
import { progressIntervalMs } from './output/progress.ts';
import { openSummaryMd, runPlaces } from './output/summary-md-file.ts';
import { reportingOf, RunContext, type StopCause } from './run/context.ts';
import { finishRun, publishResult, recordLateWarnings } from './run/finish.ts';
import type { OpEnding } from './run/learned.ts';
import { OPS, type OpModule } from './ops/index.ts';
import { deadlineAt, HANDBACK_BUDGET_MS, stopAfterMs } from './schemas/deadline.ts';

/** What the run does after the hand-back to Kubernetes (the late warnings written, the exit), within --deadline. */
const AFTER_HANDBACK_MS = 1000;

/** `usageProblem`: the command line itself was wrong (commander refused it); the result still says so. */
export async function runOp(op: Op, flags: Record<string, unknown>, usageProblem?: RunnerError): Promise<number> {
  const masker = new Masker();
  let settings: SettingsT;
  let settingsError: unknown = usageProblem;
  try {
    if (usageProblem) throw usageProblem;
    settings = loadSettings(op, flags, process.env);
  } catch (error) {
    settingsError = error;
    settings = settingsOfInvalidRun(flags, process.env);
  }
  const bindings = { op, object: settings.object ?? null, namespace: settings.namespace ?? null };
  const log = await createLogger(settings.logFormat ?? (process.stderr.isTTY ? 'pretty' : 'json'), masker, bindings);
  const ctx = new RunContext(op, settings, log, masker, {
    reporting: reportingOf(flags),
    writesResultFile: !usageProblem || givenSetting(flags, process.env, 'out') !== undefined,
    moduleOnCommandLine: typeof flags.module === 'string',
    progressIntervalMs: progressIntervalMs(process.env),
  });
  for (const notice of unknownSettingVariables(process.env)) ctx.notice(notice);
  const stop = installStopHandlers(ctx);
  let opModule: OpModule | undefined;
  let ending: OpEnding | undefined;
  let caught: unknown = settingsError;
  try {
    // Invalid settings too are handed back in a cluster, when the Job identity among them is valid.
    if (settings.jobName || settings.jobUid) {
      ctx.cluster = (await import('./run/in-cluster.ts')).inClusterFrom(settings, log, masker);
      // The op's own API calls (backups, artifacts, blocked results) end where the hand-back's budget begins.
      if (ctx.cluster && settings.deadline)
        ctx.cluster.client.setDeadline(
          deadlineAt(ctx.startedAt, ctx.settings.deadline) - HANDBACK_BUDGET_MS,
          'the time before --deadline the op may use',
        );
    }
    // Before anything runs: a --summary-md FILE that is no regular file of its own is refused (exit 2).
    if (ctx.reporting.summaryMd !== undefined)
      ctx.summaryMd = await openSummaryMd(ctx.reporting.summaryMd, runPlaces(settings));
    if (!settingsError) {
      opModule = await OPS[op]();
      const serves = settings.object
        ? ` for ${settings.kind} ${settings.namespace ? `${settings.namespace}/` : ''}${settings.object}`
        : '';
      log.info({ kind: settings.kind }, `captf-runner ${op} starting${serves}`);
      ending = await opModule.run(ctx);
    }
  } catch (error) {
    caught ??= error;
  }
  stop.dispose();
  const { result, exitCode: code, sensitiveOutputs } = await finishRun(ctx, ending, caught);
  const published = await publishResult(ctx, (await opModule?.beforePublish?.(ctx, result)) ?? result, code);
  // Masked like every other byte the runner writes; only the sensitive outputs' values are the result Secret's to hold.
  // The hand-back ends a second before the deadline: the late warnings are written into result.json and the termination message after it.
  const handBackUntil = Math.min(
    Date.now() + HANDBACK_BUDGET_MS,
    deadlineAt(ctx.startedAt, ctx.settings.deadline) - AFTER_HANDBACK_MS,
  );
  const apiProblems =
    (await ctx.cluster?.publish(maskResult(masker, published), sensitiveOutputs, handBackUntil)) ?? [];
  if (apiProblems.length) await recordLateWarnings(ctx, published, apiProblems);
  return published.exitCode;
}

/**
 * On the first SIGTERM/SIGINT (or the deadline): start no new step, send terraform exactly one
 * interrupt, give it --stop-grace, then a second interrupt, then kill its process group. A second
 * signal escalates at once.
 */
function installStopHandlers(ctx: RunContext): { dispose(): void } {
  const timers: NodeJS.Timeout[] = [];
  const graceMs = durationMs(ctx.settings.stopGrace);
  let stage = 0;
  // The timers escalate only against the terraform that got the first interrupt: the commands that
  // save the state afterwards (errored.tfstate, state pull) must not be cut off by them.
  let interrupted: Set<number> | undefined;
  // The steps running when the stop came: a step that is no terraform (a store that does not answer)
  // gets the grace and no more, when no terraform is left to stop.
  let stoppedSteps: ReturnType<typeof ctx.terraformStop.waitingNow> | undefined;
  const escalate = (bySignal: boolean) => {
    stage++;
    const only = bySignal ? undefined : interrupted;
    if (stage === 1) {
      stoppedSteps = ctx.terraformStop.waitingNow();
      interrupted = ctx.terraformStop.interrupt('graceful');
      timers.push(setTimeout(() => escalate(false), graceMs).unref());
    } else if (stage === 2) {
      const stillRunning = ctx.terraformStop.interrupt('immediate', only);
      if (stillRunning.size === 0 && !bySignal) ctx.terraformStop.giveUp(stoppedSteps);
      else
        ctx.log.warn(
          bySignal
            ? 'second stop request: interrupting terraform again at once'
            : 'terraform did not stop within the grace period: interrupting it again',
        );
      timers.push(setTimeout(() => escalate(false), 5000).unref());
    } else {
      if (ctx.terraformStop.interrupt('kill', only).size > 0)
        ctx.log.error('terraform still ran: its process group was killed');
      // A step that is no terraform (a read that never returns) does not end with the kill: the run ends without it.
      timers.push(setTimeout(() => ctx.terraformStop.giveUp(), 2000).unref());
    }
  };
  const requestStop = (cause: StopCause) => {
    if (ctx.stopCause) {
      escalate(cause !== 'deadline');
      return;
    }
    ctx.requestStop(cause);
    ctx.log.warn(
      { cause, step: ctx.currentStep },
      `stop requested (${cause}): no new step starts; terraform gets one interrupt`,
    );
    escalate(true);
  };
  const onTerm = () => requestStop('SIGTERM');
  const onInt = () => requestStop('SIGINT');
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  const stopAfter = stopAfterMs({
    deadline: ctx.settings.deadline,
    stopGrace: ctx.settings.stopGrace,
    inCluster: Boolean(ctx.settings.jobName || ctx.settings.jobUid),
  });
  // Stop early enough that terraform's graceful stop and the result (in a cluster, its hand-back too) fit before the deadline.
  if (stopAfter !== undefined) timers.push(setTimeout(() => requestStop('deadline'), Math.max(0, stopAfter)).unref());
  return {
    /** Ends the escalation timers. The handlers stay: a late signal must not kill the runner while it writes the result. */
    dispose() {
      for (const t of timers) clearTimeout(t);
    },
  };
}
