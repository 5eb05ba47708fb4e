// terraform's human plan text, kept back in a private file until the runner knows what to mask, then printed masked.
// ("held" is the saved plan file the runner holds open: workspace/plan-file.ts.)
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { readLineBatches } from '../util/lines.ts';
import { MASKED_WHOLE, maskThenCut } from '../masking/boundary.ts';
import type { ProgressWatch } from '../output/progress.ts';
import { plan, type PlanOptions, type PlanResult } from '../terraform/plan.ts';
import type { Terraform } from '../terraform/terraform.ts';
import type { Workspace } from '../workspace/workspace.ts';

/**
 * terraform's human plan can print secrets it no longer marks (derived attributes), and the runner
 * learns which variables are sensitive only from the plan JSON. So the plan's stdout is kept in a
 * private file and printed, masked, once the classification has taught the masker.
 */
const PLAN_TEXT_LIMIT = 64 * 1024;
/**
 * The kept-back lines go to the file in pieces of this many characters at least: a write per batch of
 * terraform's output was ≈ 400 writes for a 500-instance plan, each its own trip through libuv's pool.
 */
const KEEP_PIECE = 64 * 1024;

export interface MaskedPlanText {
  /** terraform plan, its stdout kept back: the one command run through the keeping handle, which never leaves this file. */
  plan(options: PlanOptions, extras?: Parameters<typeof plan>[2]): Promise<PlanResult>;
  /** The first PLAN_TEXT_LIMIT characters of the plan, masked, once `around` has finished. */
  text(): string;
  /** Runs the plan and classification, then prints what was kept back, whether they succeeded or not. */
  around<T>(body: () => Promise<T>): Promise<T>;
}

export interface MaskedPlanTextOptions {
  /**
   * The state before the op is read only after the plan (from the saved plan, steps/state-planned.ts):
   * stderr is kept back as well, and what was kept is printed only if this says nothing once the plan and
   * classification end (the masker learned the state's secrets, and the state is the object's); else it
   * says why the kept-back text is not printed, and `warn` is told so.
   */
  withheld?: () => string | undefined;
  warn?: (message: string) => void;
}

/** A private file that terraform's lines of one stream are kept in, in pieces, until they are printed. */
function keptLines(file: string) {
  const kept = createWriteStream(file, { mode: 0o600, flags: 'wx' }); // the runner's own file: never through a link
  let piece = '';
  return {
    add(lines: readonly string[]): Promise<void> | undefined {
      if (lines.length) piece += `${lines.join('\n')}\n`;
      if (piece.length < KEEP_PIECE) return;
      const written = kept.write(piece);
      piece = '';
      if (!written) return once(kept, 'drain').then(() => undefined);
    },
    /** Ends the file, then yields its lines in batches and removes it (or only removes it: `print` false). */
    async *release(print: boolean) {
      await new Promise<void>((resolve) => kept.end(piece, resolve));
      try {
        if (print) yield* readLineBatches(createReadStream(file));
      } finally {
        await rm(file, { force: true });
      }
    },
  };
}

/** `progress` counts what the kept-back lines report (a long plan says so), never printing them. */
export function maskedPlanText(
  tf: Terraform,
  workspace: Pick<Workspace, 'privateDir'>,
  progress: Pick<ProgressWatch, 'hold' | 'saw'>,
  options: MaskedPlanTextOptions = {},
): MaskedPlanText {
  const stdout = keptLines(join(workspace.privateDir, 'plan.txt'));
  const stderr = options.withheld ? keptLines(join(workspace.privateDir, 'plan-stderr.txt')) : undefined;
  const keeping = tf.withOutput({
    lines: (stream, lines, command) => {
      const kept = stream === 'stdout' ? stdout : stderr;
      if (!kept) return tf.output.lines(stream, lines, command);
      for (const line of lines) progress.saw(line, 'held');
      return kept.add(lines);
    },
    end: (stream, command) => (stream === 'stdout' || stderr ? undefined : tf.output.end?.(stream, command)),
  });
  let text = '';
  /** What was kept back, printed (or only removed: `print` false); the text the result keeps of it. */
  const release = async (print: boolean): Promise<string> => {
    // The text printed is the text kept: masked once, where it is printed (terraform-text.ts).
    let printed = '';
    const keep = (masked: string) => {
      if (printed.length < PLAN_TEXT_LIMIT) printed += masked + '\n';
    };
    for await (const lines of stdout.release(print)) {
      const wait = tf.output.lines('stdout', lines, 'plan', keep);
      if (wait) await wait;
    }
    await tf.output.end?.('stdout', 'plan', keep);
    if (stderr) {
      for await (const lines of stderr.release(print)) {
        const wait = tf.output.lines('stderr', lines, 'plan', undefined, 'plan'); // printed in the step plan
        if (wait) await wait;
      }
      await tf.output.end?.('stderr', 'plan', undefined, 'plan');
    }
    return maskThenCut(MASKED_WHOLE, printed, PLAN_TEXT_LIMIT, () => '');
  };
  return {
    plan: (planOptions, extras) => {
      progress.hold();
      return plan(keeping, planOptions, extras);
    },
    text: () => text,
    async around(body) {
      try {
        return await body();
      } finally {
        const withheld = options.withheld?.();
        try {
          text = await release(withheld === undefined);
        } finally {
          // Said however the release ends: a run that stops here printed nothing of the plan either.
          if (withheld !== undefined) options.warn?.(`terraform's output during the plan was not printed: ${withheld}`);
        }
      }
    },
  };
}
