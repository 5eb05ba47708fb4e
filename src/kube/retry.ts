// When a failed Kubernetes API call is tried again, and after how long: transient failures (429,
// 5xx, a dropped connection, no answer in time) are retried with capped exponential backoff, within
// a bounded number of attempts and total time. Pure: the client supplies the clock and the chance.
import type { Verb } from './transport.ts';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Backoff before the second attempt; doubled for each further one. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A call ends this long after its first attempt started: no retry starts later, and a running attempt is cut off then. */
  maxTotalMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxTotalMs: 30_000,
};

export interface RetryEvent {
  verb: Verb;
  resource: string;
  name: string | undefined;
  attempt: number;
  delayMs: number;
  /** HTTP status, or the network error's message. */
  cause: number | string;
}

/** A status another attempt may get past: throttling and server errors. */
export const isRetryable = (status: number) => status === 429 || status >= 500;

/** The wait before the attempt after `attempt`: doubling from the base, capped, spread by `random` in [0, 1) so that thousands of Jobs that failed at the same moment do not retry together. */
export function backoffMs(policy: RetryPolicy, attempt: number, random: number): number {
  const capped = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(capped * (0.5 + random / 2));
}

/** Retry-After: delay-seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}
