import type { Readable } from 'node:stream';
import { commandFailed, planFileArgument, run, type PlanFileRef, type Terraform } from './terraform.ts';

export const showPlanArgs = (planFile: PlanFileRef): string[] => ['show', '-json', '-no-color', planFileArgument(planFile).arg];

/** show -json of a saved plan, read as a stream by `consume` (plans can exceed a JavaScript string). */
export async function showPlan<T>(tf: Terraform, planFile: PlanFileRef, consume: (stdout: Readable) => Promise<T>): Promise<{ exitCode: number; value: T }> {
  const result = await run<T>(tf, 'show', showPlanArgs(planFile), { consumeStdout: consume, passFds: planFileArgument(planFile).passFds });
  if (result.exitCode !== 0) throw commandFailed('show', result, 'ShowFailed');
  return { exitCode: result.exitCode, value: result.consumed as T };
}
