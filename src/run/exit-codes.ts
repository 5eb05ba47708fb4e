// The exit code of every command, read from the reason table (src/vocabulary/reasons.ts): a reason
// has one exit code, whatever op or command ends with it. Only a signal chooses among codes (Interrupted: 143, and 130,
// the row's alsoExitCodes).
import type { RunnerError } from '../errors.ts';
import { EXIT, REASONS, type Outcome, type Reason } from '../vocabulary/reasons.ts';

/** What each exit code tells the caller, as `--help` lists them (contract.md §5 says it in full). */
export const EXIT_MEANINGS: readonly [code: string, meaning: string][] = [
  [`${EXIT.succeeded}`, 'succeeded, or no changes'],
  [`${EXIT.failed}`, 'failed: a retry may pass (terraform failed, state locked, an API or disk failure)'],
  [`${EXIT.usage}`, 'invalid flags, settings or inputs: fix them (a retry fails the same way)'],
  [`${EXIT.blocked}`, 'blocked: the plan needs an approval (--approved-hash)'],
  [`${EXIT.imageInvalid}`, 'the image or module breaks the contract: fix the module or the image'],
  [`${EXIT.planStale}`, 'the approved plan is stale or not the artifact approved: plan and approve again'],
  [`${EXIT.driftFound}`, 'drift --detailed-exitcode: drift found (classify --detailed-exitcode: 3 for a gated plan)'],
  [
    `${EXIT.otherState}`,
    "the state is not the object's (another lineage, or none: --expect-lineage): restore it or fix the backend settings",
  ],
  [
    `${EXIT.policyDenied}`,
    'a plan policy denies the plan: no approval passes it; change the plan or the policy (classify --detailed-exitcode too)',
  ],
  [`${EXIT.deadline}`, 'stopped itself before --deadline'],
  [`${EXIT.sigint} / ${EXIT.sigterm}`, 'interrupted by SIGINT / SIGTERM'],
];

/** The outcome of a run the error stopped: the reason's. */
export const outcomeOf = (error: RunnerError): Outcome => REASONS[error.reason].outcomes[0]!;

/** The exit code of a run that ended with `reason` (`error`: the error that stopped it, whose signal picks 130 or 143). */
export function exitCodeOf(reason: Reason, error?: RunnerError): number {
  if (error?.kind === 'interrupted' && error.detail?.cause === 'SIGINT') return EXIT.sigint;
  return REASONS[reason].exitCode;
}

/**
 * --detailed-exitcode, a flag only (no CAPTF_* variable, so a Job's environment cannot turn it on):
 * drift found exits 6, a classification a policy denies 8 and another gated one 3, instead of 0;
 * every other code stays.
 */
export function detailedExitCode(
  code: number,
  verdict: { driftFound?: boolean; gated?: boolean; denied?: boolean },
): number {
  if (code !== EXIT.succeeded) return code;
  if (verdict.driftFound) return EXIT.driftFound;
  if (verdict.denied) return EXIT.policyDenied;
  return verdict.gated ? EXIT.blocked : code;
}

/** The exit code of a command that the error stopped: an op's (its result says the same) or another command's. */
export const exitCodeOfError = (error: RunnerError): number => exitCodeOf(error.reason, error);
