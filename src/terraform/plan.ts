import { succeeded, type RunExtras, type Terraform } from './terraform.ts';

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
  /** `-detailed-exitcode` said 2: the plan has changes. */
  hasChanges: boolean;
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

/** Plan with a saved plan file. Exit 0 no changes, 2 changes; a failed plan (exit 1) throws. */
export async function plan(
  tf: Terraform,
  options: PlanOptions,
  extras: Pick<RunExtras, 'beforeTail'> = {},
): Promise<PlanResult> {
  const run = succeeded(await tf.run('plan', planArgs(options), extras), 'PlanFailed');
  return { exitCode: run.exitCode, hasChanges: run.meaning === 'changes' };
}
