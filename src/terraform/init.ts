import { succeeded, type Terraform } from './terraform.ts';

export interface InitOptions {
  backendConfigs?: readonly string[];
  /** false: skip the backend (contract checks, validation-only roots). */
  backend?: boolean;
  /** Refuse to change the dependency lock file (it ships with the module). */
  lockfileReadonly?: boolean;
}

export interface InitResult {
  exitCode: number;
}

export const initArgs = (o: InitOptions = {}): string[] => [
  'init',
  '-input=false',
  '-no-color',
  ...(o.backend === false ? ['-backend=false'] : []),
  ...(o.lockfileReadonly ? ['-lockfile=readonly'] : []),
  ...(o.backendConfigs ?? []).map((file) => `-backend-config=${file}`),
];

/** A failed init throws TerraformFailed: its diagnosis says whether a provider or the lock file stopped it. */
export async function init(tf: Terraform, options: InitOptions = {}): Promise<InitResult> {
  const run = succeeded(await tf.run('init', initArgs(options)), 'InitFailed');
  return { exitCode: run.exitCode };
}
