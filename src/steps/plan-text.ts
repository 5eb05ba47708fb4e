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
  plan(options: PlanOptions): Promise<PlanResult>;
  /** The first PLAN_TEXT_LIMIT characters of the plan, masked, once `around` has finished. */
  text(): string;
  /** Runs the plan and classification, then prints what was kept back, whether they succeeded or not. */
  around<T>(body: () => Promise<T>): Promise<T>;
}

/** `progress` counts what the kept-back lines report (a long plan says so), never printing them. */
export function maskedPlanText(
  tf: Terraform,
  workspace: Pick<Workspace, 'privateDir'>,
  progress: Pick<ProgressWatch, 'hold' | 'saw'>,
): MaskedPlanText {
  const file = join(workspace.privateDir, 'plan.txt');
  const kept = createWriteStream(file, { mode: 0o600, flags: 'wx' }); // the runner's own file: never through a link
  let piece = '';
  const keeping = tf.withOutput({
    lines: (stream, lines, command) => {
      if (stream !== 'stdout') return tf.output.lines(stream, lines, command);
      for (const line of lines) progress.saw(line, 'held');
      if (lines.length) piece += `${lines.join('\n')}\n`;
      if (piece.length < KEEP_PIECE) return;
      const written = kept.write(piece);
      piece = '';
      if (!written) return once(kept, 'drain').then(() => undefined);
    },
    end: (stream, command) => (stream === 'stdout' ? undefined : tf.output.end?.(stream, command)),
  });
  let text = '';
  return {
    plan: (options) => {
      progress.hold();
      return plan(keeping, options);
    },
    text: () => text,
    async around(body) {
      try {
        return await body();
      } finally {
        await new Promise<void>((resolve) => kept.end(piece, resolve));
        // The text printed is the text kept: masked once, where it is printed (terraform-text.ts).
        let printed = '';
        const keep = (masked: string) => {
          if (printed.length < PLAN_TEXT_LIMIT) printed += masked + '\n';
        };
        for await (const lines of readLineBatches(createReadStream(file))) {
          const wait = tf.output.lines('stdout', lines, 'plan', keep);
          if (wait) await wait;
        }
        await tf.output.end?.('stdout', 'plan', keep);
        text = maskThenCut(MASKED_WHOLE, printed, PLAN_TEXT_LIMIT, () => '');
        await rm(file, { force: true });
      }
    },
  };
}
