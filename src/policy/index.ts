// The policy module as the ops load it, with `await import('./index.ts')`, only when a
// policy dir is present: CEL and the YAML parser are in this chunk, so a run without policies
// never loads them (start-up and apply overhead stay as they were).
import { RunnerError } from '../errors.ts';
import { compilePolicySteps, type CompiledPolicy } from './compile.ts';
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

/** The longest the compile check holds the event loop: a stop request waits at most this (and one check's evaluation). */
const SLICE_MS = 20;

/**
 * Reads and compiles the policy dir; every problem of it in one ImageInvalid error (exit 4), file
 * and rule named. The checks yield to the event loop every few milliseconds: a stop request
 * (`stopRequested`: a signal, the deadline) ends them there, an interruption of the step `policy`.
 */
export async function loadPolicy(
  dir: string,
  options: { stopRequested?: () => boolean } = {},
): Promise<CompiledPolicy> {
  const steps = compilePolicySteps(await readPolicyDir(dir));
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) {
      if (!step.value.ok) throw policyInvalid(dir, step.value.problems);
      return step.value.policy;
    }
    if (performance.now() - sliceStart < SLICE_MS) continue;
    await new Promise<void>((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
    if (options.stopRequested?.())
      throw new RunnerError({
        kind: 'interrupted',
        reason: 'Interrupted',
        step: 'policy',
        message: `the policy's compile check (${dir}) was stopped before it finished: nothing was planned or applied`,
      });
  }
}
