// Time arithmetic for the model: snapshot times are RFC 3339 strings, the model computes in epoch
// milliseconds, and every requeue is rounded up to whole seconds so nothing wakes before it is due.

export const toMs = (time: string): number => Date.parse(time);

export const addSeconds = (ms: number, seconds: number): number => ms + seconds * 1000;

/** Whole seconds from now until the deadline, at least 1. */
export const secondsUntil = (nowMs: number, deadlineMs: number): number =>
  Math.max(1, Math.ceil((deadlineMs - nowMs) / 1000));

/** The latest of the given times, ignoring the absent ones. */
export const latest = (...times: Array<number | undefined>): number | undefined => {
  const present = times.filter((t): t is number => t !== undefined);
  return present.length === 0 ? undefined : Math.max(...present);
};
