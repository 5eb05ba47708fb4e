// Why a policy directory is refused. Loading and compiling collect every problem (file and rule
// named) rather than stopping at the first; one error carries them all: ImageInvalid, exit 4.
import { imageError, type RunnerError } from '../errors.ts';

export interface PolicyProblem {
  /** The file, as a path on this machine; the directory itself for problems of the directory. */
  file: string;
  rule?: string;
  message: string;
}

/** What the person fixes; contract check shows it beside the problems. */
export const POLICY_FIX =
  "fix the named files in the image's policy dir (contract/sections/policy.md describes the format), or remove the dir to run without policies";

/** The most problems one message lists; detail.problems holds them all. */
const LISTED_PROBLEMS = 20;

export const describeProblem = (problem: PolicyProblem) =>
  `${problem.file}${problem.rule === undefined ? '' : ` rule "${problem.rule}"`}: ${problem.message}`;

export function policyInvalid(dir: string, problems: readonly PolicyProblem[]): RunnerError {
  const listed = problems.slice(0, LISTED_PROBLEMS).map(describeProblem);
  // A parse error shows the expression with a caret under the place: then each problem and the fix start a line.
  const lines = listed.some((text) => text.includes('\n'));
  const more =
    problems.length > LISTED_PROBLEMS ? `${lines ? '\n' : '; '}and ${problems.length - LISTED_PROBLEMS} more` : '';
  return imageError(
    `the policy dir ${dir} is invalid: ${listed.join(lines ? '\n' : '; ')}${more}${lines ? '\n' : '. '}Nothing was planned or applied; ${POLICY_FIX}`,
    {
      problems: problems.map((problem) => ({ ...problem })),
    },
  );
}

/** A policy dir that is not there: the setting that names it is wrong (a mistyped --policy), not the files of a dir. */
export function policyDirMissing(dir: string, why: string): RunnerError {
  return imageError(
    `the policy dir ${dir} ${why}. Nothing was planned or applied; check --policy (CAPTF_POLICY), which names it: without it the runner reads /captf/policy when the image has one`,
    {
      setting: 'policy',
      problems: [{ file: dir, message: `the policy dir ${why}` }],
    },
  );
}
