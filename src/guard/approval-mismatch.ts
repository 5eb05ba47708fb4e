// Why a given approval did not match (pure): a person who pasted the wrong value must learn which
// value it was. Only an explanation: the guard still compares exactly (decide.ts), so a value
// that would match once tidied up approves nothing.
import type { Notice } from '../schemas/result.ts';
import { isSha256 } from '../util/sha256.ts';

export interface ApprovalFacts {
  /** --approved-hash as given, not empty. */
  given: string;
  /** What an approval must name. */
  approvalHash: string;
  inputsHash: string;
  /** Plan hashes a person may have copied: this run's, and its blocked run's (the same approval hash). */
  planHashes: readonly string[];
  /** The inputs hash the state records before the run: the inputs last applied. */
  stateInputsHash?: string | null;
  /** When a blocked run of other inputs was blocked for the given hash: its finishedAt. */
  blockedRunFinishedAt?: string;
}

const SHA256_PREFIX = 'sha256:';

/** The notice for a given approval that is not `approvalHash`; undefined when it matches exactly. */
export function approvalMismatch(facts: ApprovalFacts): Notice | undefined {
  const { given, approvalHash } = facts;
  if (given === approvalHash) return undefined;
  const pass = `pass exactly the approval hash ${approvalHash}`;
  if (!isSha256(given)) {
    const written =
      tidy(given) === approvalHash
        ? ", though it is this run's approval hash written another way (the runner compares exactly)"
        : '';
    return {
      code: 'ApprovalMalformed',
      message: `the approved hash given is not 64 lowercase hex characters (${formProblems(given).join('; ')}): it approves nothing${written}; ${pass}`,
    };
  }
  const nothing = 'it approves nothing';
  if (facts.planHashes.includes(given))
    return {
      code: 'ApprovalIsPlanHash',
      message: `the approved hash given is a plan hash (planHash, of this run's saved plan or of its blocked run's), not the approval hash: ${nothing}; ${pass}`,
    };
  if (given === facts.inputsHash)
    return {
      code: 'ApprovalIsInputsHash',
      message: `the approved hash given is this run's inputs hash, not its approval hash (a pool's approval hash leaves out bootstrap_data): ${nothing}; ${pass}`,
    };
  if (facts.stateInputsHash && given === facts.stateInputsHash)
    return {
      code: 'ApprovalOfOtherInputs',
      message: `the approved hash given is the inputs hash the state records (of the inputs last applied), not this run's approval hash: the inputs changed since; ${nothing}; review this plan and ${pass}`,
    };
  if (facts.blockedRunFinishedAt)
    return {
      code: 'ApprovalOfOtherInputs',
      message: `the approved hash given is the approval hash of a run blocked at ${facts.blockedRunFinishedAt} for other inputs, not this run's: the inputs changed since that block; ${nothing}; review this plan and ${pass}`,
    };
  return {
    code: 'ApprovalMismatch',
    message: `the approved hash given is not this run's approval hash (nor its plan or inputs hash, nor the inputs hash the state records): it names other inputs, or was mistyped; ${nothing}; review this plan and ${pass}`,
  };
}

/** What is wrong with the form of a value that is not 64 lowercase hex. */
function formProblems(given: string): string[] {
  const problems: string[] = [];
  if (given.trim() !== given)
    problems.push(/[\r\n]/.test(given) ? 'a newline or whitespace around it' : 'whitespace around it');
  const trimmed = given.trim();
  const bare = trimmed.toLowerCase().startsWith(SHA256_PREFIX) ? trimmed.slice(SHA256_PREFIX.length) : trimmed;
  if (bare !== trimmed) problems.push(`a "${SHA256_PREFIX}" prefix`);
  if (/[A-F]/.test(bare)) problems.push('upper-case letters');
  const lower = bare.toLowerCase();
  if (/[^0-9a-f]/.test(lower)) problems.push('characters that are not hex digits');
  if (lower.length !== 64) problems.push(`${[...lower].length} characters where 64 are needed`);
  return problems.length ? problems : ['not a sha256'];
}

/** The value with whitespace, a `sha256:` prefix and case taken away: only to say whether it would match. */
function tidy(given: string): string {
  const trimmed = given.trim().toLowerCase();
  return trimmed.startsWith(SHA256_PREFIX) ? trimmed.slice(SHA256_PREFIX.length) : trimmed;
}
