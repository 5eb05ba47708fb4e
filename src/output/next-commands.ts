// The commands a run's summaries tell a person to run next (the human summary's `next:` line and the
// Markdown summary's blocks), built from this run's own command line: the op replaced, every flag
// the next op does not take left out (so the command is one that op accepts), its own flags added,
// each word shell-quoted. Pure.
import {
  OP_REPORT_FLAGS,
  OP_SETTINGS,
  REPORT_FLAGS,
  SETTING_OPTIONS,
  flagName,
  type SettingOption,
} from '../schemas/setting-options.ts';
import type { Op } from '../schemas/result.ts';

/** Each flag an op can take, by its spelling: whether a value follows it. */
const FLAGS: ReadonlyMap<string, { name: string; option: SettingOption }> = new Map(
  Object.entries({ ...SETTING_OPTIONS, ...REPORT_FLAGS } as Record<string, SettingOption>).map(([name, option]) => [
    flagName(name),
    { name, option },
  ]),
);

const takes = (op: Op, name: string) =>
  (OP_SETTINGS[op] as readonly string[]).includes(name) || (OP_REPORT_FLAGS[op] as readonly string[]).includes(name);

/** The settings whose value may hold a credential (terraform's -backend-config takes KEY=VALUE too): such a value is not repeated. */
const CREDENTIAL_SETTINGS: ReadonlySet<string> = new Set(['backendConfig']);
/** A value of such a setting that is no file path: `password=...`. */
const mayHoldCredential = (name: string, value: string) => CREDENTIAL_SETTINGS.has(name) && value.includes('=');
const NOT_REPEATED = '<as before>';

/** A word as a person pastes it into a shell: quoted when it holds anything but safe characters. */
const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

/**
 * `captf-runner <op>` with this run's flags (argv after the program: its op first) that `op` takes,
 * but those named in `drop`, then `add`. A value that may hold a credential is `<as before>`.
 */
export function nextCommand(argv: readonly string[], op: Op, drop: readonly string[], add: readonly string[]): string {
  const kept: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!;
    const [spelling, inline] =
      word.startsWith('--') && word.includes('=')
        ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]
        : [word, undefined];
    const flag = FLAGS.get(spelling);
    if (!flag) {
      kept.push(word); // what the runner does not know as a setting (--no-color) is the op's as much as this run's
      continue;
    }
    const value = flag.option.value === undefined ? undefined : (inline ?? argv[++i]);
    if (drop.includes(spelling) || !takes(op, flag.name)) continue;
    if (value === undefined) kept.push(spelling);
    else if (mayHoldCredential(flag.name, value))
      kept.push(
        inline === undefined ? spelling : `${spelling}=${NOT_REPEATED}`,
        ...(inline === undefined ? [NOT_REPEATED] : []),
      );
    else kept.push(...(inline === undefined ? [spelling, value] : [word]));
  }
  return ['captf-runner', op, ...kept, ...add].map(shellWord).join(' ');
}

/** The same op again, with `--approved-hash <hash>` in place of any given: what applies a blocked plan here. */
export const rerunWithApproval = (argv: readonly string[], hash: string) =>
  nextCommand(argv, 'apply', ['--approved-hash'], ['--approved-hash', hash]);

/**
 * `apply --plan-artifact <ref> --approved-plan-hash <hash>`: what applies exactly the plan a `plan` run saved;
 * `startsState`: the plan was of a --state FILE that does not exist yet, which its apply starts (--new-state).
 */
export const applyPlanArtifact = (argv: readonly string[], artifact: string, planHash: string, startsState = false) =>
  nextCommand(argv, 'apply', startsState ? ['--new-state'] : [], [
    '--plan-artifact',
    artifact,
    '--approved-plan-hash',
    planHash,
    ...(startsState ? ['--new-state'] : []),
  ]);

/** The apply that remediates what a drift run found: its inputs applied again, through the same guard. */
export const remediationApply = (argv: readonly string[]) => nextCommand(argv, 'apply', [], []);
