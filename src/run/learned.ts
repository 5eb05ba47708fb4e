// What the steps of a run learned, for its result, and how an op ends. The run keeps what each step
// learned (RunContext.keep: from its value, or kept before it failed, as a classified plan that is
// then refused), and an op's own conclusions (kept before the steps that could still fail, or with
// its ending). finish.ts builds the result from these, in the order they were learned: nothing
// writes into a shared result object, and nothing rides on an error.
import type { OutputValue, Result } from '../schemas/result.ts';

/** A part of the result, as a step or an op learned it. */
export type Learned = Partial<
  Omit<
    Result,
    | 'apiVersion'
    | 'op'
    | 'outcome'
    | 'reason'
    | 'message'
    | 'exitCode'
    | 'steps'
    | 'warnings'
    | 'startedAt'
    | 'finishedAt'
    | 'error'
  >
> & {
  /** The sensitive outputs with their values: only the result Secret may hold them, never the result. */
  sensitiveOutputs?: Record<string, OutputValue>;
};

/** What an op that finished without an error reports: its outcome, and what it concluded beyond its steps' records. */
export interface OpEnding {
  outcome: Result['outcome'];
  reason: Result['reason'];
  message: string;
  learned?: Learned;
}
