// Every reading of terraform's human output, in one place: who holds the state lock, a stale saved
// plan, what stopped init, terraform's diagnostics (and its last error on one line), and the
// providers init looked for. Which diagnostics fail the same way on every retry: known-diagnostics.ts.
// Terraform says these things only in text meant for people, so each rule here is tested on what
// terraform really prints (test/fixtures/terraform-output, test/terraform/diagnostics.test.ts).
// Pure: no process, no file.
//
// stderr is not terraform's alone: a module can put anything in it (a failed provisioner's output is
// quoted in terraform's error). What a module cannot do is take terraform's own error summary out.
// So a refusal the runner acts on (a stale plan: "nothing was applied"; a held lock: "who holds
// it") counts only as terraform's sole error diagnostic, in a stderr read whole.

/** Who holds the state lock, as terraform reports it when it cannot take it. */
export interface LockReport {
  id?: string;
  path?: string;
  operation?: string;
  who?: string;
  /** `who`'s host: terraform writes `user@hostname`, and in a pod the hostname is the pod's name. */
  host?: string;
  /** RFC 3339, UTC (terraform prints Go's `2006-01-02 15:04:05.999 -0700 MST` on stderr, RFC 3339 in the lock info file). */
  created?: string;
  /** pg reports the waiting process's own lock info, not the holder's: never present that as the holder. */
  holderKnown: boolean;
}

/** A lock as terraform describes it by its fields (ID, Path, Operation, Who, Created), told the same way from its message and from its lock info file. */
export function lockReportOf(
  field: (name: 'ID' | 'Path' | 'Operation' | 'Who' | 'Created') => string | undefined,
): LockReport {
  const id = field('ID');
  // Without an id there is nothing that names the holder: say so rather than guess.
  if (id === undefined) return { holderKnown: false };
  const report: LockReport = { holderKnown: true, id };
  const set = <K extends keyof LockReport>(key: K, value: LockReport[K] | undefined) => {
    if (value !== undefined) report[key] = value;
  };
  set('path', field('Path'));
  set('operation', field('Operation'));
  const who = field('Who');
  set('who', who);
  set('host', who?.includes('@') ? who.slice(who.lastIndexOf('@') + 1) || undefined : undefined);
  const created = field('Created');
  set('created', created === undefined ? undefined : rfc3339(created));
  return report;
}

/** A time terraform wrote (Go's default form or RFC 3339) as RFC 3339 in UTC, its fraction of a second kept as written; undefined when it is neither. */
export function rfc3339(time: string): string | undefined {
  const match =
    /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?[ ]?(Z|[+-]\d{2}:?\d{2})?(?: [A-Z]{1,5})?$/.exec(
      time.trim(),
    );
  if (!match) return undefined;
  const offset = match[4] === undefined || match[4] === 'Z' ? 'Z' : `${match[4].slice(0, 3)}:${match[4].slice(-2)}`;
  const ms = Date.parse(`${match[1]}T${match[2]}${offset}`);
  if (Number.isNaN(ms)) return undefined;
  return `${new Date(ms).toISOString().slice(0, 19)}${match[3] ? `.${match[3]}` : ''}Z`;
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
  /** Every diagnostic terraform printed (printedDiagnostics). */
  diagnostics: PrintedDiagnostic[];
}

/** `complete`: stderr was read whole (the driver keeps a tail; a cut one may have lost terraform's own summary). */
export function diagnose(stderr: string, { complete }: { complete: boolean }): Diagnosis {
  return {
    problem: problemOf(stderr, complete),
    summary: lastDiagnostic(stderr),
    lastLine: lastLine(stderr),
    diagnostics: printedDiagnostics(stderr),
  };
}

function problemOf(stderr: string, complete: boolean): Problem {
  const lock = complete ? detectLockError(stderr) : undefined;
  if (lock) return { kind: 'stateLocked', lock };
  if (complete && isStalePlan(stderr)) return { kind: 'stalePlan' };
  return initProblem(stderr) ?? { kind: 'other' };
}

/** stderr's lines without the frame coloured output draws (the runner asks for none: -no-color). */
const unframedLines = (stderr: string) => stderr.split('\n').map((line) => line.replace(/^[│╷╵](?: |$)/, ''));

/** terraform's error diagnostic when it is the only one in `stderr` (whole): its summary and the lines after it. */
function soleError(stderr: string): { summary: string; after: string[] } | undefined {
  const lines = unframedLines(stderr);
  const summaries = lines.flatMap((line, i) => (line.startsWith('Error: ') ? [i] : []));
  if (summaries.length !== 1) return undefined;
  const at = summaries[0]!;
  return { summary: lines[at]!.slice('Error: '.length).trimEnd(), after: lines.slice(at + 1) };
}

/** The holder of the state lock, when terraform's sole error is that it could not take it (stderr whole). */
export function detectLockError(stderr: string): LockReport | undefined {
  const error = soleError(stderr);
  if (error?.summary !== 'Error acquiring the state lock') return undefined;
  const detail = error.after.join('\n');
  const field = (name: string) => {
    const match = new RegExp(`^[ \\t]*${name}:[ \\t]*(.*)$`, 'm').exec(detail);
    return match?.[1]?.trim() || undefined;
  };
  // "Workspace is already locked" / "Already locked for workspace creation" is pg's advisory lock:
  // the Lock Info that follows is our own request, not the holder's.
  const ownRequest = /already locked/i.test(detail);
  return ownRequest ? { holderKnown: false } : lockReportOf(field);
}

/** terraform's sole error is that it refuses a stale saved plan, which it does before it changes anything (stderr whole). */
export function isStalePlan(stderr: string): boolean {
  return soleError(stderr)?.summary === 'Saved plan is stale';
}

/** What stopped init, when it is one of the two things an image or module can fix (contract check's hints). */
export function initProblem(
  stderr: string,
): Extract<Problem, { kind: 'providerNotInstallable' | 'lockFile' }> | undefined {
  const text = oneLine(stderr);
  if (
    /not found in any of the search locations|Failed to query available provider packages|Failed to install provider/.test(
      text,
    )
  )
    return { kind: 'providerNotInstallable' };
  if (/lock file is read-only|dependency lock file/.test(text)) return { kind: 'lockFile' };
  return undefined;
}

/** One diagnostic as terraform prints it for people (-no-color), read from stderr. */
export interface PrintedDiagnostic {
  severity: 'error' | 'warning';
  summary: string;
  /** Its paragraphs, each on one line (terraform's word-wrap undone), separated by a blank line; '' when it has none. */
  detail: string;
  /** Where terraform points ("on main.tf line 3"), as it names the file: relative to its working directory, or absolute. */
  file?: string;
  line?: number;
  /** The JSON key that starts the quoted source line (a variables file has one variable per line); never its value. */
  sourceKey?: string;
  /**
   * The references whose values terraform noted under the quoted source (`var.role`, `path.module`,
   * `local.shout`): their names only, never the values. Absent when it noted none.
   */
  references?: string[];
}

/**
 * terraform's diagnostics in stderr, in order: "Error: " or "Warning: " at the start of a line after
 * a blank one, the summary, the location, the quoted source and the values noted under it (where
 * terraform points, never kept: they can hold values), then the paragraphs that say what is wrong.
 */
export function printedDiagnostics(stderr: string): PrintedDiagnostic[] {
  const unframed = unframedLines(stderr);
  // Only spaces and tabs go: other white space may belong to a secret the masker must still find.
  const lines = unframed.map((l) => l.replace(/^[ \t]+/, '').replace(/[ \t]+$/, ''));
  const starts = lines.flatMap((_, i) =>
    /^(Error|Warning): /.test(unframed[i]!) && (i === 0 || lines[i - 1] === '') ? [i] : [],
  );
  // The quoted source ("  30:   provisioner …") and the values noted under it ("    ├────", "    │ var.x is 0").
  const pointer = (i: number) => /^(with |\d+:)/.test(lines[i]!) || /^[ \t]+[├│]/.test(unframed[i]!);
  return starts.map((start, n) => {
    const end = starts[n + 1] ?? lines.length;
    const severity = lines[start]!.startsWith('Error: ') ? 'error' : 'warning';
    let at = start;
    const summary = [lines[at]!.slice(severity === 'error' ? 'Error: '.length : 'Warning: '.length)];
    while (++at < end && lines[at] !== '') summary.push(lines[at]!); // a summary terraform wrapped (init's preamble)
    while (at < end && lines[at] === '') at++;
    let location: RegExpExecArray | null = null;
    let sourceKey: string | undefined;
    const references: string[] = [];
    for (
      let on: RegExpExecArray | null;
      at < end && ((on = /^on (.+) line (\d+)(?:, in .*)?:$/.exec(lines[at]!)) || pointer(at));
      at++
    ) {
      location ??= on;
      const key = location && !on ? /^\d+:\s+("(?:[^"\\]|\\.)*")\s*:/.exec(lines[at]!)?.[1] : undefined;
      if (key && sourceKey === undefined) sourceKey = JSON.parse(key) as string;
      const noted =
        location && !on ? /^│\s+(?!while calling )(\S+) (?:is|has|will be)\b/.exec(lines[at]!)?.[1] : undefined;
      if (noted !== undefined && !references.includes(noted)) references.push(noted);
    }
    const paragraphs: string[] = [];
    for (let from = at; from < end; ) {
      while (from < end && lines[from] === '') from++;
      let to = from;
      while (to < end && lines[to] !== '') to++;
      if (to > from) paragraphs.push(lines.slice(from, to).join(' '));
      from = to;
    }
    return {
      severity,
      summary: summary.join(' '),
      detail: paragraphs.join('\n\n'),
      ...(location ? { file: location[1]!, line: Number(location[2]) } : {}),
      ...(sourceKey !== undefined ? { sourceKey } : {}),
      ...(references.length ? { references } : {}),
    };
  });
}

/**
 * terraform's last "Error:" diagnostic on one line: the summary and the paragraph after it (where
 * terraform says what is wrong), without the location and the quoted source. undefined when there is none.
 */
export function lastDiagnostic(stderr: string): string | undefined {
  const last = printedDiagnostics(stderr).findLast((d) => d.severity === 'error');
  if (!last) return undefined;
  const said = last.detail.split('\n\n')[0];
  return said ? `Error: ${last.summary} ${said}` : `Error: ${last.summary}`;
}

/** The last line of stderr that says something: never a diagnostic's frame alone (`╵`); '' when it printed nothing. */
export function lastLine(stderr: string): string {
  return (
    unframedLines(stderr)
      .map((line) => line.trim())
      .findLast((line) => line !== '') ?? ''
  );
}

/**
 * The providers init looked for, from its progress lines ("- Finding latest version of
 * hashicorp/null...", "- Finding hashicorp/null versions matching "~> 3.0"..."). Built-in
 * providers are never looked for. Read from init because `terraform providers` needs an
 * initialized backend, which a contract check never has.
 */
export function providersInInitOutput(lines: readonly string[]): string[] {
  const found = lines.map(
    (line) => /^- Finding (?:latest version of )?(\S+?)(?:\.\.\.| versions matching)/.exec(line.trim())?.[1],
  );
  return [...new Set(found.filter((p): p is string => p !== undefined))].sort();
}

/** terraform wraps its messages at ~78 columns: join them before matching a phrase. */
const oneLine = (text: string) => text.replace(/[│╷╵]/g, ' ').replace(/\s+/g, ' ');
