import { RunnerError } from '../errors.ts';
import { lastLine } from './diagnostics.ts';
import type { PrintedDiagnostic } from './diagnostics.ts';
import { diagnosedError, type Terraform } from './terraform.ts';

/** A diagnostic of `validate -json`, as far as the runner reads it (its snippet, which quotes source and values, is never read). */
interface Diagnostic {
  severity: 'error' | 'warning';
  summary: string;
  detail?: string;
  range?: { filename?: string; start?: { line?: number } };
}

/** The JSON form in the shape of the human one, so one list and one report read both. */
const asPrinted = (d: Diagnostic): PrintedDiagnostic => ({
  severity: d.severity,
  summary: d.summary,
  detail: d.detail ?? '',
  ...(typeof d.range?.filename === 'string' ? { file: d.range.filename } : {}),
  ...(typeof d.range?.start?.line === 'number' ? { line: d.range.start.line } : {}),
});

export interface ValidateResult {
  exitCode: number;
  valid: boolean;
  diagnostics: Diagnostic[];
}

export const validateArgs = (): string[] => ['validate', '-json', '-no-color'];

/** validate -json reports problems as JSON on stdout, on exit 1 too: parse it either way. An invalid module throws ValidateFailed with its diagnostics. */
export async function validate(tf: Terraform): Promise<ValidateResult> {
  const result = await tf.run('validate', validateArgs(), { captureStdout: true });
  let report: { valid?: boolean; diagnostics?: Diagnostic[] };
  try {
    report = JSON.parse(result.stdout);
  } catch {
    // no cause: JSON.parse's message quotes the text it read, terraform's output, where a secret may be.
    throw new RunnerError({
      kind: 'terraform',
      reason: 'ValidateFailed',
      message: `terraform validate exited ${result.exitCode} without a JSON report: ${lastLine(result.stderrTail)}`,
    });
  }
  const diagnostics = report.diagnostics ?? [];
  if (diagnostics.length)
    await tf.output.lines(
      'stdout',
      diagnostics.map((d) => `${d.severity}: ${d.summary}${d.detail ? `: ${d.detail}` : ''}`),
      'validate',
    );
  await tf.output.end?.('stdout', 'validate');
  const valid = report.valid === true && result.meaning === 'ok';
  if (!valid) {
    const errors = diagnostics
      .filter((d) => d.severity === 'error')
      .map((d) => d.summary + (d.detail ? `: ${d.detail}` : ''));
    throw new RunnerError(
      diagnosedError('validate', diagnostics.map(asPrinted), true, result.place, {
        reason: 'ValidateFailed',
        message: `the module is not valid: ${errors.join('; ') || `terraform validate exited ${result.exitCode}`}`,
      }),
    );
  }
  return { exitCode: result.exitCode, valid, diagnostics };
}
