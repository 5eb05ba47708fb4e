// terraform's human output where the runner prints it, set apart from the runner's own: on stdout
// every line of terraform's starts with TERRAFORM_LINE_PREFIX (a line without it is the runner's
// summary), on stderr every line is a log record of its own. Masked first, across the lines of each
// command's stream (a secret can span them), then escaped: no control character reaches a terminal.
import type { Writable } from 'node:stream';
import type { Command, TerraformOutput } from '../terraform/terraform.ts';
import { logTerraformLine, TERRAFORM_LINE_PREFIX, type Logger } from './log.ts';
import { LineMasker, type Masker } from '../masking/mask.ts';
import { printableLine } from './printable.ts';
import { writeWithBackpressure } from './std-streams.ts';

export interface TerraformTextOptions {
  masker: Masker;
  log: Logger;
  /** The run's step at the moment (named in terraform's stderr records). */
  step: () => string | undefined;
  stdout: Writable;
}

/** terraform's stdout lines as the runner prints them: each prefixed, none holding a line break or a control character. */
const terraformLines = (masked: string): string =>
  masked
    .split('\n')
    .map((line) => `${TERRAFORM_LINE_PREFIX}${printableLine(line)}\n`)
    .join('');

export function terraformText(options: TerraformTextOptions): TerraformOutput {
  // One masker per command and stream: commands may run side by side (the state pull beside validate).
  const maskers = new Map<string, LineMasker>();
  const key = (stream: string, command: Command) => `${command}\0${stream}`;
  const print = (
    stream: 'stdout' | 'stderr',
    command: Command,
    masked: string | undefined,
    keep: ((printed: string) => void) | undefined,
    step = options.step(),
  ) => {
    if (masked === undefined) return undefined;
    keep?.(masked);
    // A full pipe (a slow reader) is backpressure: terraform waits instead of the runner buffering.
    if (stream === 'stdout') return writeWithBackpressure(options.stdout, terraformLines(masked));
    for (const line of masked.split('\n')) logTerraformLine(options.log, { command, step }, line);
    return undefined;
  };
  return {
    lines(stream, texts, command, keep, step) {
      let masker = maskers.get(key(stream, command));
      if (!masker) maskers.set(key(stream, command), (masker = new LineMasker(options.masker)));
      return print(stream, command, masker.push(...texts), keep, step);
    },
    end(stream, command, keep, step) {
      const masker = maskers.get(key(stream, command));
      maskers.delete(key(stream, command));
      return print(stream, command, masker?.end(), keep, step);
    },
  };
}
