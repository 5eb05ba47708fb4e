// `captf-runner local` as a test runs it: the built runner (dist/captf-runner.mjs) in a working dir,
// with the default --dir (.captf-local), and what it printed checked line by line.
import assert from 'node:assert/strict';
import { runProcess } from '../support/exec.ts';
import { testTerraformEnv } from '../support/tf-modules.ts';
import { RUNNER } from '../support/runner.ts';

export interface Printed {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** `captf-runner local <args>` in `cwd`, with the default --dir (.captf-local), as the walk-through runs it. */
export const local = (cwd: string, ...args: string[]) => localWithInput(cwd, undefined, ...args);

export async function localWithInput(cwd: string, input: string | undefined, ...args: string[]): Promise<Printed> {
  const run = await runProcess(process.execPath, [RUNNER, 'local', ...args], {
    cwd,
    env: testTerraformEnv(),
    timeoutMs: 240_000,
    ...(input === undefined ? {} : { input }),
  });
  return { exitCode: run.exitCode ?? -1, stdout: run.stdout, stderr: run.stderr };
}

export const explainPrinted = (printed: Printed) =>
  `exit ${printed.exitCode}\nstdout:\n${printed.stdout}\nstderr:\n${printed.stderr.slice(-3000)}`;

/** The command exited 0 and its stdout matches every pattern. */
export function assertPrinted(printed: Printed, ...patterns: RegExp[]): void {
  assert.equal(printed.exitCode, 0, explainPrinted(printed));
  for (const pattern of patterns) assert.match(printed.stdout, pattern, explainPrinted(printed));
}
