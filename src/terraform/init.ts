import { commandFailed, run, type Terraform } from './terraform.ts';

export interface InitOptions {
  backendConfigs?: readonly string[];
  /** false: skip the backend (contract checks, validation-only roots). */
  backend?: boolean;
  /** Refuse to change the dependency lock file (it ships with the module). */
  lockfileReadonly?: boolean;
}

export const initArgs = (o: InitOptions = {}): string[] => [
  'init',
  '-input=false',
  '-no-color',
  ...(o.backend === false ? ['-backend=false'] : []),
  ...(o.lockfileReadonly ? ['-lockfile=readonly'] : []),
  ...(o.backendConfigs ?? []).map((file) => `-backend-config=${file}`),
];

export async function init(tf: Terraform, options: InitOptions = {}): Promise<{ exitCode: number }> {
  const result = await run(tf, 'init', initArgs(options));
  if (result.exitCode !== 0) throw commandFailed('init', result, 'InitFailed');
  return { exitCode: result.exitCode };
}
