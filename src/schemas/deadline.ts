// When a run given --deadline stops itself (pure): early enough that terraform's graceful stop
// (--stop-grace), its kill and the result, and in a cluster the hand-back to Kubernetes, all fit
// before the deadline. A deadline that leaves no time before that stop is refused up front.
import { durationMs } from '../util/duration.ts';

/**
 * The hand-back to Kubernetes after the local result exists (the result Secret, the Job's
 * annotations) ends within this, and never past --deadline; in a cluster the run stops itself this
 * much earlier, so a stopped run's hand-back fits too.
 */
export const HANDBACK_BUDGET_MS = 15_000;
/** After --stop-grace: the second interrupt, the kill of terraform's process group and the result. */
const STOP_MARGIN_MS = 5_000;

/** What a Job's activeDeadlineSeconds keeps for scheduling and the image pull: CAPTF_DEADLINE is activeDeadlineSeconds − this. */
const JOB_START_ALLOWANCE_S = 300;

export interface DeadlineSettings {
  deadline?: string;
  stopGrace: string;
  /** A Job identity: the run hands its result back to Kubernetes. */
  inCluster: boolean;
}

/** When --deadline runs out (Date.now() clock) for a run started at `startedAt`; Infinity without one. */
export const deadlineAt = (startedAt: Date, deadline: string | undefined): number =>
  deadline ? startedAt.getTime() + durationMs(deadline) : Infinity;

/** How long after its start the run stops itself; undefined without a deadline (negative: no time at all). */
export function stopAfterMs(settings: DeadlineSettings): number | undefined {
  if (!settings.deadline) return undefined;
  return (
    durationMs(settings.deadline) -
    durationMs(settings.stopGrace) -
    STOP_MARGIN_MS -
    (settings.inCluster ? HANDBACK_BUDGET_MS : 0)
  );
}

/** Why a deadline is refused, with the rule and what to give instead; undefined when it leaves time to run. */
export function deadlineProblem(settings: DeadlineSettings): string | undefined {
  const stopAfter = stopAfterMs(settings);
  if (stopAfter === undefined || stopAfter > 0) return undefined;
  const handBack = settings.inCluster ? ` − ${HANDBACK_BUDGET_MS / 1000}s (the hand-back to Kubernetes)` : '';
  const least =
    durationMs(settings.stopGrace) / 1000 +
    STOP_MARGIN_MS / 1000 +
    (settings.inCluster ? HANDBACK_BUDGET_MS / 1000 : 0);
  // A Job passes activeDeadlineSeconds − JOB_START_ALLOWANCE as CAPTF_DEADLINE (contract/sections/kubernetes.md): its floor.
  const jobFloor = settings.inCluster
    ? ` (a Job passes its activeDeadlineSeconds − ${JOB_START_ALLOWANCE_S}: the shortest Job has activeDeadlineSeconds above ${least + JOB_START_ALLOWANCE_S}s, the op's own time on top of that)`
    : '';
  return (
    `--deadline ${settings.deadline} leaves the run no time: it stops itself at the deadline − --stop-grace (${settings.stopGrace}) − ${STOP_MARGIN_MS / 1000}s (to stop terraform and write the result)${handBack}, ` +
    `which is before it starts. Give a --deadline longer than ${least}s${jobFloor}, or a shorter --stop-grace; nothing was run`
  );
}
