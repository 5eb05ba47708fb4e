// `captf-runner local <command>`: a module's whole CAPTF lifecycle on a laptop. Commander
// definitions only; each action calls one function of src/local/. See the README (A module's lifecycle on your laptop).
import { Command, InvalidArgumentError, Option } from 'commander';
import { text } from 'node:stream/consumers';
import { OBJECT_KINDS, type ObjectKind } from '../object-kind.ts';
import { DURATION_GRAMMAR, durationMs } from '../util/duration.ts';

// The actions' modules (zod, the decision model, the runner process) load when a local command
// runs, not whenever the command line is built.
const edit = () => import('./edit.ts');
/** Where `captf-runner local` keeps an object, unless --dir says otherwise. */
const DEFAULT_LOCAL_DIR = '.captf-local';

const DEFAULT_DRIFT_INTERVAL = '1h';
const DEFAULT_REMEDIATION_FAILED_LIMIT = 3;
const DRIFT_ACTIONS = ['Report', 'Remediate'] as const;

function seconds(text: string): number {
  let ms: number;
  try {
    ms = durationMs(text);
  } catch {
    // no cause: commander prints the message alone, and the grammar says what a duration is.
    throw new InvalidArgumentError(`a duration: ${DURATION_GRAMMAR}`);
  }
  if (ms < 1000) throw new InvalidArgumentError('at least 1s');
  return ms / 1000;
}

/** An RFC 3339 time, or +DURATION from now: the clock a pass uses, to make a due check come sooner. */
function clock(text: string): Date {
  if (text.startsWith('+')) return new Date(Date.now() + seconds(text.slice(1)) * 1000);
  const ms = Date.parse(text);
  if (Number.isNaN(ms))
    throw new InvalidArgumentError('an RFC 3339 time (2025-06-01T12:00:00Z) or +DURATION from now (+2h)');
  return new Date(ms);
}

function count(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('a whole number');
  return n;
}

const dirOption = () => new Option('--dir <dir>', 'the local object dir').default(DEFAULT_LOCAL_DIR);
const now = () => new Date();

export function registerLocalCommands(program: Command): void {
  const local = program
    .command('local')
    .description(
      "a module's CAPTF lifecycle on a laptop: a local object, reconciled by the controller's rules with the real runner",
    );

  local
    .command('init')
    .description('create a local object: a module dir, its image reference and kind, and its inputs')
    .addOption(dirOption())
    .requiredOption('--module <dir>', 'the module dir (what the image carries at /captf/module)')
    .requiredOption('--image <ref>', 'the image reference (part of the inputs hash)')
    .addOption(new Option('--kind <kind>', 'the kind of object').choices(OBJECT_KINDS).default('cluster'))
    .option('--name <name>', 'the object name, a Kubernetes name (default: the module dir name)')
    .option('--inputs <dir>', 'copy these inputs (terraform.tfvars.json, sensitive.tfvars.json, other files)')
    .option('--drift-interval <duration>', 'how often drift is checked', seconds, seconds(DEFAULT_DRIFT_INTERVAL))
    .addOption(
      new Option('--drift-action <action>', 'what found drift leads to').choices(DRIFT_ACTIONS).default('Report'),
    )
    .option(
      '--remediation-failed-limit <n>',
      'failed drift remediations before they stop',
      count,
      DEFAULT_REMEDIATION_FAILED_LIMIT,
    )
    .action(
      async (flags: {
        dir: string;
        module: string;
        image: string;
        kind: ObjectKind;
        name?: string;
        inputs?: string;
        driftInterval: number;
        driftAction: (typeof DRIFT_ACTIONS)[number];
        remediationFailedLimit: number;
      }) =>
        (await edit()).initObject(flags.dir, {
          module: flags.module,
          image: flags.image,
          kind: flags.kind,
          name: flags.name,
          inputs: flags.inputs,
          drift: {
            intervalSeconds: flags.driftInterval,
            action: flags.driftAction,
            remediationFailedLimit: flags.remediationFailedLimit,
          },
        }),
    );

  local
    .command('set')
    .description(
      'edit the inputs (NAME=VALUE in terraform.tfvars.json; VALUE is JSON if it parses, else a string) or the spec',
    )
    .argument('[assignments...]', 'NAME=VALUE')
    .addOption(dirOption())
    .option('--inputs <dir>', 'replace the inputs with a copy of this dir')
    .option(
      '--sensitive <name>',
      'set a secret variable in sensitive.tfvars.json, its value read from stdin (never the command line)',
    )
    .option('--image <ref>', 'a new image reference (a new module release: bump it when the module changes)')
    .option('--module <dir>', 'point the object at another module dir')
    .option('--drift-interval <duration>', 'how often drift is checked', seconds)
    .addOption(new Option('--drift-action <action>', 'what found drift leads to').choices(DRIFT_ACTIONS))
    .action(
      async (
        assignments: string[],
        flags: {
          dir: string;
          inputs?: string;
          sensitive?: string;
          image?: string;
          module?: string;
          driftInterval?: number;
          driftAction?: (typeof DRIFT_ACTIONS)[number];
        },
      ) =>
        (await edit()).setObject(flags.dir, {
          assignments,
          inputs: flags.inputs,
          sensitive: flags.sensitive,
          readSecret: () => text(process.stdin),
          image: flags.image,
          module: flags.module,
          driftIntervalSeconds: flags.driftInterval,
          driftAction: flags.driftAction,
        }),
    );

  local
    .command('reconcile')
    .description(
      'one pass: ask DecideOp what runs next, print the decision and its reason, run that op, record the result',
    )
    .addOption(dirOption())
    .option(
      '--now <time>',
      'the clock for this pass: an RFC 3339 time or +DURATION (e.g. +2h makes a drift check due)',
      clock,
    )
    .option(
      '--verbose',
      "stream the runner's output (terraform and logs) instead of keeping it in the run's runner.log",
    )
    .action(async (flags: { dir: string; now?: Date; verbose?: boolean }) =>
      (await import('./reconcile.ts')).reconcile(flags.dir, {
        now: flags.now ?? now(),
        verbose: flags.verbose ?? false,
      }),
    );

  local
    .command('approve')
    .description('approve the blocked apply: set captf.io/approve-destructive-plan to the hash it was blocked for')
    .addOption(dirOption())
    .action(async (flags: { dir: string }) => (await edit()).approveBlockedApply(flags.dir));

  local
    .command('delete')
    .description('mark the object deleting: reconcile then destroys, and drops the finalizer once the state is empty')
    .addOption(dirOption())
    .action(async (flags: { dir: string }) => (await edit()).deleteObject(flags.dir));

  local
    .command('status')
    .description('spec, annotations, status, the newest runs and what a reconcile would decide now')
    .addOption(dirOption())
    .option('--now <time>', 'the clock to decide with (as for reconcile)', clock)
    .option('--runs <n>', 'how many of the newest runs to list', count, 5)
    .option('--json', 'print JSON')
    .action(async (flags: { dir: string; now?: Date; runs: number; json?: boolean }) =>
      (await import('./status.ts')).showStatus(flags.dir, {
        now: flags.now ?? now(),
        runs: flags.runs,
        json: flags.json ?? false,
      }),
    );
}
