import { planFileArgument, succeeded, type PlanFileRef, type Terraform } from './terraform.ts';

export interface ShowResult<T> {
  exitCode: number;
  /** What `consume` made of the plan JSON. */
  value: T;
}

export const showPlanArgs = (planFile: PlanFileRef): string[] => [
  'show',
  '-json',
  '-no-color',
  planFileArgument(planFile).arg,
];

/**
 * show -json of a saved plan, read as it comes by `consume` (plans can exceed a JavaScript string): each
 * chunk a view of one reused buffer, valid until the next is asked for (exec.ts, consumeStdout).
 */
export async function showPlan<T>(
  tf: Terraform,
  planFile: PlanFileRef,
  consume: (stdout: AsyncIterable<Buffer>) => Promise<T>,
): Promise<ShowResult<T>> {
  const run = succeeded(
    await tf.run<T>('show', showPlanArgs(planFile), {
      consumeStdout: consume,
      passFds: planFileArgument(planFile).passFds,
    }),
    'ShowFailed',
  );
  return { exitCode: run.exitCode, value: run.consumed as T };
}
