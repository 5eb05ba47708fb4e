// What one run carries from step to step: settings, logger, masker, the steps so far and whether
// a stop was requested. Steps are sequential; once a stop is requested none starts.
import type { Settings } from '../schemas/config.ts';
import type { Op, Step } from '../schemas/result.ts';
import { RunnerError, asRunnerError } from '../errors.ts';
import type { Logger } from '../output/log.ts';
import type { Masker } from '../output/mask.ts';
import type { OutputValue } from '../schemas/result.ts';
import { StopHandle } from '../terraform/stop.ts';
import type { InCluster } from './in-cluster.ts';

export type StopCause = 'SIGTERM' | 'SIGINT' | 'deadline';

export class RunContext {
  readonly steps: Step[] = [];
  readonly warnings: string[] = [];
  readonly startedAt = new Date();
  currentStep: string | undefined;
  stopCause: StopCause | undefined;
  /** The step that was running when the stop was requested: the one the result names (undefined between steps). */
  stoppedIn: string | undefined;
  /** Set once terraform apply (or state push) started: infrastructure or state may have changed. */
  mutationStarted = false;
  /** The sensitive outputs with their values: only the result Secret may hold them. */
  sensitiveOutputs: Record<string, OutputValue> | undefined;
  /** Set in a cluster (a Job identity was given). */
  cluster: InCluster | undefined;
  /** Every terraform this run starts is registered here while it runs, so a stop request reaches it. */
  readonly terraformStop = new StopHandle();

  constructor(
    readonly op: Op,
    readonly settings: Settings,
    readonly log: Logger,
    readonly masker: Masker,
  ) {}

  /** No new step starts from now on; a step that still finishes is the one the result names. */
  requestStop(cause: StopCause): void {
    this.stopCause = cause;
    this.stoppedIn = this.currentStep;
  }

  warn(message: string): void {
    this.warnings.push(message);
    this.log.warn(message);
  }

  /**
   * Runs one named step: refuses to start after a stop request (unless it is damage control after
   * a failure, such as saving the state terraform could not persist), records duration and status,
   * names the step in errors.
   */
  async step<T>(name: string, body: () => Promise<T>, exitCodeOf?: (value: T) => number | undefined, options: { cleanup?: boolean } = {}): Promise<T> {
    if (this.stopCause && !options.cleanup) throw stopError(this.stopCause, this.stoppedIn ?? name, `the run was asked to stop before ${name} started`);
    const started = new Date();
    this.currentStep = name;
    this.log.info({ step: name }, `${name}: started`);
    const record = (status: Step['status'], exitCode?: number) => {
      const durationMs = Date.now() - started.getTime();
      this.steps.push({ name, status, startedAt: started.toISOString(), durationMs, ...(exitCode === undefined ? {} : { exitCode }) });
      return durationMs;
    };
    const giveUp = this.terraformStop.waitForGiveUp();
    try {
      const value = await Promise.race([body(), giveUp.given]);
      const exitCode = exitCodeOf?.(value);
      const durationMs = record('ok', exitCode);
      this.log.info({ step: name, durationMs, exitCode }, `${name}: done`);
      return value;
    } catch (caught) {
      const error = this.stopCause && !(caught instanceof RunnerError && caught.kind === 'usage') ? stopError(this.stopCause, name, asRunnerError(caught).message) : asRunnerError(caught, name);
      error.step = name; // the step as steps[] names it ('state before'), not the command ('state pull')
      const exitCode = typeof error.detail?.exitCode === 'number' ? error.detail.exitCode : undefined;
      const durationMs = record(error.kind === 'interrupted' ? 'interrupted' : 'failed', exitCode);
      this.log.error({ step: name, durationMs, kind: error.kind, reason: error.reason }, `${name}: ${error.message}`);
      throw error;
    } finally {
      giveUp.done();
      this.currentStep = undefined;
    }
  }

  /** A step that did not run, recorded so a reader sees the whole sequence. */
  skip(name: string, why: string): void {
    this.steps.push({ name, status: 'skipped', startedAt: new Date().toISOString(), durationMs: 0 });
    this.log.info({ step: name }, `${name}: skipped (${why})`);
  }
}

export function stopError(cause: StopCause, step: string, detail: string): RunnerError {
  const deadline = cause === 'deadline';
  return new RunnerError({
    kind: 'interrupted',
    reason: deadline ? 'JobDeadlineExceeded' : 'Interrupted',
    step,
    message: deadline
      ? `the run stopped itself before the Job's deadline, during ${step}: ${detail}`
      : `the run was interrupted by ${cause} during ${step}: ${detail}`,
    detail: { cause },
  });
}
