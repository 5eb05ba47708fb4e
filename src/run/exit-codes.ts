// The exit-code table of contract.md, in one place.
import type { Outcome } from '../schemas/result.ts';
import type { RunnerError } from '../errors.ts';

/** The reason of a run refused because the backend holds another state than the object's (steps/state.ts). */
export const STATE_LINEAGE_MISMATCH = 'StateLineageMismatch';

export const EXIT = {
  succeeded: 0,
  failed: 1,
  usage: 2,
  blocked: 3,
  imageInvalid: 4,
  planStale: 5,
  /** drift with --detailed-exitcode: drift found (the outcome stays succeeded). */
  driftFound: 6,
  /** The backend holds another state than the object's (--expect-lineage): a person must restore it or fix the backend settings. */
  otherState: 7,
  /** A plan policy denies the plan (PolicyDenied): no approval passes it; classify --detailed-exitcode too. (7 is StateLineageMismatch's.) */
  policyDenied: 8,
  deadline: 124,
  sigint: 130,
  sigterm: 143,
} as const;

/** What each exit code tells the caller, as `--help` lists them (contract.md §5 says it in full). */
export const EXIT_MEANINGS: readonly [code: string, meaning: string][] = [
  [`${EXIT.succeeded}`, 'succeeded, or no changes'],
  [`${EXIT.failed}`, 'failed: a retry may pass (terraform failed, state locked, an API or disk failure)'],
  [`${EXIT.usage}`, 'invalid flags, settings or inputs: fix them'],
  [`${EXIT.blocked}`, 'blocked: the plan needs an approval (--approved-hash)'],
  [`${EXIT.imageInvalid}`, 'the image or module breaks the contract: fix the module'],
  [`${EXIT.planStale}`, 'the approved plan is stale or not the artifact approved: plan and approve again'],
  [`${EXIT.driftFound}`, 'drift --detailed-exitcode: drift found (classify --detailed-exitcode: 3 for a gated plan)'],
  [`${EXIT.otherState}`, "the state is not the object's (another lineage, or none: --expect-lineage): restore it or fix the backend settings"],
  [`${EXIT.policyDenied}`, 'a plan policy denies the plan: no approval passes it; change the plan or the policy (classify --detailed-exitcode too)'],
  [`${EXIT.deadline}`, 'stopped itself before --deadline'],
  [`${EXIT.sigint} / ${EXIT.sigterm}`, 'interrupted by SIGINT / SIGTERM'],
];

export function outcomeOf(error: RunnerError): Outcome {
  switch (error.kind) {
    case 'usage':
    case 'image':
    case 'policy':
      return 'invalid';
    case 'blocked':
      return 'blocked';
    case 'interrupted':
      return 'interrupted';
    default:
      return 'failed';
  }
}

export function exitCodeOf(outcome: Outcome, error?: RunnerError): number {
  switch (outcome) {
    case 'succeeded':
    case 'noChanges':
      return EXIT.succeeded;
    case 'blocked':
      return EXIT.blocked;
    case 'invalid':
      // A denial is told apart from a broken module (both need a change, not a retry).
      if (error?.kind === 'policy') return EXIT.policyDenied;
      // The image's module or its policy files: a retry with the same image cannot help.
      return error?.kind === 'image' ? EXIT.imageInvalid : EXIT.usage;
    case 'interrupted': {
      const cause = error?.detail?.cause;
      return cause === 'deadline' ? EXIT.deadline : cause === 'SIGINT' ? EXIT.sigint : EXIT.sigterm;
    }
    case 'failed':
      // Failures that recur on every retry: a new plan and approval (5), a change of the module (4), the object's state (7).
      if (error?.reason === 'PlanStale' || error?.reason === 'ArtifactMismatch') return EXIT.planStale;
      if (error?.reason === STATE_LINEAGE_MISMATCH) return EXIT.otherState;
      return error?.reason === 'RefreshRefused' ? EXIT.imageInvalid : EXIT.failed;
  }
}

/**
 * --detailed-exitcode, a flag only (no CAPTF_* variable, so a Job's environment cannot turn it on):
 * drift found exits 6, a classification a policy denies 8 and another gated one 3, instead of 0;
 * every other code stays.
 */
export function detailedExitCode(code: number, verdict: { driftFound?: boolean; gated?: boolean; denied?: boolean }): number {
  if (code !== EXIT.succeeded) return code;
  if (verdict.driftFound) return EXIT.driftFound;
  if (verdict.denied) return EXIT.policyDenied;
  return verdict.gated ? EXIT.blocked : code;
}

/** The exit code of a command that the error stopped: an op's (its result says the same) or another command's. */
export const exitCodeOfError = (error: RunnerError): number => exitCodeOf(outcomeOf(error), error);
