// A step that runs long says so. While terraform's output is held back (the plan's, until the
// classification has taught the masker) or quiet, the run logs every PROGRESS_INTERVAL_MS the step,
// how long it has run and what terraform has reported so far: counts of the lines it printed (or
// that the runner holds), never the lines themselves, so that nothing held is printed unmasked.

/** How often a long step says so. */
export const PROGRESS_INTERVAL_MS = 30_000;

/**
 * FOR TESTS ONLY: the end-to-end test of the progress lines sets this variable to see them within
 * a second instead of 30 s. It is no setting (no flag, not in contract.md) and is never below
 * MIN_TEST_INTERVAL_MS, so a Job's environment that carries it floods no log.
 */
export const TEST_INTERVAL_VARIABLE = 'RUNNER_TEST_PROGRESS_INTERVAL_MS';
const MIN_TEST_INTERVAL_MS = 100;

export function progressIntervalMs(env: NodeJS.ProcessEnv): number {
  const given = Number(env[TEST_INTERVAL_VARIABLE]);
  return Number.isInteger(given) && given > 0 ? Math.max(given, MIN_TEST_INTERVAL_MS) : PROGRESS_INTERVAL_MS;
}

/** What terraform reports of the resource instances it works on, one line each. */
export type ReportedEvent = 'refreshed' | 'read' | 'created' | 'updated' | 'destroyed';
type Reported = Partial<Record<ReportedEvent, number>>;

// terraform's (and OpenTofu's) hook lines: "ADDRESS: Refreshing state... [id=…]", "ADDRESS:
// Creation complete after 1s [id=…]"; a deposed object's address reads "ADDRESS (deposed object ID)".
// The line starts with a whole resource instance address (its keys quoted as terraform quotes them)
// and the event follows it at once: a provisioner's output, which a module controls, is prefixed
// "ADDRESS (local-exec): " line by line, so no line it prints reads as terraform's own.
const NAME = '[A-Za-z_][A-Za-z0-9_-]*';
const KEY = '\\[(?:[0-9]+|"(?:[^"\\\\]|\\\\.)*")\\]';
const ADDRESS = `(?:module\\.${NAME}(?:${KEY})?\\.)*(?:(?:data|ephemeral)\\.)?${NAME}\\.${NAME}(?:${KEY})?`;
const EVENT_LINE = new RegExp(
  `^${ADDRESS}(?: \\(deposed object [0-9a-f]+\\))?: (Refreshing state\\.\\.\\.|Read complete after |Creation complete after |Modifications complete after |Destruction complete after )`,
);
/**
 * terraform's last lines of an apply: what follows (the root module's outputs, a multi-line value's
 * lines as they are, from the first column) is the module's text, never counted.
 */
const CLOSING_LINE = /^(?:Apply|Destroy) complete! Resources: /;
const EVENT_OF: Record<string, ReportedEvent> = {
  'Refreshing state...': 'refreshed',
  'Read complete after ': 'read',
  'Creation complete after ': 'created',
  'Modifications complete after ': 'updated',
  'Destruction complete after ': 'destroyed',
};

/** The event a line of terraform's human output reports, if any (pure): a line terraform itself prints for a resource instance. */
export function reportedEvent(line: string): ReportedEvent | undefined {
  const match = EVENT_LINE.exec(line);
  return match ? EVENT_OF[match[1]!] : undefined;
}

export interface ProgressReport {
  step: string;
  elapsedMs: number;
  /** held: terraform's output is held until the plan is classified; quiet: nothing was printed for an interval (terraform's or not: some steps run none). */
  output: 'held' | 'quiet';
  reported: Reported;
}

/** The timer the watch runs on: real time in a run, a fake one in tests. */
export interface ProgressClock {
  now(): number;
  every(ms: number, tick: () => void): { stop(): void };
}

const realClock: ProgressClock = {
  now: () => Date.now(),
  every(ms, tick) {
    const timer = setInterval(tick, ms).unref(); // a progress line never keeps the runner alive
    return { stop: () => clearInterval(timer) };
  },
};

interface Watched {
  step: string;
  startedAt: number;
  reported: Reported;
  held: boolean;
  /** When terraform last printed a line (or the step started). */
  printedAt: number;
  /** terraform printed its closing line: the outputs follow, never counted. */
  closed: boolean;
}

/** Watches one step at a time (steps are sequential): told each line terraform prints or the runner holds. */
export class ProgressWatch {
  #current: Watched | undefined;

  constructor(
    private readonly report: (progress: ProgressReport) => void,
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
    private readonly clock: ProgressClock = realClock,
  ) {}

  /** Starts watching a step; the returned function ends it. */
  start(step: string): () => void {
    const now = this.clock.now();
    const watched: Watched = { step, startedAt: now, reported: {}, held: false, printedAt: now, closed: false };
    this.#current = watched;
    const timer = this.clock.every(this.intervalMs, () => this.#tick(watched));
    return () => {
      timer.stop();
      if (this.#current === watched) this.#current = undefined;
    };
  }

  /** The current step's terraform output is held from now on (the plan's): its progress says so from the first interval. */
  hold(): void {
    if (this.#current) this.#current.held = true;
  }

  /** A line of terraform's output: printed as it came, or held back (counted, never kept here). Outside a step it counts for nothing. */
  saw(line: string, how: 'printed' | 'held'): void {
    const watched = this.#current;
    if (!watched) return;
    if (how === 'printed') watched.printedAt = this.clock.now();
    if (watched.closed) return;
    if (CLOSING_LINE.test(line)) watched.closed = true;
    const event = reportedEvent(line);
    if (event) watched.reported[event] = (watched.reported[event] ?? 0) + 1;
  }

  #tick(watched: Watched): void {
    const now = this.clock.now();
    if (!watched.held && now - watched.printedAt < this.intervalMs) return; // terraform's own lines show it is working
    this.report({
      step: watched.step,
      elapsedMs: now - watched.startedAt,
      output: watched.held ? 'held' : 'quiet',
      reported: { ...watched.reported },
    });
  }
}

/** The log line's message: "plan: running for 1m30s; terraform's output is held until the plan is classified; so far terraform reported 12 refreshed". */
export function progressMessage(progress: ProgressReport, intervalMs: number): string {
  const counts = Object.entries(progress.reported).map(([event, count]) => `${count} ${event}`);
  const output =
    progress.output === 'held'
      ? "terraform's output is held until the plan is classified"
      : `nothing printed for ${elapsedText(intervalMs)}`;
  return `${progress.step}: running for ${elapsedText(progress.elapsedMs)}; ${output}; ${counts.length ? `so far terraform reported ${counts.join(', ')}` : 'no resource reported yet'}`;
}

/** 95000 → "1m35s"; under a second: "0.4s". */
export function elapsedText(ms: number): string {
  if (ms < 1000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.floor(ms / 1000);
  const [h, m, s] = [Math.floor(seconds / 3600), Math.floor(seconds / 60) % 60, seconds % 60];
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}
