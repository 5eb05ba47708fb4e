// The captured corpus of terraform's real output (test/fixtures/terraform-output, written by
// scripts/generators/capture-terraform-output.ts): rules that read terraform's messages are tested on these
// files, so they are tested on what terraform really prints. The README there lists the cases.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { interpretExit, placeOf, type Command, type CommandRun } from '../../src/terraform/terraform.ts';

export const CAPTURED_OUTPUT_DIR = fileURLToPath(new URL('../fixtures/terraform-output/', import.meta.url));
/** What stands for the capturing run's temp dir in every captured file (the runner's workdir). */
export const CAPTURED_WORKDIR = '/WORKDIR';

const CapturedCommand = z.strictObject({
  argv: z.array(z.string()).min(1),
  exitCode: z.number().int(),
  timedOut: z.literal(true).optional(),
});

const CommandFile = CapturedCommand.extend({
  case: z.string(),
  what: z.string().min(1),
  terraformVersion: z.string().regex(/^\d+\.\d+\.\d+/),
  cwd: z.string(),
  env: z.record(z.string(), z.string()),
  json: CapturedCommand.optional(),
  observed: z.record(z.string(), z.unknown()).optional(),
});

interface CapturedRun {
  argv: string[];
  exitCode: number;
  stdout: string;
  stderr: string;
  /** The script killed terraform after its bound (no case in the corpus does). */
  timedOut: boolean;
}

export interface CapturedOutput extends CapturedRun {
  case: string;
  /** What the case is, as the capture script describes it. */
  what: string;
  /** The terraform that printed it, e.g. 1.11.4. */
  version: string;
  cwd: string;
  /** The variables terraform ran with (all but PATH). */
  env: Record<string, string>;
  /** The same command with -json (validate -json, plan -json), where the case has one. */
  json?: CapturedRun;
  /** What the script checked after the command ran, e.g. `{ planFileWritten: true }`. */
  observed: Record<string, unknown>;
}

/** The names of the captured cases, sorted. */
export function capturedCases(): string[] {
  return readdirSync(CAPTURED_OUTPUT_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** One case's command and terraform's output, exactly as captured. Throws naming the case and file when either is missing or malformed. */
export function capturedOutput(caseName: string): CapturedOutput {
  const dir = join(CAPTURED_OUTPUT_DIR, caseName);
  if (!/^[a-z0-9-]+$/.test(caseName) || !existsSync(dir)) {
    throw new Error(
      `no captured terraform output named "${caseName}" in ${CAPTURED_OUTPUT_DIR} (the cases: ${capturedCases().join(', ')})`,
    );
  }
  const parsed = CommandFile.safeParse(JSON.parse(read(dir, 'command.json')));
  if (!parsed.success) throw new Error(`${join(dir, 'command.json')} is malformed: ${z.prettifyError(parsed.error)}`);
  const command = parsed.data;
  if (command.case !== caseName)
    throw new Error(`${join(dir, 'command.json')} names case "${command.case}", not "${caseName}"`);
  const output: CapturedOutput = {
    case: caseName,
    what: command.what,
    version: command.terraformVersion,
    cwd: command.cwd,
    env: command.env,
    argv: command.argv,
    exitCode: command.exitCode,
    timedOut: command.timedOut === true,
    stdout: read(dir, 'stdout.txt'),
    stderr: read(dir, 'stderr.txt'),
    observed: command.observed ?? {},
  };
  if (command.json) {
    output.json = {
      argv: command.json.argv,
      exitCode: command.json.exitCode,
      timedOut: command.json.timedOut === true,
      stdout: read(dir, 'json-stdout.txt'),
      stderr: read(dir, 'json-stderr.txt'),
    };
  }
  return output;
}

function read(dir: string, file: string): string {
  const path = join(dir, file);
  if (!existsSync(path))
    throw new Error(
      `${path} is missing: run npx tsx scripts/generators/capture-terraform-output.ts --case ${dir.split('/').at(-1)}`,
    );
  return readFileSync(path, 'utf8');
}

/** The runner's name for the command a case captured (`state push`, `force-unlock`, …), as src/terraform names its steps. */
export function capturedCommand(argv: readonly string[]): Command {
  return (argv[0] === 'state' ? `state ${argv[1]}` : argv[0]) as Command;
}

/** A case as the driver sees a finished command: its exit read by interpretExit, its stderr as the tail. */
export function capturedRun(caseName: string): CommandRun {
  const output = capturedOutput(caseName);
  const command = capturedCommand(output.argv);
  return {
    command,
    exitCode: output.exitCode,
    stdout: output.stdout,
    stderrTail: output.stderr,
    stderrComplete: true, // every case is smaller than the driver's tail
    consumed: undefined,
    durationMs: 0,
    killedByStop: false,
    meaning: interpretExit(command, output.exitCode, output.argv.includes('-detailed-exitcode')),
    place: placeOf(output.cwd, output.argv),
  };
}
