import { createHash } from 'node:crypto';

/** Lowercase hex sha256; a string is hashed as its UTF-8 bytes. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}
