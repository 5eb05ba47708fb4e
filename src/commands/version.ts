// `captf-runner --version --json`: the runner, the contract it keeps, and the terraform an op would
// run here (CAPTF_TERRAFORM, else terraform on PATH), null when there is none: a check of a machine
// or an image that does not fail for want of terraform.
import { SETTING_OPTIONS } from '../schemas/setting-options.ts';
import { StopHandle } from '../terraform/stop.ts';
import { terraformVersion, type TerraformVersion } from '../terraform/version.ts';
import { CONTRACT_VERSION, RUNNER_VERSION } from '../version.ts';

export interface VersionReport {
  runner: string;
  contract: string;
  terraform: TerraformVersion | null;
  /** Why `terraform` is null. */
  terraformProblem?: string;
}

export async function versionReport(env: NodeJS.ProcessEnv): Promise<VersionReport> {
  const binary = env.CAPTF_TERRAFORM || String(SETTING_OPTIONS.terraform.default);
  const found = await terraformVersion(binary, { env, stop: new StopHandle() }).then(
    ({ path, version, flavor }) => ({ terraform: { path, version, flavor } }),
    (error: Error) => ({ terraform: null, terraformProblem: error.message }),
  );
  return { runner: RUNNER_VERSION, contract: CONTRACT_VERSION, ...found };
}

export async function versionJsonCommand(): Promise<void> {
  process.stdout.write(JSON.stringify(await versionReport(process.env)) + '\n');
}
