// What the steps of a run learned, for its result, and how an op ends. Each step's record keeps what the step
// returned it learned, or what its error carries when it failed after learning something (a
// classified plan that is then refused); an op's own conclusions come back with its ending, or on
// its error. finish.ts builds the result from these, in the order they were learned: nothing
// writes into a shared result object.
import type { OutputValue, Result } from '../schemas/result.ts';

/** A part of the result, as a step or an op learned it. */
export type Learned = Partial<Omit<Result, 'apiVersion' | 'op' | 'outcome' | 'reason' | 'message' | 'exitCode' | 'steps' | 'warnings' | 'startedAt' | 'finishedAt' | 'error'>> & {
  /** The sensitive outputs with their values: only the result Secret may hold them, never the result. */
  sensitiveOutputs?: Record<string, OutputValue>;
};

const carried = new WeakMap<object, Learned>();

/** `error`, carrying `learned` to the result. What it already carries wins: that was learned later, nearer the failure. */
export function withLearned<E>(error: E, learned: Learned): E {
  if (typeof error === 'object' && error !== null) carried.set(error, { ...learned, ...carried.get(error) });
  return error;
}

/** What `error` carries, taken off it: the step runner records it once, in the failed step's record. */
export function takeLearned(error: unknown): Learned {
  if (typeof error !== 'object' || error === null) return {};
  const learned = carried.get(error) ?? {};
  carried.delete(error);
  return learned;
}

/** Runs `body`; when it fails, its error carries `learned` (what was known before it) to the result. */
export async function keepOnFailure<T>(learned: Learned, body: () => T | Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw withLearned(error, learned);
  }
}

/** What an op that finished without an error reports: its outcome, and what it concluded beyond its steps' records. */
export interface OpEnding {
  outcome: Result['outcome'];
  reason: Result['reason'];
  message: string;
  learned?: Learned;
}

/** What an op concluded before the steps of `body`: it reaches the result with the ending `body` returns, or on its error. */
export async function reporting(learned: Learned, body: () => Promise<OpEnding>): Promise<OpEnding> {
  const ending = await keepOnFailure(learned, body);
  return { ...ending, learned: { ...learned, ...ending.learned } };
}
