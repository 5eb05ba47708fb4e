// The one boundary where text the runner writes is made short: masked whole first, then cut. A
// secret cut in two matches no longer, so a text cut before it is masked shows the part of the
// secret it kept; cut after, it shows the mask or nothing. Every sink that bounds a text bounds it
// here, and SINKS lists every sink (test/masking/boundary.test.ts feeds each a secret across its cuts).
import { replaceRanges } from './anchored-strings.ts';
import { MASK, type Masker } from './mask.ts';

/** What a cut text ends with, unless the sink says more. */
const CUT_MARK = '…';

/**
 * Every length a sink cuts a text to (characters), named once: each sink takes its own from here, and
 * SINKS is built from them. A policy's denial message is cut to `denialMessage` in every sink (the
 * result, the Secret, the summaries; the termination message to `terminationText`): the evaluator
 * keeps it whole (bounded by the 100,000 characters a policy expression may build).
 */
export const CUTS = {
  denialMessage: 1000,
  /** The result's message in the termination message, each form shorter until the message fits 4096 bytes. */
  terminationMessage: [2000, 1000, 500, 300, 120],
  /** A denial's message, a warning, an address in the termination message. */
  terminationText: 300,
  /** A text of the Markdown summary. */
  summaryText: 2000,
  /** A string of the result Secret, the last resort when the result is over what a Secret holds. */
  secretString: 4096,
  /** A Job annotation's value. */
  annotation: 1024,
  /** An address in an apply marker (a for_each key can be long, and secret). */
  markerAddress: 500,
} as const;

/** How long a text may be: characters (UTF-16 code units), or bytes of its UTF-8. */
export type Limit = number | { bytes: number };

/**
 * `text` masked whole, then, when longer than `limit`, cut and ended with `tail` (given how many
 * masked characters were left out) so that the whole is within `limit`. The cut never falls inside a
 * mask (it moves to the mask's start) nor between the two halves of a character outside the Basic
 * Multilingual Plane.
 */
export function maskThenCut(
  masker: Pick<Masker, 'mask'>,
  text: string,
  limit: Limit,
  tail: (leftOut: number) => string = () => CUT_MARK,
): string {
  const masked = masker.mask(text);
  const size = typeof limit === 'number' ? (s: string) => s.length : (s: string) => Buffer.byteLength(s);
  const most = typeof limit === 'number' ? limit : limit.bytes;
  if (size(masked) <= most) return masked;
  const room = Math.max(0, most - size(tail(masked.length)));
  let at = typeof limit === 'number' ? room : utf8Prefix(masked, room);
  const mask = masked.lastIndexOf(MASK, at - 1);
  if (mask >= 0 && mask + MASK.length > at) at = mask;
  if (at > 0 && isHighSurrogate(masked.charCodeAt(at - 1))) at--;
  return masked.slice(0, at) + tail(masked.length - at);
}

/**
 * The end of `text`, masked with all of `text` in view, then cut at its start: its last `limit`
 * characters from the first line break among them (none: from where they start). A secret the cut
 * falls inside (one terraform wrapped across lines, a multi-line value) is masked whole and the end
 * starts with its mask, so no part of it is kept. What `text` holds before its end is the context the
 * masker sees there: only a secret printed longer than that context, begun before `text`, goes unseen.
 * Should matching fail, the mask alone.
 */
export function maskThenCutStart(masker: Pick<Masker, 'secretRanges'>, text: string, limit: number): string {
  const ranges = masker.secretRanges(text);
  if (!ranges) return MASK;
  let at = 0;
  if (text.length > limit) {
    const from = text.length - limit;
    const lineBreak = text.indexOf('\n', from);
    at = lineBreak < 0 ? from : lineBreak + 1;
    if (at > 0 && isHighSurrogate(text.charCodeAt(at - 1))) at++;
  }
  const inside = ranges.find(({ start, end }) => start < at && at < end);
  if (inside) at = inside.start;
  const kept = ranges.filter(({ end }) => end > at).map(({ start, end }) => ({ start: start - at, end: end - at }));
  return replaceRanges(text.slice(at), kept, MASK);
}

/** The masker of a text where nothing is secret (a terraform run before any input is read: its version). */
export const NOTHING_SECRET: Pick<Masker, 'secretRanges'> = { secretRanges: () => [] };

/**
 * A policy's denial message as the result, the result Secret and the summaries quote it: masked whole,
 * then cut to CUTS.denialMessage (the termination message cuts it shorter, to CUTS.terminationText).
 */
export const denialMessage = (masker: Pick<Masker, 'mask'>, message: string): string =>
  maskThenCut(masker, message, CUTS.denialMessage);

/** The most code units of `text` from its start whose UTF-8 takes at most `bytes` (a lone surrogate takes 3, as Buffer writes it). */
function utf8Prefix(text: string, bytes: number): number {
  let used = 0;
  let at = 0;
  while (at < text.length) {
    const point = text.codePointAt(at)!;
    const size = point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
    if (used + size > bytes) break;
    used += size;
    at += point > 0xffff ? 2 : 1;
  }
  return at;
}

/** The masker of a text that was masked whole already (a field of a result masked by maskResult): cut only. */
export const MASKED_WHOLE: Pick<Masker, 'mask'> = { mask: (text) => text };

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** A sink: where the runner's bytes go, the file that writes them, and the lengths it cuts a text to (none: it writes every text whole). */
export interface Sink {
  name: string;
  file: string;
  cuts: readonly number[];
}

/**
 * Every sink of the runner's own bytes. A file of src/ that writes bytes is one of these or is named,
 * with why, in test/masking/boundary.test.ts (a helper the sinks write through, terraform's own
 * files, the stores' state and artifacts); a sink added without its place here fails that test.
 */
export const SINKS: readonly Sink[] = [
  { name: 'terraform text (stdout)', file: 'src/output/terraform-text.ts', cuts: [] },
  { name: 'log (stderr)', file: 'src/output/log.ts', cuts: [] },
  { name: 'result.json', file: 'src/output/result-file.ts', cuts: [CUTS.denialMessage] },
  {
    name: 'termination message',
    file: 'src/output/termination.ts',
    cuts: [...CUTS.terminationMessage, CUTS.terminationText],
  },
  { name: 'summary (stdout)', file: 'src/run/finish.ts', cuts: [CUTS.denialMessage] },
  { name: 'Markdown summary', file: 'src/output/summary-md-file.ts', cuts: [CUTS.summaryText] },
  { name: 'result Secret', file: 'src/kube/sinks.ts', cuts: [CUTS.secretString] },
  { name: 'Job annotations', file: 'src/kube/sinks.ts', cuts: [CUTS.annotation] },
  {
    name: 'apply marker (its addresses, reported by the next run)',
    file: 'src/steps/apply-marker.ts',
    cuts: [CUTS.markerAddress],
  },
];
