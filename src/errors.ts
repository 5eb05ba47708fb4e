// Every failure the runner reports is a RunnerError: a kind (what class of problem), the step it
// happened in, a reason for the controller and a message for people. Their exit codes are in
// src/run/exit-codes.ts, for every command; src/run/finish.ts turns them into an op's result, and
// src/main.ts prints them for the other commands.

export type ErrorKind =
  | 'usage' //       bad flags, environment or inputs: the caller must fix them (exit 2)
  | 'image' //       the image or module breaks the contract (exit 4)
  | 'terraform' //   terraform ran and failed
  | 'plan' //        the plan is unusable (errored, unparseable, stale)
  | 'blocked' //     a destructive plan without the matching approval (exit 3)
  | 'lock' //        the state lock is held by someone else
  | 'artifact' //    a plan artifact or backup is missing, corrupt or does not match
  | 'state' //       the state could not be read, backed up or restored
  | 'io' //          the runner could not read or write its own files
  | 'kube' //        the Kubernetes API refused or failed
  | 'interrupted' // a signal or the deadline stopped the run
  | 'internal'; //   a bug in the runner

export interface RunnerErrorOptions {
  kind: ErrorKind;
  reason: string;
  message: string;
  step?: string;
  cause?: unknown;
  /** Extra machine-readable detail that goes into result.error.detail. */
  detail?: Record<string, unknown>;
}

export class RunnerError extends Error {
  readonly kind: ErrorKind;
  readonly reason: string;
  step: string | undefined;
  readonly detail: Record<string, unknown> | undefined;

  constructor(options: RunnerErrorOptions) {
    super(options.message, { cause: options.cause });
    this.name = 'RunnerError';
    this.kind = options.kind;
    this.reason = options.reason;
    this.step = options.step;
    this.detail = options.detail;
  }
}

export const usageError = (reason: string, message: string, detail?: Record<string, unknown>) =>
  new RunnerError({ kind: 'usage', reason, message, detail });

export const imageError = (message: string, detail?: Record<string, unknown>) =>
  new RunnerError({ kind: 'image', reason: 'ImageInvalid', message, detail });

export function asRunnerError(error: unknown, step?: string): RunnerError {
  if (error instanceof RunnerError) {
    error.step ??= step;
    return error;
  }
  const message = error instanceof Error ? error.message : String(error);
  return new RunnerError({ kind: 'internal', reason: 'InternalError', step, message: `internal error: ${message}`, cause: error });
}

/**
 * The message of an error for a command without a result and without a masker (`classify`, `hash`,
 * `contract check`): they read plans, inputs and modules that hold secrets, so an error that is not
 * a RunnerError (its message is nobody's choice: it may quote what was read) is named by its class
 * and where it was thrown, never by its message.
 */
export function unmaskedMessage(error: RunnerError): string {
  if (error.kind !== 'internal' || error.cause === undefined || error.cause instanceof RunnerError) return error.message;
  const cause = error.cause;
  const name = cause instanceof Error ? cause.name : typeof cause;
  const where = cause instanceof Error ? cause.stack?.split('\n').find((line) => line.trimStart().startsWith('at '))?.trim() : undefined;
  return `internal error (${name}${where ? ` ${where}` : ''}): a bug in the runner, please report it`;
}
