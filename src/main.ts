// The entrypoint: the only place that exits the process. It parses the command line and hands an
// op to run/op-main.ts, loaded only then: `--version`, `--help` and the other commands load
// commander and little else: every Job pays for what loads at start (BENCHMARKS.md, cold start).
import { CommanderError } from 'commander';
import { buildCli } from './cli.ts';
import type { Op } from './schemas/result.ts';
import { RunnerError, asRunnerError, usageError } from './errors.ts';
import { EXIT } from './run/exit-codes.ts';
import { tolerateClosedStdStreams } from './output/std-streams.ts';

let exitCode: number = EXIT.succeeded;

async function runOperation(op: Op, flags: Record<string, unknown>, usageProblem?: RunnerError): Promise<number> {
  const { runOp } = await import('./run/op-main.ts');
  return runOp(op, flags, usageProblem);
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
    op: async (op, flags) => {
      exitCode = await runOperation(op, flags);
    },
    classify: async (file, flags) => {
      const { classifyCommand } = await import('./commands/classify.ts');
      exitCode = await classifyCommand(file, flags);
    },
    hash: async (flags) => {
      const { hashCommand } = await import('./commands/hash.ts');
      exitCode = await hashCommand(flags);
    },
    contractCheck: async (flags) => {
      const { contractCheckCommand } = await import('./commands/contract-check/command.ts');
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
      const op = (await import('./schemas/result.ts')).Op.safeParse(argv[2]);
      if (op.success) return runOperation(op.data, flagValues(argv, ['out', 'termination-log']), usageError('UsageInvalid', `${error.message.replace(/^error: /, '')}: see captf-runner ${op.data} --help`));
      return EXIT.usage;
    }
    const e = asRunnerError(error);
    // An internal error's message may quote what the runner held (a secret among it), and nothing masks this line.
    process.stderr.write(e.kind === 'internal' ? `captf-runner: internal error (${(e.cause as Error | undefined)?.name ?? 'unknown'}): please report this as a bug\n` : `captf-runner: ${e.message}\n`);
    return e instanceof RunnerError && e.kind === 'usage' ? EXIT.usage : EXIT.failed;
  }
}

// `captf-runner classify - | head` as much as a log collector that died: never an uncaught EPIPE.
tolerateClosedStdStreams();
process.exitCode = await main(process.argv);
