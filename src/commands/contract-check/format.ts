// The contract report for people: one row per check, the fix under each violation, a verdict.
import type { ContractReport } from './check.ts';

const LABEL = { pass: 'ok', fail: 'FAIL', skip: 'skip' } as const;

export function formatContractTable(report: ContractReport): string {
  const nameWidth = Math.max(5, ...report.checks.map((c) => c.name.length));
  const row = (name: string, status: string, text: string) => `${name.padEnd(nameWidth)}  ${status.padEnd(6)}  ${text}`;
  const lines = [row('CHECK', 'RESULT', 'DETAIL')];
  for (const check of report.checks) {
    lines.push(row(check.name, LABEL[check.status], check.message));
    if (check.fix) lines.push(row('', '', `fix: ${check.fix}`));
  }
  const violations = report.checks.filter((c) => !c.ok).length;
  lines.push(
    '',
    violations === 0
      ? 'contract check passed: the image keeps the runner contract (runner.captf.io/v1)'
      : `contract check failed: ${violations} violation${violations === 1 ? '' : 's'} of the runner contract (runner.captf.io/v1)`,
  );
  return lines.join('\n') + '\n';
}
