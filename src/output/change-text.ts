// One destructive entry in words, as every message, log line and summary names it.

/** `address (deposed key) (action)`: the fields that identify a destructive entry. */
export const changeText = (c: { address: string; deposed?: string; action: string }): string =>
  `${c.address}${c.deposed ? ` (deposed ${c.deposed})` : ''} (${c.action})`;
