// The entrypoint: the only place that exits the process. It turns flags into settings, runs one
// op under signal and deadline handling, and hands the result to the sinks.
import { CommanderError } from 'commander';
import { buildCli } from './cli.ts';
import { loadSettings, durationMs, Settings, type Settings as SettingsT } from './contract/config.ts';
import { Op } from './contract/result.ts';
import { RunnerError, asRunnerError, usageError } from './errors.ts';
import { createLogger } from './output/log.ts';
import { Masker } from './output/mask.ts';
import { interruptTerraform } from './terraform/exec.ts';
import { RunContext, type StopCause } from './ops/context.ts';
import { finishRun, publishResult, type ResultFields, type OpEnding } from './ops/run.ts';
import { OPS } from './ops/index.ts';
import { EXIT } from './ops/exit-codes.ts';

let exitCode: number = EXIT.succeeded;

/** `usageProblem`: the command line itself was wrong (commander refused it); the result still says so. */
async function runOp(op: Op, flags: Record<string, unknown>, usageProblem?: RunnerError): Promise<void> {
  const masker = new Masker();
  let settings: SettingsT;
  let settingsError: unknown = usageProblem;
  try {
    if (usageProblem) throw usageProblem;
    settings = loadSettings(flags, process.env);
  } catch (error) {
    settingsError = error;
    // Still write a well-formed result: with the defaults, and --out as given if it can be read.
    settings = Settings.parse({ out: typeof flags.out === 'string' ? flags.out : process.env.CAPTF_OUT || '.', terminationLog: typeof flags.terminationLog === 'string' ? flags.terminationLog : process.env.CAPTF_TERMINATION_LOG || undefined });
  }
  const log = createLogger(settings.logFormat ?? (process.stderr.isTTY ? 'pretty' : 'json'), masker);
  const ctx = new RunContext(op, settings, log, masker);
  const stop = installStopHandlers(ctx);
  const fields: ResultFields = {};
  let ending: OpEnding | undefined;
  let caught: unknown = settingsError;
  if (!settingsError) {
    try {
      if (settings.jobName || settings.jobUid) ctx.cluster = (await import('./ops/kube.ts')).inClusterFrom(settings, log);
      const body = OPS[op];
      log.info({ op, kind: settings.kind, object: settings.object, namespace: settings.namespace }, `captf-runner ${op} starting`);
      ending = await body(ctx, fields);
    } catch (error) {
      caught = error;
    }
  }
  stop.dispose();
  const { result, exitCode: code } = await finishRun(ctx, fields, ending, caught);
  exitCode = await publishResult(ctx, result, code);
  await ctx.cluster?.publish(result, ctx.fullOutputs);
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
  const escalate = () => {
    stage++;
    if (stage === 1) {
      interruptTerraform('graceful');
      timers.push(setTimeout(escalate, graceMs).unref());
    } else if (stage === 2) {
      ctx.log.warn('terraform did not stop within the grace period: interrupting it again');
      interruptTerraform('immediate');
      timers.push(setTimeout(escalate, 5000).unref());
    } else {
      ctx.log.error('terraform still runs: killing its process group');
      interruptTerraform('kill');
    }
  };
  const requestStop = (cause: StopCause) => {
    if (ctx.stopCause) {
      ctx.log.warn({ cause }, 'second stop request: escalating at once');
      escalate();
      return;
    }
    ctx.stopCause = cause;
    ctx.log.warn({ cause, step: ctx.currentStep }, `stop requested (${cause}): no new step starts; terraform gets one interrupt`);
    escalate();
  };
  const onTerm = () => requestStop('SIGTERM');
  const onInt = () => requestStop('SIGINT');
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  if (ctx.settings.deadline) {
    // Stop early enough that terraform's graceful stop and the result fit before the deadline.
    const stopAt = Math.max(0, durationMs(ctx.settings.deadline) - graceMs - 5000);
    timers.push(setTimeout(() => requestStop('deadline'), stopAt).unref());
  }
  return {
    /** Ends the escalation timers. The handlers stay: a late signal must not kill the runner while it writes the result. */
    dispose() {
      for (const t of timers) clearTimeout(t);
    },
  };
}

/** The values of a few flags read straight from argv, for when commander refused the command line. */
function flagValues(argv: string[], names: string[]): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  for (const name of names) {
    const index = argv.indexOf(`--${name}`);
    const inline = argv.find((a) => a.startsWith(`--${name}=`));
    const value = inline ? inline.slice(name.length + 3) : index >= 0 ? argv[index + 1] : undefined;
    if (value !== undefined) flags[name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())] = value;
  }
  return flags;
}

async function main(argv: string[]): Promise<number> {
  const cli = buildCli({
    op: runOp,
    classify: async (file, flags) => {
      const { classifyCommand } = await import('./ops/classify.ts');
      exitCode = await classifyCommand(file, flags);
    },
    hash: async (flags) => {
      const { hashCommand } = await import('./ops/hash.ts');
      exitCode = await hashCommand(flags);
    },
    contractCheck: async (flags) => {
      const { contractCheckCommand } = await import('./ops/contract-check.ts');
      exitCode = await contractCheckCommand(flags);
    },
  });
  try {
    await cli.parseAsync(argv);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT.succeeded;
      // commander already printed what was wrong; an op still leaves a well-formed result.
      const op = Op.safeParse(argv[2]);
      if (op.success) {
        await runOp(op.data, flagValues(argv, ['out', 'termination-log']), usageError('UsageInvalid', `${error.message.replace(/^error: /, '')}: see captf-runner ${op.data} --help`));
        return exitCode;
      }
      return EXIT.usage;
    }
    const e = asRunnerError(error);
    process.stderr.write(`captf-runner: ${e.message}\n`);
    return e instanceof RunnerError && e.kind === 'usage' ? EXIT.usage : EXIT.failed;
  }
}

process.exitCode = await main(process.argv);
