// The policy module as the ops load it, with `await import('./index.ts')`, only when a
// policy dir is present: CEL and the YAML parser are in this chunk, so a run without policies
// never loads them (start-up and apply overhead stay as they were).
import { compilePolicy, type CompiledPolicy } from './compile.ts';
import { readPolicyDir } from './load.ts';
import { policyInvalid } from './problems.ts';

export {
  compilePolicy,
  parsePolicyText,
  type CompiledPolicy,
  type CompiledRule,
  type CompileResult,
} from './compile.ts';
export { DEFAULT_TIME_LIMIT_MS, MAX_DELETES_RULE, PolicyEvaluator, type EvaluatorOptions } from './evaluate.ts';
export { planJudgement, type JudgementOptions, type PlanJudgement } from './judge.ts';
export { readPolicyDir, type PolicySource } from './load.ts';
export { describeProblem, POLICY_FIX, policyInvalid, type PolicyProblem } from './problems.ts';

/** Reads and compiles the policy dir; every problem of it in one ImageInvalid error (exit 4), file and rule named. */
export async function loadPolicy(dir: string): Promise<CompiledPolicy> {
  const compiled = compilePolicy(await readPolicyDir(dir));
  if (!compiled.ok) throw policyInvalid(dir, compiled.problems);
  return compiled.policy;
}
