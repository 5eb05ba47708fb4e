import { RunnerError } from '../errors.ts';
import { commandFailed, run, type Terraform } from './terraform.ts';

export interface TerraformOutput {
  sensitive: boolean;
  type?: unknown;
  value?: unknown;
}

export const outputArgs = (): string[] => ['output', '-json', '-no-color'];

export async function output(tf: Terraform): Promise<{ exitCode: number; outputs: Record<string, TerraformOutput> }> {
  const result = await run(tf, 'output', outputArgs(), { captureStdout: true });
  if (result.exitCode !== 0) throw commandFailed('output', result, 'OutputFailed');
  try {
    return { exitCode: 0, outputs: JSON.parse(result.stdout || '{}') };
  } catch (error) {
    throw new RunnerError({ kind: 'terraform', reason: 'OutputFailed', step: 'output', message: `terraform output -json printed invalid JSON: ${(error as Error).message}` });
  }
}
