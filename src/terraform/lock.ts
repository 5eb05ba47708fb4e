// Terraform reports a held lock only in its human output. This is the one place that reads it.
export interface LockReport {
  id?: string;
  path?: string;
  operation?: string;
  who?: string;
  created?: string;
  /** pg reports the waiting process's own lock info, not the holder's: never present that as the holder. */
  holderKnown: boolean;
}

export function detectLockError(stderr: string): LockReport | undefined {
  if (!/Error acquiring the state lock/i.test(stderr)) return undefined;
  const field = (name: string) => {
    const match = new RegExp(`^[│\\s]*${name}:\\s*(.*)$`, 'm').exec(stderr);
    return match?.[1]?.trim() || undefined;
  };
  // "Workspace is already locked" is pg's advisory lock: the Lock Info that follows is our own request.
  const holderKnown = !/already locked/i.test(stderr);
  const report: LockReport = { holderKnown };
  if (holderKnown) {
    report.id = field('ID');
    report.path = field('Path');
    report.operation = field('Operation');
    report.who = field('Who');
    report.created = field('Created');
  }
  return report;
}
