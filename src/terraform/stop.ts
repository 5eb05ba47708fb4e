// How a run stops the terraform it started. The run context holds one StopHandle; every terraform
// started for that run (createTerraform's `stop`) is registered with it while it runs, so a signal
// handler reaches all of them and nothing else.
import { RunnerError } from '../errors.ts';

/** How hard to stop: terraform's graceful stop, its immediate exit, or the end of its process group. */
export type StopLevel = 'graceful' | 'immediate' | 'kill';

export class StopHandle {
  /**
   * The terraform processes running now. Steps are sequential, but one step may run several at
   * once: every one of them must get the interrupt, or a hung one keeps the runner alive past its
   * deadline.
   */
  readonly #running = new Set<number>();

  /** The steps waiting now (RunContext.step): giveUp rejects them. */
  readonly #waiting = new Set<(error: Error) => void>();

  /** Whether this handle has killed a process group: a terraform that died by SIGKILL since was ended by the run, not from outside. */
  killed = false;

  /**
   * What a step awaits beside its body: it rejects when the run gives up on the step (giveUp). A
   * step that is not terraform (a read that never returns) cannot be interrupted; the run must still
   * end `interrupted`. `done()` when the step ended.
   */
  waitForGiveUp(): { given: Promise<never>; done(): void } {
    let reject!: (error: Error) => void;
    const given = new Promise<never>((_resolve, rejectGiven) => (reject = rejectGiven));
    given.catch(() => undefined); // settled after the step ended: nobody awaits it then
    this.#waiting.add(reject);
    return { given, done: () => this.#waiting.delete(reject) };
  }

  /** The steps waiting now, for giveUp(steps) later: a step that starts after it is not among them. */
  waitingNow(): ReadonlySet<(error: Error) => void> {
    return new Set(this.#waiting);
  }

  /**
   * The steps still waiting (of `steps` when given) end as interrupted, whatever they wait for:
   * after the kill stage, or once the grace has passed with no terraform left to stop.
   */
  giveUp(steps?: ReadonlySet<(error: Error) => void>): void {
    const gaveUp = new RunnerError({
      kind: 'interrupted',
      reason: 'Interrupted',
      message: steps
        ? 'the step is no terraform and did not end within the stop grace: the run gave up on it'
        : "the step did not end after terraform's process group was killed: the run gave up on it",
    });
    for (const reject of steps ?? this.#waiting) {
      if (!this.#waiting.delete(reject)) continue;
      reject(gaveUp);
    }
  }

  /** A terraform started (src/terraform/exec.ts); the returned function says it ended. */
  started(pid: number): () => void {
    this.#running.add(pid);
    return () => this.#running.delete(pid);
  }

  /**
   * Terraform's graceful stop: exactly one SIGINT (it stops starting operations, saves state and
   * releases the lock). A second SIGINT makes it exit at once; SIGKILL ends the group. `only` limits
   * it to the processes interrupted before; returns the processes it reached.
   */
  interrupt(level: StopLevel, only?: ReadonlySet<number>): Set<number> {
    const targets = new Set([...this.#running].filter((pid) => !only || only.has(pid)));
    for (const pid of targets) {
      if (level === 'kill') this.killed = killGroup(pid, 'SIGKILL') || this.killed;
      else {
        try {
          process.kill(pid, 'SIGINT');
        } catch {
          // it exited before its bookkeeping: nothing to interrupt (an uncaught throw here would end the runner without a result)
        }
      }
    }
    return targets;
  }
}

/** Signals terraform's process group (terraform runs in its own, and local-exec children with it). */
export function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // the group is already gone
  }
}
