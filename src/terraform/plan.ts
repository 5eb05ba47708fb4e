import { commandFailed, interpretExit, run, type Terraform } from './terraform.ts';

export interface PlanOptions {
  out: string;
  varFiles?: readonly string[];
  vars?: Readonly<Record<string, string>>;
  lockTimeout?: string;
  destroy?: boolean;
  refreshOnly?: boolean;
}

export interface PlanResult {
  exitCode: number;
  hasChanges: boolean;
  stderrTail: string;
}

export const planArgs = (o: PlanOptions): string[] => [
  'plan',
  '-input=false',
  '-no-color',
  '-detailed-exitcode',
  `-out=${o.out}`,
  ...(o.lockTimeout ? [`-lock-timeout=${o.lockTimeout}`] : []),
  ...(o.destroy ? ['-destroy'] : []),
  ...(o.refreshOnly ? ['-refresh-only'] : []),
  ...(o.varFiles ?? []).map((file) => `-var-file=${file}`),
  ...Object.entries(o.vars ?? {}).flatMap(([name, value]) => ['-var', `${name}=${value}`]),
];

/** Plan with a saved plan file. Exit 0 no changes, 2 changes; a failed plan throws unless it wrote an errored plan. */
export async function plan(tf: Terraform, options: PlanOptions): Promise<PlanResult> {
  const result = await run(tf, 'plan', planArgs(options));
  const meaning = interpretExit('plan', result.exitCode, true);
  if (meaning === 'error') throw commandFailed('plan', result, 'PlanFailed');
  return { exitCode: result.exitCode, hasChanges: meaning === 'changes', stderrTail: result.stderrTail };
}
