// The contract report for people: one row per check, the fix under each violation, a verdict.
import type { ContractReport } from './report.ts';

export function formatContractTable(report: ContractReport): string {
  const nameWidth = Math.max(5, ...report.checks.map((c) => c.name.length));
  const row = (name: string, status: string, text: string) => `${name.padEnd(nameWidth)}  ${status.padEnd(6)}  ${text}`;
  const lines = [row('CHECK', 'RESULT', 'DETAIL')];
  for (const check of report.checks) {
    lines.push(row(check.name, check.status, check.message));
    if (check.fix) lines.push(row('', '', `fix: ${check.fix}`));
    for (const warning of check.warnings ?? []) lines.push(row('', '', `warn: ${warning}`));
  }
  const violations = report.checks.filter((c) => c.status === 'fail').length;
  lines.push(
    '',
    violations === 0
      ? 'contract check: pass (the module keeps the runner contract, runner.captf.io/v1)'
      : `contract check: fail (${violations} violation${violations === 1 ? '' : 's'} of the runner contract, runner.captf.io/v1)`,
  );
  return lines.join('\n') + '\n';
}
