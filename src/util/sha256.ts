import { createHash, type Hash } from 'node:crypto';

/** A sha256 as the contract writes it: 64 lowercase hex characters (hashes, approvals, digests). */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

export const isSha256 = (value: string): boolean => SHA256_HEX.test(value);

/** Lowercase hex sha256; a string is hashed as its UTF-8 bytes. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A pipeline stage that passes every piece on unchanged, feeding it to `hash` on the way. */
export function hashing(hash: Hash) {
  return async function* (source: AsyncIterable<Buffer>) {
    for await (const piece of source) {
      hash.update(piece);
      yield piece;
    }
  };
}
