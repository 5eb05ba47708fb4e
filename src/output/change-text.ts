// One destructive entry or provider action in words, as every message, log line and summary names it.

/** `address (deposed key) (action)`: the fields that identify a destructive entry; a provider action's trigger follows its action (`action invoke`). */
export const changeText = (c: { address: string; deposed?: string; action: string; trigger?: string }): string =>
  `${c.address}${c.deposed ? ` (deposed ${c.deposed})` : ''} (${c.action}${c.trigger ? ` ${c.trigger}` : ''})`;

/** `address (action trigger)`: a provider action, as every message, log line and summary names it. */
export const actionText = (a: { address: string; trigger: string }): string => changeText({ address: a.address, action: 'action', trigger: a.trigger });
