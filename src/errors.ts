// Every failure the runner reports is a RunnerError: a reason for the controller (one of the closed
// vocabulary, src/vocabulary/reasons.ts, which gives its kind and exit code), the step it happened
// in and a message for people. src/run/exit-codes.ts reads the exit code from that table for every
// command; src/run/finish.ts turns an error into an op's result, and src/main.ts prints it for the
// other commands.
import { REASONS, type ErrorReason, type KindOf, type ReasonOfKind } from './vocabulary/reasons.ts';
import type { StepName } from './vocabulary/steps.ts';

export interface RunnerErrorOptions<R extends ErrorReason = ErrorReason> {
  /** The reason's own kind (src/vocabulary/reasons.ts): a kind that is not the reason's is a type error. */
  kind: KindOf<R>;
  reason: R;
  message: string;
  step?: StepName;
  cause?: unknown;
  /** Extra machine-readable detail that goes into result.error.detail. */
  detail?: Record<string, unknown>;
}

export class RunnerError<R extends ErrorReason = ErrorReason> extends Error {
  readonly kind: KindOf<R>;
  readonly reason: R;
  step: StepName | undefined;
  readonly detail: Record<string, unknown> | undefined;

  constructor(options: RunnerErrorOptions<R>) {
    super(options.message, { cause: options.cause });
    this.name = 'RunnerError';
    this.kind = options.kind;
    this.reason = options.reason;
    this.step = options.step;
    this.detail = options.detail;
  }
}

export const usageError = (
  reason: ReasonOfKind<'usage'>,
  message: string,
  detail?: Record<string, unknown>,
): RunnerError => new RunnerError({ kind: 'usage', reason, message, detail });

/** An error of a reason chosen at run time (another run's, say): its kind is the reason's own. */
export const errorOf = (reason: ErrorReason, message: string): RunnerError =>
  new RunnerError({ kind: REASONS[reason].kind as KindOf<ErrorReason>, reason, message });

export const imageError = (message: string, detail?: Record<string, unknown>) =>
  new RunnerError({ kind: 'image', reason: 'ImageInvalid', message, detail });

export function asRunnerError(error: unknown, step?: StepName): RunnerError {
  if (error instanceof RunnerError) {
    error.step ??= step;
    return error;
  }
  const message = error instanceof Error ? error.message : String(error);
  return new RunnerError({
    kind: 'internal',
    reason: 'InternalError',
    step,
    message: `internal error: ${message}`,
    cause: error,
  });
}

/**
 * The message of an error for a command without a result and without a masker (`classify`, `hash`,
 * `contract check`): they read plans, inputs and modules that hold secrets, so an error that is not
 * a RunnerError (its message is nobody's choice: it may quote what was read) is named by its class
 * and where it was thrown, never by its message.
 */
export function unmaskedMessage(error: RunnerError): string {
  if (error.kind !== 'internal' || error.cause === undefined || error.cause instanceof RunnerError)
    return error.message;
  const cause = error.cause;
  const name = cause instanceof Error ? cause.name : typeof cause;
  const where =
    cause instanceof Error
      ? cause.stack
          ?.split('\n')
          .find((line) => line.trimStart().startsWith('at '))
          ?.trim()
      : undefined;
  return `internal error (${name}${where ? ` ${where}` : ''}): a bug in the runner, please report it`;
}
