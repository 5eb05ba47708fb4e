// The one place that turns what an op did (or the error that stopped it) into a result, hands the
// result to every sink and chooses the exit code.
import { RESULT_API_VERSION, type OutputValue, type Result } from '../schemas/result.ts';
import type { Settings } from '../schemas/config.ts';
import { RunnerError, asRunnerError } from '../errors.ts';
import { writeResultFile } from '../output/result-file.ts';
import { writeTerminationMessage } from '../output/termination.ts';
import { warnedOfSecretWords } from '../masking/mask-result.ts';
import { humanSummary } from '../output/summary.ts';
import { writeWithBackpressure } from '../output/std-streams.ts';
import { MASK, MIN_MASKED_LENGTH, maskValue } from '../masking/mask.ts';
import type { RunContext } from './context.ts';
import { detailedExitCode, exitCodeOf, outcomeOf } from './exit-codes.ts';
import { EXIT, isResultReason, type ErrorReason, type ResultReason } from '../vocabulary/reasons.ts';
import { opSummaryMarkdown } from '../output/summary-md.ts';
import type { OpEnding } from './learned.ts';
import { RUNNER_VERSION } from '../version.ts';

/**
 * The result of the run: what the run kept as its steps and the op learned, then what the op
 * concluded with its ending. The sensitive outputs come back apart: only the result Secret holds them.
 */
export async function finishRun(
  ctx: RunContext,
  ending: OpEnding | undefined,
  caught: unknown,
): Promise<{ result: Result; exitCode: number; sensitiveOutputs: Record<string, OutputValue> | undefined }> {
  const { sensitiveOutputs, ...learned } = { ...ctx.learned(), ...ending?.learned };
  const error = caught === undefined ? undefined : reportable(asRunnerError(caught, ctx.currentStep));
  const outcome = error ? outcomeOf(error) : ending!.outcome;
  const reason = error ? error.reason : ending!.reason;
  const exitCode = ctx.reporting.detailedExitcode
    ? detailedExitCode(exitCodeOf(reason, error), { driftFound: reason === 'DriftFound' })
    : exitCodeOf(reason, error);
  const settings: Settings = ctx.settings;
  if (ctx.masker.unmaskable)
    ctx.warnings.push(`${ctx.masker.unmaskable} text(s) could not be masked and were replaced by "${MASK}" whole`);
  for (const label of ctx.masker.tooShort)
    ctx.warnings.push(
      `${label} has a value, or a line of a multi-line value, shorter than ${MIN_MASKED_LENGTH} characters: it is not masked (it would mask ordinary text)`,
    );
  const lock = error?.detail?.lock as Result['lock'] | undefined;
  const result: Result = {
    apiVersion: RESULT_API_VERSION,
    op: ctx.op,
    outcome,
    reason,
    message: error ? error.message : ending!.message,
    exitCode,
    runnerVersion: RUNNER_VERSION,
    object: {
      kind: settings.kind,
      ...(settings.object ? { name: settings.object } : {}),
      ...(settings.namespace ? { namespace: settings.namespace } : {}),
    },
    applied: false,
    mayHaveChanged: false,
    annotations: {},
    ...learned,
    ...(lock ? { lock } : {}),
    steps: ctx.steps,
    warnings: ctx.warnings,
    notices: ctx.notices,
    ...(error
      ? {
          error: {
            kind: error.kind,
            reason: error.reason,
            message: error.message,
            ...(error.step ? { step: error.step } : {}),
            ...(error.detail ? { detail: error.detail } : {}),
          },
        }
      : {}),
    startedAt: ctx.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
  };
  result.annotations = { 'captf.io/outcome': outcome, 'captf.io/reason': result.reason, ...result.annotations };
  if (error?.kind === 'internal') ctx.log.error({ err: error.cause }, 'internal error: please report this as a bug');
  return { result, exitCode, sensitiveOutputs };
}

/** An op's error whose reason only a command outside a Job has is a bug of the op: reported as the internal error it is. */
function reportable(error: RunnerError): RunnerError<ErrorReason & ResultReason> {
  if (isResultReason(error.reason)) return error as RunnerError<ErrorReason & ResultReason>;
  return new RunnerError({
    kind: 'internal',
    reason: 'InternalError',
    step: error.step,
    message: `internal error: ${error.reason}: ${error.message}`,
    cause: error,
  });
}

/** Hands the finished result to the local sinks: result file, Markdown summary, termination message, summary. Returns what was published. */
export async function publishResult(ctx: RunContext, result: Result, exitCode: number): Promise<Result> {
  let published = result;
  let resultFile: string | undefined;
  try {
    if (ctx.writesResultFile) resultFile = await writeResultFile(ctx.settings.out, published, ctx.masker);
  } catch (error) {
    const e = error as RunnerError;
    ctx.log.error({ kind: e.kind, reason: e.reason }, e.message);
    // A run that did its job but could not say so is a failure: the controller cannot read it.
    if (exitCode === EXIT.succeeded || exitCode === EXIT.driftFound)
      published = { ...published, exitCode: EXIT.failed, warnings: [...published.warnings, e.message] };
  }
  const summaryProblem = await ctx.summaryMd?.append(
    opSummaryMarkdown(published, ctx.masker, { resultFile, argv: process.argv.slice(2) }),
  );
  if (summaryProblem) {
    // The outcome and the exit code stay: the result file gets the warning too.
    ctx.log.warn(summaryProblem);
    published = { ...published, warnings: [...published.warnings, summaryProblem] };
    if (resultFile)
      await writeResultFile(ctx.settings.out, published, ctx.masker).catch((error: Error) =>
        ctx.log.error(`could not add the warning to the result file: ${error.message}`),
      );
  }
  // Written second, so it carries the exit code the process really ends with.
  const termination = await writeTerminationMessage(ctx.settings.terminationLog, published, ctx.masker);
  if (!termination)
    ctx.log.debug({ path: ctx.settings.terminationLog }, 'termination message not written (path not writable)');
  // Not awaited: a stalled stdout must not hold back the cluster sinks (node flushes it before exiting).
  // Masked as terraform's text is, line by line: its op, outcome and reason too (the result keeps those).
  const summary = humanSummary(warnedOfSecretWords(ctx.masker, published), {
    argv: process.argv.slice(2).map((arg) => ctx.masker.mask(arg)),
    mask: (text) => maskValue(ctx.masker, text),
  });
  void writeWithBackpressure(process.stdout, summary);
  ctx.log.info({ outcome: published.outcome, reason: published.reason, exitCode: published.exitCode }, 'run finished');
  return published;
}

/**
 * What went wrong after the local sinks were written (the API calls of the cluster sinks), added to
 * the result file and the termination message as warnings. Outcome and exit code stay.
 */
export async function recordLateWarnings(ctx: RunContext, published: Result, warnings: string[]): Promise<void> {
  const result = { ...published, warnings: [...published.warnings, ...warnings] };
  if (ctx.writesResultFile)
    await writeResultFile(ctx.settings.out, result, ctx.masker).catch((error: Error) =>
      ctx.log.error(`could not add the warnings to the result file: ${error.message}`),
    );
  await writeTerminationMessage(ctx.settings.terminationLog, result, ctx.masker);
}
