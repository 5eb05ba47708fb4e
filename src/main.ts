// The entrypoint: the only place that exits the process. It parses the command line and hands an
// op to op-main.ts, loaded only then: `--version`, `--help` and the other commands load
// commander and little else: every Job pays for what loads at start (BENCHMARKS.md, cold start).
import { CommanderError } from 'commander';
import { resolve } from 'node:path';
import { startupSnapshot } from 'node:v8';
import { type Invocation, parseCommandLine } from './cli.ts';
import type { Op } from './schemas/result.ts';
import { RunnerError, asRunnerError, unmaskedMessage, usageError } from './errors.ts';
import { exitCodeOfError } from './run/exit-codes.ts';
import { EXIT } from './vocabulary/reasons.ts';
import { tolerateClosedStdStreams } from './output/std-streams.ts';

async function runOperation(op: Op, flags: Record<string, unknown>, usageProblem?: RunnerError): Promise<number> {
  const { runOp } = await import('./op-main.ts');
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

/** terraform's own flags for variables, which an op does not take: `-var x=1`, `-var-file=f`, `--var-file f`. */
const isTerraformVariableFlag = (arg: string) => /^--?var(?:-file)?(?:=|$)/.test(arg);

/** What commander said was wrong with an op's command line, or, for terraform's variable flags, where variables go instead. */
async function opUsageMessage(op: Op, argv: string[], said: string): Promise<string> {
  if (!argv.slice(3).some(isTerraformVariableFlag)) return `${said}: see captf-runner ${op} --help`;
  const { SENSITIVE_TFVARS_FILE, TFVARS_FILE } = await import('./inputs/snapshot.ts');
  return `captf-runner ${op} takes no -var or -var-file: put the variables in ${TFVARS_FILE} of the --inputs dir (${SENSITIVE_TFVARS_FILE} for a secret)`;
}

/** commander's message on one line: its suggestion (`\n(Did you mean --module?)`) follows the error after a space. */
const oneLine = (said: string) => said.replace(/\s*\n\s*/g, ' ');

/** `--version --json` (either order): the one form of --version that looks for terraform, loaded only then. */
const isVersionJson = (args: string[]) =>
  args.length === 2 && args.includes('--json') && (args.includes('--version') || args.includes('-V'));

async function main(argv: string[]): Promise<number> {
  if (isVersionJson(argv.slice(2))) {
    await (await import('./commands/version.ts')).versionJsonCommand();
    return EXIT.succeeded;
  }
  // The commands without a result (`classify`, `hash`, `contract check`) end or throw; an op's
  // error is in its result (run/finish.ts) and its exit code comes back from runOp.
  let command = '';
  try {
    const invocation = await parseCommandLine(argv);
    if (invocation === undefined) return EXIT.succeeded;
    if (invocation.command !== 'op') command = invocation.command;
    return await runInvocation(invocation);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.succeeded;
      // No command at all (or `contract` without `check`): commander printed the usage on stderr, as an error.
      if (error.code === 'commander.help') return error.exitCode === 0 ? EXIT.succeeded : EXIT.usage;
      // commander already printed what was wrong; an op still leaves a well-formed result.
      const op = (await import('./schemas/result.ts')).Op.safeParse(argv[2]);
      if (op.success)
        return runOperation(
          op.data,
          flagValues(argv, ['out', 'termination-log']),
          usageError(
            'UsageInvalid',
            await opUsageMessage(op.data, argv, oneLine(error.message.replace(/^error: /, ''))),
          ),
        );
      return EXIT.usage;
    }
    // The one exit funnel of every command without a result, by the table an op's result uses.
    const e = asRunnerError(error);
    process.stderr.write(`captf-runner${command ? ` ${command}` : ''}: ${unmaskedMessage(e)}\n`);
    return exitCodeOfError(e);
  }
}

/** Runs what the command line asked for: its exit code. */
async function runInvocation(invocation: Invocation): Promise<number> {
  switch (invocation.command) {
    case 'op':
      return runOperation(invocation.op, invocation.flags);
    case 'classify':
      return (await import('./commands/classify.ts')).classifyCommand(invocation.file, invocation.flags);
    case 'hash':
      await (await import('./commands/hash.ts')).hashCommand(invocation.flags);
      return EXIT.succeeded;
    case 'contract check':
      await (await import('./commands/contract-check/command.ts')).contractCheckCommand(invocation.flags);
      return EXIT.succeeded;
  }
}

/**
 * The run of the process, from whichever start: the bundle run by node, or the heap node restores
 * from the image's startup snapshot (src/startup-snapshot.ts), where it is the deserialized main.
 */
async function run(): Promise<void> {
  // `captf-runner classify - | head` as much as a log collector that died: never an uncaught EPIPE.
  tolerateClosedStdStreams();
  process.exitCode = await main(process.argv);
  // The result is written; exit now rather than when the event loop drains. A step the run gave up on
  // (RunContext.step) must not keep the process alive, and a signal that lands while node closes its
  // handles would end the process by that signal instead of with the exit code the result names. Every
  // byte is out already: the log writer is synchronous, and so are stdout and stderr on Linux.
  process.exit();
}

// While a startup snapshot is built, nothing runs: the run starts when node restores the heap, with
// that run's command line, environment and stdio. No top-level await: the snapshot's bundle is CommonJS.
// node makes a script's path absolute in process.argv[1], but gives a snapshot's main the bundle's path
// as it was typed: made absolute here as node makes it, so what the run finds beside the bundle (the
// snapshot's lib/ bundles, the terraform record, the runner `local` starts) is found from any directory.
if (startupSnapshot.isBuildingSnapshot())
  startupSnapshot.setDeserializeMainFunction(() => {
    if (process.argv[1]) process.argv[1] = resolve(process.argv[1]);
    void run();
  });
else void run();
