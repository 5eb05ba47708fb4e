// What one run carries from step to step: settings, logger, masker, the record of each step so far,
// what the run learned (for the result: from each step's value, or kept as it was learned) and
// whether a stop was requested. Steps are sequential; once a stop is requested none starts.
import type { Settings } from '../schemas/config.ts';
import type { Notice, Op, Step } from '../schemas/result.ts';
import { RunnerError, asRunnerError } from '../errors.ts';
import type { Logger } from '../output/log.ts';
import type { Masker } from '../masking/mask.ts';
import type { SummaryMdFile } from '../output/summary-md-file.ts';
import { PROGRESS_INTERVAL_MS, ProgressWatch, progressMessage } from '../output/progress.ts';
import { StopHandle } from '../terraform/stop.ts';
import type { InCluster } from './in-cluster.ts';
import type { Learned } from './learned.ts';
import type { StepName } from '../vocabulary/steps.ts';

/** --summary-md FILE and --detailed-exitcode (contract.md §1: flags only). */
export interface Reporting {
  summaryMd?: string;
  detailedExitcode: boolean;
}

/** The reporting flags as commander gives them: read from the command line alone. */
export const reportingOf = (flags: Record<string, unknown>): Reporting => ({
  ...(typeof flags.summaryMd === 'string' ? { summaryMd: flags.summaryMd } : {}),
  detailedExitcode: flags.detailedExitcode === true,
});

/** What the command line says of the run beside its settings (defaults: a run of the settings alone). */
interface RunOptions {
  reporting?: Reporting;
  writesResultFile?: boolean;
  moduleOnCommandLine?: boolean;
  /** How often a long step logs its progress. */
  progressIntervalMs?: number;
}

export type StopCause = 'SIGTERM' | 'SIGINT' | 'deadline';

export interface StepOptions<T> {
  /** The exit code the step record names (terraform's). */
  exitCode?: (value: T) => number | undefined;
  /** What that exit code means, when it is no failure a person could read it as (plan's 2: changes present). */
  exitMeaning?: (value: T) => string | undefined;
  /** What the step's value tells the result. */
  learned?: (value: T) => Learned;
  /** What the step's start alone tells the result, whether it then succeeds or fails (a terraform that may change things started). */
  starting?: Learned;
  /** Damage control after a failure (saving the state terraform could not persist): it runs even after a stop request. */
  cleanup?: boolean;
}

export class RunContext {
  readonly #steps: Step[] = [];
  /** What the run learned, in the order it was learned: a later word over an earlier one's. */
  readonly #learned: Learned[] = [];
  readonly warnings: string[] = [];
  /** The warnings with a code (result.notices): each is in `warnings` too. */
  readonly notices: Notice[] = [];
  readonly startedAt = new Date();
  currentStep: StepName | undefined;
  stopCause: StopCause | undefined;
  /** The step that was running when the stop was requested: the one the result names (undefined between steps). */
  stoppedIn: StepName | undefined;
  /** Set in a cluster (a Job identity was given). */
  cluster: InCluster | undefined;
  /** Every terraform this run starts is registered here while it runs, so a stop request reaches it. */
  readonly terraformStop = new StopHandle();
  /** Told terraform's lines (printed or held): a long step logs its progress (output/progress.ts). */
  readonly progress: ProgressWatch;

  /** The flags that shape only how the run reports (never CAPTF_* variables): the op's result does not depend on them. */
  readonly reporting: Reporting;
  /** false for a command line commander refused that names no --out (nor CAPTF_OUT): a mistyped command leaves no result.json where it was typed. */
  readonly writesResultFile: boolean;
  /** The --summary-md FILE, opened before the op runs (undefined: not given, or refused). */
  summaryMd: SummaryMdFile | undefined;
  /** The module dir was given as --module (not CAPTF_MODULE, not the image's default): a missing one is a typo on the command line. */
  readonly moduleOnCommandLine: boolean;

  constructor(
    readonly op: Op,
    readonly settings: Settings,
    readonly log: Logger,
    readonly masker: Masker,
    {
      reporting = { detailedExitcode: false },
      writesResultFile = true,
      moduleOnCommandLine = false,
      progressIntervalMs = PROGRESS_INTERVAL_MS,
    }: RunOptions = {},
  ) {
    this.reporting = reporting;
    this.writesResultFile = writesResultFile;
    this.moduleOnCommandLine = moduleOnCommandLine;
    this.progress = new ProgressWatch(
      (p) =>
        log.info(
          { step: p.step, elapsedMs: p.elapsedMs, output: p.output, reported: p.reported },
          progressMessage(p, progressIntervalMs),
        ),
      progressIntervalMs,
    );
  }

  /** No new step starts from now on; a step that still finishes is the one the result names. */
  requestStop(cause: StopCause): void {
    this.stopCause = cause;
    this.stoppedIn = this.currentStep;
  }

  warn(message: string): void {
    this.warnings.push(message);
    this.log.warn(message);
  }

  /** A warning a machine may act on: in `warnings` and, with its code, in `notices`. */
  notice(notice: Notice): void {
    this.notices.push(notice);
    this.warn(notice.message);
  }

  /** The steps as the result lists them. */
  get steps(): Step[] {
    return [...this.#steps];
  }

  /**
   * Keeps what a step (or the op) learned, for the result, whatever comes next: a classified plan
   * that is then refused, the fate of errored.tfstate after a failed apply, an op's conclusion
   * before the steps that could still fail. The one way a failure's knowledge reaches the result:
   * never on the error object, which a catch may wrap in another.
   */
  keep(learned: Learned): void {
    this.#learned.push(learned);
  }

  /** What the run learned, a later word over an earlier one's. */
  learned(): Learned {
    return Object.assign({}, ...this.#learned);
  }

  /**
   * Runs one named step: refuses to start after a stop request (unless it is damage control after
   * a failure), records duration, status and what the step learned (from its start, its value, or
   * what its body kept before it failed), names the step in errors.
   */
  async step<T>(name: StepName, body: () => Promise<T>, options: StepOptions<T> = {}): Promise<T> {
    if (this.stopCause && !options.cleanup) {
      // The stop came between steps: the result names the step that would have started, recorded interrupted (error.step always names a recorded step).
      if (this.stoppedIn === undefined) {
        this.stoppedIn = name;
        this.#steps.push({ name, status: 'interrupted', startedAt: new Date().toISOString(), durationMs: 0 });
      }
      throw stopError(this.stopCause, this.stoppedIn, `the run was asked to stop before ${name} started`);
    }
    const started = new Date();
    this.currentStep = name;
    this.log.info({ step: name }, `${name}: started`);
    if (options.starting) this.keep(options.starting);
    const record = (status: Step['status'], exitCode?: number) => {
      const durationMs = Date.now() - started.getTime();
      this.#steps.push({
        name,
        status,
        startedAt: started.toISOString(),
        durationMs,
        ...(exitCode === undefined ? {} : { exitCode }),
      });
      return durationMs;
    };
    const giveUp = this.terraformStop.waitForGiveUp();
    const endProgress = this.progress.start(name);
    try {
      const value = await Promise.race([body(), giveUp.given]);
      const exitCode = options.exitCode?.(value);
      if (options.learned) this.keep(options.learned(value));
      const durationMs = record('ok', exitCode);
      const meaning = options.exitMeaning?.(value);
      this.log.info({ step: name, durationMs, exitCode }, `${name}: done${meaning ? ` (${meaning})` : ''}`);
      return value;
    } catch (caught) {
      const error =
        this.stopCause && !(caught instanceof RunnerError && caught.kind === 'usage')
          ? stopError(this.stopCause, name, asRunnerError(caught).message)
          : asRunnerError(caught, name);
      error.step = name; // the step as steps[] names it ('state before'), not the command ('state pull')
      const exitCode = typeof error.detail?.exitCode === 'number' ? error.detail.exitCode : undefined;
      const durationMs = record(error.kind === 'interrupted' ? 'interrupted' : 'failed', exitCode);
      this.log.error({ step: name, durationMs, kind: error.kind, reason: error.reason }, `${name}: ${error.message}`);
      throw error;
    } finally {
      endProgress();
      giveUp.done();
      this.currentStep = undefined;
    }
  }

  /** A step that did not run, recorded so a reader sees the whole sequence. */
  skip(name: StepName, why: string): void {
    this.#steps.push({ name, status: 'skipped', startedAt: new Date().toISOString(), durationMs: 0 });
    this.log.info({ step: name }, `${name}: skipped (${why})`);
  }
}

function stopError(cause: StopCause, step: StepName, detail: string): RunnerError {
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
