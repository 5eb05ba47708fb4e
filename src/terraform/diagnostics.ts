// Every reading of terraform's human output, in one place: who holds the state lock, a stale saved
// plan, what stopped init, terraform's last error on one line, and the providers init looked for.
// Terraform says these things only in text meant for people, so each rule here is tested on what
// terraform really prints (test/fixtures/terraform-output, test/terraform/diagnostics.test.ts).
// Pure: no process, no file.

/** Who holds the state lock, as terraform reports it when it cannot take it. */
export interface LockReport {
  id?: string;
  path?: string;
  operation?: string;
  who?: string;
  created?: string;
  /** pg reports the waiting process's own lock info, not the holder's: never present that as the holder. */
  holderKnown: boolean;
}

/** What terraform's stderr says went wrong, as far as the runner acts on it. */
export type Problem =
  /** The state lock is held by someone else. */
  | { kind: 'stateLocked'; lock: LockReport }
  /** apply refused a saved plan because the state changed after it was planned: it changed nothing. */
  | { kind: 'stalePlan' }
  /** init could not install a provider (not in the image's mirror, no registry reachable). */
  | { kind: 'providerNotInstallable' }
  /** init refused the dependency lock file (read-only, or it does not match the providers). */
  | { kind: 'lockFile' }
  | { kind: 'other' };

/** A failed command's stderr, read once. */
export interface Diagnosis {
  problem: Problem;
  /** terraform's last `Error:` diagnostic on one line (lastDiagnostic); undefined when there is none. */
  summary: string | undefined;
  /** The last line of stderr: what is left to quote when there is no diagnostic. */
  lastLine: string;
}

export function diagnose(stderr: string): Diagnosis {
  return { problem: problemOf(stderr), summary: lastDiagnostic(stderr), lastLine: lastLine(stderr) };
}

function problemOf(stderr: string): Problem {
  const lock = detectLockError(stderr);
  if (lock) return { kind: 'stateLocked', lock };
  if (isStalePlan(stderr)) return { kind: 'stalePlan' };
  return initProblem(stderr) ?? { kind: 'other' };
}

export function detectLockError(stderr: string): LockReport | undefined {
  if (!/Error acquiring the state lock/i.test(stderr)) return undefined;
  const field = (name: string) => {
    const match = new RegExp(`^[│\\s]*${name}:\\s*(.*)$`, 'm').exec(stderr);
    return match?.[1]?.trim() || undefined;
  };
  // "Workspace is already locked" / "Already locked for workspace creation" is pg's advisory lock:
  // the Lock Info that follows is our own request, not the holder's.
  const ownRequest = /already locked/i.test(stderr);
  const id = ownRequest ? undefined : field('ID');
  // Without an id there is nothing that names the holder: say so rather than guess.
  const report: LockReport = { holderKnown: id !== undefined };
  if (id !== undefined) {
    report.id = id;
    report.path = field('Path');
    report.operation = field('Operation');
    report.who = field('Who');
    report.created = field('Created');
  }
  return report;
}

/** terraform refuses a stale saved plan before it changes anything. */
export function isStalePlan(stderr: string): boolean {
  return /Saved plan is stale/i.test(stderr);
}

/** What stopped init, when it is one of the two things an image or module can fix (contract check's hints). */
export function initProblem(stderr: string): Extract<Problem, { kind: 'providerNotInstallable' | 'lockFile' }> | undefined {
  const text = oneLine(stderr);
  if (/not found in any of the search locations|Failed to query available provider packages|Failed to install provider/.test(text)) return { kind: 'providerNotInstallable' };
  if (/lock file is read-only|dependency lock file/.test(text)) return { kind: 'lockFile' };
  return undefined;
}

/**
 * terraform's last "Error:" diagnostic on one line: the summary and the paragraph after it (where
 * terraform says what is wrong), without the box drawing. undefined when there is none.
 */
export function lastDiagnostic(stderr: string): string | undefined {
  // The frame coloured output draws at the start of each line (the runner asks for none: -no-color).
  const unframed = stderr.split('\n').map((l) => l.replace(/^[│╷╵](?: |$)/, ''));
  // Only spaces and tabs go: other white space may belong to a secret the masker must still find.
  const lines = unframed.map((l) => l.replace(/^[ \t]+/, '').replace(/[ \t]+$/, ''));
  const start = lines.findLastIndex((line) => line.startsWith('Error:'));
  if (start < 0) return undefined;
  // Where terraform points, not what it says: the location, the quoted source ("on main.tf line 3:",
  // "  30:   provisioner …") and the values noted under it ("    ├────", "    │ var.x is 0").
  const pointer = (i: number) => /^(on .* line \d+|with |\d+:)/.test(lines[i]!) || /^[ \t]+[├│]/.test(unframed[i]!);
  let from = start + 1;
  while (from < lines.length && lines[from] === '') from++; // the blank line after the summary
  while (from < lines.length && pointer(from)) from++;
  while (from < lines.length && lines[from] === '') from++;
  let to = from;
  while (to < lines.length && lines[to] !== '') to++;
  const detail = lines.slice(from, to).join(' ').trim();
  return detail ? `${lines[start]} ${detail}` : lines[start];
}

/** The last line of stderr ('' when it printed nothing). */
export function lastLine(stderr: string): string {
  return stderr.trim().split('\n').at(-1) ?? '';
}

/**
 * The providers init looked for, from its progress lines ("- Finding latest version of
 * hashicorp/null...", "- Finding hashicorp/null versions matching "~> 3.0"..."). Built-in
 * providers are never looked for. Read from init because `terraform providers` needs an
 * initialized backend, which a contract check never has.
 */
export function providersInInitOutput(lines: readonly string[]): string[] {
  const found = lines.map((line) => /^- Finding (?:latest version of )?(\S+?)(?:\.\.\.| versions matching)/.exec(line.trim())?.[1]);
  return [...new Set(found.filter((p): p is string => p !== undefined))].sort();
}

/** terraform wraps its messages at ~78 columns: join them before matching a phrase. */
const oneLine = (text: string) => text.replace(/[│╷╵]/g, ' ').replace(/\s+/g, ' ');
