// The command line: commander definitions only. Each op action hands raw flags to main's runner.
import { Command, Option } from 'commander';
import { OBJECT_KINDS } from './object-kind.ts';
import { DEFAULT_CHUNK_BYTES, DEFAULT_MAX_ARTIFACT_BYTES } from './store/limits.ts';
import type { Op } from './schemas/result.ts';
import { RUNNER_VERSION } from './version.ts';
import { registerLocalCommands } from './local/commands.ts';

export interface CliHandlers {
  op(op: Op, flags: Record<string, unknown>): Promise<void>;
  classify(file: string, flags: { json?: boolean; limit?: string; policy?: string }): Promise<void>;
  hash(flags: Record<string, unknown>): Promise<void>;
  contractCheck(flags: Record<string, unknown>): Promise<void>;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** OpenTofu state encryption: the ops that keep copies of the state take this (see contract.md). */
const plaintextBackups = (command: Command) => command.option('--allow-plaintext-backups', 'OpenTofu state encryption: accept backups and plan artifacts in clear');

/** Settings every op takes; each also reads CAPTF_<NAME> (see contract.md). */
function commonOptions(command: Command): Command {
  return command
    .option('--module <dir>', 'the terraform module (default /captf/module)')
    .option('--inputs <dir>', 'the inputs dir (default /captf/inputs)')
    .option('--workdir <dir>', 'working directory (default: a fresh temp dir)')
    .option('--out <dir>', 'where result.json goes (default .)')
    .option('--state <file>', 'local runs: a local state file, overriding the module backend')
    .option('--new-state', 'with --state: its directory may not exist yet (a first apply starts the state there)')
    .option('--image <ref>', 'the image reference: part of the inputs hash')
    .option('--kind <kind>', `${OBJECT_KINDS.join(' | ')} (default cluster)`)
    .option('--terraform <path>', 'terraform or OpenTofu binary (default terraform on PATH)')
    .option('--lock-timeout <duration>', 'how long terraform waits for the state lock, e.g. 30s')
    .option('--log-format <format>', 'json | pretty (default pretty on a TTY, else json)')
    .option('--object <name>', 'the CAPTF object the Job serves')
    .option('--namespace <ns>', 'its namespace')
    .option('--backend-config <path>', "terraform's -backend-config file (repeatable)", collect)
    .option('--termination-log <path>', 'termination message path (default /dev/termination-log)')
    .option('--policy <dir>', 'plan policies in CEL (default /captf/policy when it exists); apply, plan and drift read it, destroy, restore and unlock never do')
    .option('--backups <dir>', 'where state backups go before the op changes anything (default: Secrets in a cluster, else <out>/backups)')
    .option('--keep-backups <n>', 'how many backups to keep (default 3)')
    .option('--chunk-bytes <n>', `chunk size of artifacts and backups (default ${DEFAULT_CHUNK_BYTES})`)
    .option('--max-artifact-bytes <n>', `the most an artifact or backup may hold, packed or unpacked (default ${DEFAULT_MAX_ARTIFACT_BYTES}, ${DEFAULT_MAX_ARTIFACT_BYTES / 2 ** 20} MiB)`)
    .option('--stop-grace <duration>', 'after a signal, how long terraform gets to stop (default 20s)')
    .option('--deadline <duration>', 'stop by itself before this much time has passed')
    .option('--job-name <name>', 'in-cluster: the Job this run serves')
    .option('--job-uid <uid>', "in-cluster: that Job's uid")
    .option('--service-account-dir <dir>', 'in-cluster: the mounted service account');
}

export function buildCli(handlers: CliHandlers): Command {
  const program = new Command('captf-runner')
    .description('Runs one CAPTF operation with terraform: a guarded apply, plan, refresh, drift, destroy or restore')
    .version(RUNNER_VERSION)
    .showHelpAfterError()
    .exitOverride();

  const op = (name: Op, description: string, extra: (c: Command) => Command = (c) => c) =>
    extra(commonOptions(program.command(name).description(description))).action((flags: Record<string, unknown>) => handlers.op(name, flags));

  op('apply', 'init, validate, plan, show, classify; apply the saved plan unless it is destructive and not approved', (c) =>
    plaintextBackups(c)
      .option('--guard <on|off>', 'the destructive-plan guard (default on)')
      .option('--approved-hash <hash>', 'the approval the controller passed (an inputs or approval hash)')
      .option('--plan-artifact <dir>', 'apply exactly this approved plan artifact instead of planning')
      .option('--approved-plan-hash <hash>', 'the plan hash a person approved (with --plan-artifact)'),
  );
  op('plan', 'plan for manual approval: a plan artifact and its plan hash, nothing applied', (c) => plaintextBackups(c).option('--artifacts <dir>', 'where the plan artifact goes'));
  op('refresh', 'a refresh-only plan, classified, applied as saved, then the outputs');
  op('drift', 'a plan against the inputs, nothing applied: what changed outside terraform');
  op('destroy', 'destroy everything the state holds (never gated)');
  op('restore', 'push a state backup back to the backend', (c) =>
    plaintextBackups(c).option('--backup <dir>', 'the backup to restore').option('--force', 'restore a backup of another lineage'),
  );
  op('unlock', "force-unlock the state, only while the lock still carries this id", (c) => c.option('--lock-id <id>', 'the lock id terraform reported'));

  program
    .command('classify')
    .description('classify a terraform show -json plan document')
    .argument('<file>', 'the plan JSON (- for stdin)')
    .option('--json', 'print the classification as JSON')
    .option('--limit <n>', 'how many destructive entries to list (default 100)')
    .option('--policy <dir>', 'judge the plan by the policies in this dir (default /captf/policy when it exists)')
    .action((file: string, flags: { json?: boolean; limit?: string; policy?: string }) => handlers.classify(file, flags));

  program
    .command('hash')
    .description('print the inputs hash and approval hash of an inputs dir')
    .option('--inputs <dir>', 'the inputs dir (default /captf/inputs)')
    .option('--image <ref>', 'the image reference')
    .option('--kind <kind>', `${OBJECT_KINDS.join(' | ')} (default cluster)`)
    .option('--json', 'print JSON')
    .action((flags: Record<string, unknown>) => handlers.hash(flags));

  const contract = program.command('contract').description('the image contract');
  contract
    .command('check')
    .description('check an image (run inside it) or a directory tree against the module contract')
    .option('--root <dir>', 'check a directory tree instead of this image (default /)')
    .option('--module <dir>', 'the module dir (default /captf/module under the root)')
    .option('--terraform <path>', 'terraform or OpenTofu binary')
    .option('--kind <kind>', 'cluster | machine | pool')
    .option('--workdir <dir>', 'a writable dir for the check')
    .option('--policy <dir>', 'the policy dir (default /captf/policy under the root, when it exists)')
    .option('--json', 'print JSON')
    .action((flags: Record<string, unknown>) => handlers.contractCheck(flags));

  registerLocalCommands(program);
  program.addOption(new Option('--no-color', 'terraform output is never colored').hideHelp());
  return program;
}
