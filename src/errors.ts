// Every failure the runner reports is a RunnerError: a kind (what class of problem), the step it
// happened in, a reason for the controller and a message for people. src/run/finish.ts is the one
// place that turns them into results and exit codes.

export type ErrorKind =
  | 'usage' //       bad flags, environment or inputs: the caller must fix them (exit 2)
  | 'image' //       the image or module breaks the contract (exit 4)
  | 'terraform' //   terraform ran and failed
  | 'plan' //        the plan is unusable (errored, unparseable, stale)
  | 'blocked' //     a destructive plan without the matching approval (exit 3)
  | 'policy' //      a policy rule or limit denies the plan: no approval can pass it (exit 4)
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
