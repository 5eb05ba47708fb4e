import { RunnerError } from '../errors.ts';
import { succeeded, type Terraform } from './terraform.ts';

export interface TerraformOutput {
  sensitive: boolean;
  type?: unknown;
  value?: unknown;
}

export interface OutputResult {
  exitCode: number;
  outputs: Record<string, TerraformOutput>;
}

export const outputArgs = (): string[] => ['output', '-json', '-no-color'];

export async function output(tf: Terraform): Promise<OutputResult> {
  const run = succeeded(await tf.run('output', outputArgs(), { captureStdout: true }), 'OutputFailed');
  try {
    return { exitCode: run.exitCode, outputs: JSON.parse(run.stdout || '{}') };
  } catch (error) {
    throw new RunnerError({ kind: 'terraform', reason: 'OutputFailed', step: 'output', message: `terraform output -json printed invalid JSON: ${(error as Error).message}` });
  }
}
