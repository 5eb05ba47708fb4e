// Each periodic interval is stretched by a deterministic per-object jitter of up to a tenth of the
// interval, so objects created together (or moved together by clusterctl move, which resets every
// base to the creation time) do not check in lockstep. Integer arithmetic only, so every language
// derives the same second: jitter = floor(interval * u32 / (10 * 2^32)), where u32 is the first four
// bytes of sha256(UTF-8 uid) read big-endian.
import { createHash } from 'node:crypto';

const TWO_POW_32 = 2n ** 32n;

/** The UID's jitter fraction as a 32-bit numerator (the fraction is word / 2^32, in [0, 1)). */
export const jitterWord = (uid: string): number => createHash('sha256').update(uid, 'utf8').digest().readUInt32BE(0);

/** Jitter in whole seconds for one interval, in [0, intervalSeconds / 10). */
export const jitterSeconds = (uid: string, intervalSeconds: number): number =>
  Number((BigInt(intervalSeconds) * BigInt(jitterWord(uid))) / (10n * TWO_POW_32));
