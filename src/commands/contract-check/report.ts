// What `contract check` reports: each check's name, status, message, fix and problems (the table and --json).
import type { Flavor } from '../../terraform/version.ts';

export type CheckName =
  | 'entrypoint'
  | 'user'
  | 'workdir'
  | 'terraform'
  | 'module'
  | 'reserved'
  | 'files'
  | 'nonsensitive'
  | 'tfvars'
  | 'backend'
  | 'variables'
  | 'lockfile'
  | 'providers'
  | 'init'
  | 'validate'
  | 'policy';

/**
 * One thing a check found wrong, where it is: `file` relative to the module dir (`.` for the module
 * as a whole), or a provider package's path in the image (`providers`); `line` when terraform or the scan knows it.
 */
export interface CheckProblem {
  file: string;
  line?: number;
  message: string;
}

export interface ContractCheck {
  name: CheckName;
  /** One vocabulary, in the table and in --json: fail is a violation; skip: not run (a check it depends on failed, or it checks what only the image has). */
  status: 'pass' | 'fail' | 'skip';
  message: string;
  fix?: string;
  /** A failed check: each problem it found. */
  problems?: CheckProblem[];
  /** What passes but may not hold (a policy rule a rename walks past), or is for review (a call of nonsensitive()). */
  warnings?: string[];
}

export interface ContractReport {
  /** fail when any check fails. */
  status: 'pass' | 'fail';
  /** The module dir checked, as a path on this machine. */
  module: string;
  checks: ContractCheck[];
  terraform?: { version: string; flavor: Flavor; path: string };
}

/** A check's result as the checks write it: name, status, message, then fix, problems and warnings when there are any. */
export type CheckRow = [
  name: CheckName,
  status: ContractCheck['status'],
  message: string,
  fix?: string,
  problems?: CheckProblem[],
  warnings?: string[],
];
