// The command line: commander definitions only. Parsed, it is an Invocation main.ts runs (raw flags);
// the settings' flags, help and defaults come from schemas/setting-options.ts.
import { Command, Option } from 'commander';
import { OBJECT_KINDS } from './object-kind.ts';
import {
  HASH_SETTINGS,
  OP_REPORT_FLAGS,
  OP_SETTINGS,
  REPORT_FLAGS,
  SETTING_OPTIONS,
  flagName,
  settingHelp,
  type SettingOption,
} from './schemas/setting-options.ts';
import type { Op } from './schemas/result.ts';
import { VERSION_TEXT } from './version.ts';
import { EXIT_MEANINGS } from './run/exit-codes.ts';
import { registerLocalCommands } from './local/commands.ts';

/** What a command line asks main.ts to run, as commander parsed it (raw flags: each command reads its own). */
export type Invocation =
  | { command: 'op'; op: Op; flags: Record<string, unknown> }
  | { command: 'classify'; file: string; flags: ClassifyFlags }
  | { command: 'hash'; flags: Record<string, unknown> }
  | { command: 'contract check'; flags: Record<string, unknown> };

export interface ClassifyFlags {
  json?: boolean;
  limit?: string;
  summaryMd?: string;
  detailedExitcode?: boolean;
  policy?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The flags of these settings (or reporting flags), with their help and defaults from the one table (schemas/setting-options.ts). */
function settingOptions<T extends Record<string, SettingOption>>(
  command: Command,
  names: readonly (keyof T & string)[],
  table: T = SETTING_OPTIONS as unknown as T,
): Command {
  for (const name of names) {
    const option: SettingOption = table[name]!;
    const flags = option.value ? `${flagName(name)} ${option.value}` : flagName(name);
    if (option.repeatable) command.option(flags, settingHelp(option), collect);
    else command.option(flags, settingHelp(option));
  }
  return command;
}

/** The rules every command follows, after the program's help. */
const HELP_AFTER = `
Settings: each flag of an op may be given as its CAPTF_* variable instead (--approved-hash: CAPTF_APPROVED_HASH);
a flag beats its CAPTF_* variable, and an op ignores the CAPTF_* variables of settings it does not take.

Exit codes:
${EXIT_MEANINGS.map(([code, meaning]) => `  ${code.padEnd(9)} ${meaning}`).join('\n')}`;

/**
 * What `argv` asks for; undefined once commander has answered it itself (--help, --version) or a
 * `local` command has run (src/local/commands.ts). Throws commander's error for a refused command line.
 */
export async function parseCommandLine(argv: string[]): Promise<Invocation | undefined> {
  let invocation: Invocation | undefined;
  await buildCli((parsed) => {
    invocation = parsed;
  }).parseAsync(argv);
  return invocation;
}

/** The program; each of its actions hands `parsed` what it was asked (none by default: the definitions alone). */
export function buildCli(parsed: (invocation: Invocation) => void = () => {}): Command {
  const program = new Command('captf-runner')
    .description('Runs one CAPTF operation with terraform: a guarded apply, plan, refresh, drift, destroy or restore')
    .version(
      VERSION_TEXT,
      '-V, --version',
      'print the runner version and the contract version (with --json: and the terraform it finds)',
    )
    .addHelpText('after', HELP_AFTER)
    .exitOverride();

  // Each op takes its own settings only: a flag of another op is an unknown option (exit 2).
  // An op says a refused command line in its result and summary (with where its flags are listed): commander prints nothing of it.
  const op = (name: Op, description: string) =>
    settingOptions(
      settingOptions(program.command(name).description(description), OP_SETTINGS[name]),
      OP_REPORT_FLAGS[name],
      REPORT_FLAGS,
    )
      .configureOutput({ outputError: () => {} })
      .action((flags: Record<string, unknown>) => parsed({ command: 'op', op: name, flags }));

  op('apply', 'init, validate, plan, show, classify; apply the saved plan unless it is destructive and not approved');
  op('plan', 'plan for manual approval: a plan artifact and its plan hash, nothing applied');
  op('refresh', 'a refresh-only plan, classified, applied as saved, then the outputs');
  op('drift', 'a plan against the inputs, nothing applied: what changed outside terraform');
  op('destroy', 'destroy everything the state holds (never gated)');
  op('restore', 'push a state backup back to the backend');
  op('unlock', 'force-unlock the state, only while the lock still carries this id');

  settingOptions(
    program
      .command('classify')
      .description('classify a terraform show -json plan document')
      .argument('<file>', 'the plan JSON (- for stdin)')
      .option('--json', 'print the classification as JSON')
      .option('--limit <n>', 'how many destructive entries to list (default 100)')
      .option(
        '--policy <dir>',
        'judge the plan by the policies in this dir too (default /captf/policy when it exists)',
      ),
    ['summaryMd', 'detailedExitcode'],
    REPORT_FLAGS,
  ).action((file: string, flags: ClassifyFlags) => parsed({ command: 'classify', file, flags }));

  settingOptions(
    program.command('hash').description('print the inputs hash and approval hash of an inputs dir'),
    HASH_SETTINGS,
  )
    .option('--json', 'print JSON')
    .action((flags: Record<string, unknown>) => parsed({ command: 'hash', flags }));

  const contract = program.command('contract').description('the image contract');
  contract
    .command('check')
    .description('check an image (run inside it) or a directory tree against the module contract')
    .option('--root <dir>', 'check a directory tree instead of this image (default /)')
    .option('--module <dir>', 'the module dir (default /captf/module under the root)')
    .option('--terraform <path>', 'terraform or OpenTofu binary')
    .option('--kind <kind>', OBJECT_KINDS.join(' | '))
    .option('--workdir <dir>', 'a writable dir for the check')
    .option('--policy <dir>', 'the policy dir (default /captf/policy under the root, when it exists)')
    .option('--json', 'print JSON')
    .action((flags: Record<string, unknown>) => parsed({ command: 'contract check', flags }));

  registerLocalCommands(program);
  program.addOption(new Option('--no-color', 'terraform output is never colored').hideHelp());
  pointAtHelp(program, 'captf-runner');
  return program;
}

/** A refused command line prints commander's one-line error and where the command's flags are listed, never the whole help (an op: neither, its summary says both). */
function pointAtHelp(command: Command, path: string): void {
  const isOp = path.split(' ').length === 2 && Object.hasOwn(OP_SETTINGS, command.name());
  command.showHelpAfterError(isOp ? false : `see ${path} --help`);
  for (const sub of command.commands) pointAtHelp(sub, `${path} ${sub.name()}`);
}
