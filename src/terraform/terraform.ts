// The driver's one way in: createTerraform makes the handle every command runs through (the binary,
// the working directory, the environment rules, where terraform's human output goes and the run's
// stop handle). Every command's exit is read here, in one place, and a failure becomes the error
// its stderr explains (diagnostics.ts).
import { RunnerError, type RunnerErrorOptions } from '../errors.ts';
import type { Masker } from '../masking/mask.ts';
import type { ReasonOfKind } from '../vocabulary/reasons.ts';
import { diagnose, type Diagnosis, type PrintedDiagnostic } from './diagnostics.ts';
import {
  diagnosticPlace,
  errorsOf,
  recurringFailure,
  reportedDiagnostic,
  reportedDiagnostics,
  type DiagnosticPlace,
} from './known-diagnostics.ts';
import { runTerraform, type OutputSink, type RunOptions, type RunResult } from './exec.ts';
import type { StopHandle } from './stop.ts';

/** Where terraform's human output goes: its lines (each without its newline, a batch per read of its pipe) with the command that printed them. A returned promise is backpressure. */
export interface TerraformOutput {
  /**
   * `keep`, when given, is handed the text as it is printed (masked: the plan's text kept for the summary,
   * masked once); `step`, the step terraform printed the lines in, when they are printed after it (kept back).
   */
  lines(
    stream: 'stdout' | 'stderr',
    texts: readonly string[],
    command: Command,
    keep?: (printed: string) => void,
    step?: string,
  ): void | Promise<void>;
  /** The command's stream ended (a sink may hold a line back until it knows what follows). */
  end?(
    stream: 'stdout' | 'stderr',
    command: Command,
    keep?: (printed: string) => void,
    step?: string,
  ): void | Promise<void>;
}

export interface TerraformOptions {
  /** The binary, as an absolute path (terraformVersion finds it). */
  path: string;
  /** terraform's working directory: the root module. */
  cwd: string;
  /** The runner's environment; terraform gets it without what would change terraform behind the runner's back (exec.ts). */
  env?: NodeJS.ProcessEnv;
  /** Where terraform's human output goes. */
  output: TerraformOutput;
  /** The run's stop handle: every terraform this handle starts is interrupted through it. */
  stop: StopHandle;
  /** The run's masker, for the tail of stderr and terraform's diagnostics before they are cut to their bounds (none: nothing is secret). */
  masker?: Pick<Masker, 'mask' | 'secretRanges'>;
}

/** The commands the runner runs, named as steps in results and logs. */
export type Command =
  | 'version'
  | 'init'
  | 'validate'
  | 'plan'
  | 'show'
  | 'apply'
  | 'state pull'
  | 'state push'
  | 'state rm'
  | 'force-unlock';

/** How an exit code reads for a command. Only `plan -detailed-exitcode` gives 2 a meaning. */
export type ExitMeaning = 'ok' | 'changes' | 'error';

export function interpretExit(command: Command, exitCode: number, detailedExitCode = false): ExitMeaning {
  if (exitCode === 0) return 'ok';
  if (command === 'plan' && detailedExitCode && exitCode === 2) return 'changes';
  return 'error';
}

/** One finished command: what terraform did, and what its exit means (interpretExit). */
export interface CommandRun<T = unknown> extends RunResult<T> {
  command: Command;
  meaning: ExitMeaning;
  /** Where it ran, to report its diagnostics. */
  place: DiagnosticPlace;
  /** The run's stop handle had killed a process group when it ended: a SIGKILL came from the runner. */
  killedByStop: boolean;
}

export type RunExtras = Pick<
  RunOptions,
  'consumeStdout' | 'captureStdout' | 'captureStdoutBytes' | 'passFds' | 'onStart' | 'beforeTail'
>;

/** A terraform to run commands with: made by createTerraform only. The command files of src/terraform run it; callers use those. */
export interface Terraform {
  readonly path: string;
  readonly cwd: string;
  readonly output: TerraformOutput;
  /** The same terraform, its human output going to `output` instead (a held plan text, a quiet probe). */
  withOutput(output: TerraformOutput): Terraform;
  /** Runs one command to its end; its exit is interpreted, never thrown (see `failure`). */
  run<T = unknown>(command: Command, args: readonly string[], extra?: RunExtras): Promise<CommandRun<T>>;
}

export function createTerraform(options: TerraformOptions): Terraform {
  const { path, cwd, output, stop, masker } = options;
  const mask = masker && ((text: string) => masker.mask(text));
  const env = options.env ?? process.env;
  return {
    path,
    cwd,
    output,
    withOutput: (other) => createTerraform({ ...options, output: other }),
    async run<T>(command: Command, args: readonly string[], extra: RunExtras = {}): Promise<CommandRun<T>> {
      let result: RunResult<T>;
      try {
        const lines: OutputSink = {
          lines: (stream, texts) => output.lines(stream, texts, command),
          end: (stream) => output.end?.(stream, command),
        };
        result = await runTerraform<T>({ terraformPath: path, cwd, env, output: lines, stop, args, masker, ...extra });
      } catch (error) {
        if (error instanceof RunnerError) throw error;
        const code = (error as NodeJS.ErrnoException).code;
        throw new RunnerError({
          kind: code === 'ENOENT' || code === 'EACCES' ? 'image' : 'terraform',
          reason: code === 'ENOENT' || code === 'EACCES' ? 'ImageInvalid' : 'TerraformFailed',
          message: `could not run ${path} ${command}: ${(error as Error).message}`,
          cause: error,
        });
      }
      return {
        ...result,
        command,
        place: placeOf(cwd, args, mask),
        killedByStop: stop.killed,
        meaning: interpretExit(command, result.exitCode, args.includes('-detailed-exitcode')),
      };
    },
  };
}

/**
 * A saved plan as terraform gets it: a path, or a file the runner holds open, passed to terraform as
 * its descriptor 3 and named `/dev/fd/3` (terraform 1.11 shows and applies a plan read that way), so
 * terraform reads the very file the runner hashed.
 */
export type PlanFileRef = string | { readonly fd: number };

const PASSED_PLAN_FD = 3;

/** The plan argument and the descriptors terraform must inherit for it. */
export function planFileArgument(plan: PlanFileRef): { arg: string; passFds: number[] } {
  return typeof plan === 'string'
    ? { arg: plan, passFds: [] }
    : { arg: `/dev/fd/${PASSED_PLAN_FD}`, passFds: [plan.fd] };
}

/** What a signal that ends terraform usually means: SIGKILL is never terraform's own end. */
const KILLED_BY: Record<string, string> = {
  SIGKILL: " (from outside terraform: a container's memory limit, OOMKilled, is the usual cause)",
};

/** The reason a failed command gets when its diagnostics do not say more (InitFailed, ApplyFailed, …). */
export type CommandFailure = ReasonOfKind<'terraform'>;

/**
 * A command that failed, with what its stderr says (diagnostics.ts). A lock held elsewhere is kind
 * `lock`, so the controller can tell; errors that are all on the list of known-diagnostics.ts are
 * ImageInvalid or InputsInvalid (a retry fails the same way); any other failure is `reason`.
 */
export class TerraformFailed extends RunnerError {
  readonly command: Command;
  readonly exitCode: number;
  /** Set when terraform died by a signal. */
  readonly signal: string | undefined;
  readonly diagnosis: Diagnosis;

  constructor(run: CommandRun, reason: CommandFailure, diagnosis: Diagnosis) {
    const { command } = run;
    const lock = diagnosis.problem.kind === 'stateLocked' ? diagnosis.problem.lock : undefined;
    if (lock) {
      super({
        kind: 'lock',
        reason: 'StateLocked',
        message: `terraform ${command} could not acquire the state lock: ${
          lock.holderKnown
            ? `held by ${lock.who ?? 'unknown'} (lock id ${lock.id ?? 'unknown'}, since ${lock.created ?? 'unknown'}). Wait for the other run to finish, or if its owner is gone, unlock it: captf-runner unlock --lock-id ${lock.id}`
            : "the backend does not say who holds it, and names no lock id to unlock. Wait for the other run to finish (a pg backend's advisory lock ends with the holder's database session: if the holder is gone and its session is not, end that session, pg_terminate_backend)"
        }.`,
        detail: { lock },
      });
    } else {
      const how = run.signal
        ? `was killed by ${run.signal}${run.killedByStop ? " (the run's stop)" : (KILLED_BY[run.signal] ?? '')}`
        : `exited ${run.exitCode}`;
      // Killed, its last line is wherever it was cut off (a warning's frame): only an error it printed says something.
      const said = diagnosis.summary ?? (run.signal ? undefined : diagnosis.lastLine);
      super(
        diagnosedError(command, diagnosis.diagnostics, run.stderrComplete && !run.signal, run.place, {
          reason,
          message: `terraform ${command} ${how}${said ? `: ${said}` : ''}`,
          detail: { exitCode: run.exitCode, ...(run.signal ? { signal: run.signal } : {}) },
        }),
      );
    }
    this.name = 'TerraformFailed';
    this.command = command;
    this.exitCode = run.exitCode;
    this.signal = run.signal;
    this.diagnosis = diagnosis;
  }
}

/**
 * The error of a command that failed with these diagnostics: ImageInvalid (exit 4) or InputsInvalid
 * (exit 2) when all its errors are known to recur (`complete`: all of them were read), its message
 * naming where the first one points (`main.tf:4`) and the fix; else `otherwise`, kind terraform.
 * Either way error.detail.diagnostics says where terraform points.
 */
export function diagnosedError(
  command: Command,
  diagnostics: readonly PrintedDiagnostic[],
  complete: boolean,
  place: DiagnosticPlace,
  otherwise: { reason: CommandFailure; message: string; detail?: Record<string, unknown> },
): RunnerErrorOptions {
  const reported = diagnostics.length ? reportedDiagnostics(diagnostics, place) : {};
  const detail = { ...otherwise.detail, ...reported };
  const recurring =
    command === 'init' || command === 'validate' || command === 'plan'
      ? recurringFailure(command, diagnostics, complete, place.root)
      : undefined;
  if (!recurring) return { kind: 'terraform', reason: otherwise.reason, message: otherwise.message, detail };
  const first = reportedDiagnostic(recurring.first, place);
  const where = diagnosticPlace(first);
  const said = (recurring.advice ? first.detail?.replace(recurring.advice, '') : first.detail)
    ?.split('\n\n')[0]
    ?.replace(/([^.?!])$/, '$1.');
  const more = errorsOf(diagnostics).length - 1;
  return {
    kind: recurring.means === 'image' ? 'image' : 'usage',
    reason: recurring.means === 'image' ? 'ImageInvalid' : 'InputsInvalid',
    message: `terraform ${command} refused the ${recurring.means === 'image' ? 'module' : 'inputs'}: ${where ? `${where}: ` : ''}${first.summary}${said ? `: ${said}` : '.'}${more > 0 ? ` (And ${more} more error${more > 1 ? 's' : ''}: error.detail.diagnostics.)` : ''} ${recurring.fix}.`,
    detail,
  };
}

/** Where a command runs, for its diagnostics: its -var-file arguments are the runner's copies of the inputs files. */
export const placeOf = (cwd: string, args: readonly string[], mask?: (text: string) => string): DiagnosticPlace => ({
  root: cwd,
  varFiles: args.filter((arg) => arg.startsWith('-var-file=')).map((arg) => arg.slice('-var-file='.length)),
  ...(mask ? { mask } : {}),
});

/** The failure of a run whose exit means an error; `reason` names it for the controller (InitFailed, ApplyFailed, …). */
export function failure(run: CommandRun, reason: CommandFailure): TerraformFailed {
  return new TerraformFailed(run, reason, diagnose(run.stderrTail, { complete: run.stderrComplete }));
}

/** The run, when its exit means success (or changes); its failure thrown otherwise. */
export function succeeded<T>(run: CommandRun<T>, reason: CommandFailure): CommandRun<T> {
  if (run.meaning === 'error') throw failure(run, reason);
  return run;
}
