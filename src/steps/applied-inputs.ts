// refresh and drift act on what the last successful apply left: a controller mounts that apply's
// inputs (or the current ones, unchanged since) and passes the image reference that apply ran as
// --image (not the digest pinned from it: contract/sections/decide-op.md, "The image"), so their
// inputs hash is the one the state records. When it is not, the result describes other inputs
// than the state's, and a controller comparing the hashes would see a change that never goes away:
// said with a notice.
import type { RunContext } from '../run/context.ts';

export function noticeOtherInputs(ctx: RunContext, recorded: string | null | undefined, inputsHash: string): void {
  if (!recorded || recorded === inputsHash) return;
  ctx.notice({
    code: 'StateRecordsOtherInputs',
    message: `the state records inputs hash ${recorded}, not this run's ${inputsHash} (its inputs and --image): the result describes other inputs than the last apply's. A ${ctx.op} Job passes the inputs of the last successful apply and the image reference that apply ran as --image, not the digest pinned from it`,
  });
}
