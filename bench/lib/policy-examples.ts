// The contract's example rules (contract/sections/policy.md §6: protect-databases, iam-needs-review) in as
// many copies as a bench asks, and harmless creates to evaluate them over, as a run evaluates them
// (bench/policy-units.ts, bench/policy-round.ts). The policy's code is loaded from a tree's root (this one, or
// another commit's checked out beside it: bench/masking-policy.ts --baseline), so one bench compares two.
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { compilePolicy as CompilePolicy, CompiledPolicy } from '../../src/policy/compile.ts';
import type { PolicyEvaluator } from '../../src/policy/evaluate.ts';
import type { planJudgement as PlanJudgement } from '../../src/policy/judge.ts';
import type { noCounts as NoCounts } from '../../src/plan/actions.ts';
import type { PolicyChangeView, PolicyOutcome } from '../../src/plan/policy-views.ts';
import type { Classification } from '../../src/schemas/classification.ts';

/** This repository's root. */
export const REPO = resolve(import.meta.dirname, '../..');

const EXAMPLES = (copy: number) => `- name: protect-databases-${copy}
  match: >-
    change.types.exists(t, t in ["aws_db_instance", "aws_rds_cluster", "google_sql_database_instance"])
    && change.kind in ["delete", "replace", "unknown"]
  effect: deny
  message: >-
    "the runner never deletes a database: " + change.address + " would be " +
    (change.kind == "replace" ? "replaced" : "deleted") +
    "; change the module so that it is kept (lifecycle prevent_destroy, or the attribute that forces the replace), or delete it by hand"
- name: iam-needs-review-${copy}
  match: >-
    change.types.exists(t, t.startsWith("aws_iam_") || t.startsWith("google_project_iam_")
      || t.startsWith("google_service_account"))
    && !(change.kind in ["read", "noop"])
  effect: requireApproval
`;

/** The policy file of `rules` example rules (an even number: each copy is two rules). */
export const examplesText = (rules: number): string =>
  `apiVersion: policy.captf.io/v1\nrules:\n${Array.from({ length: rules / 2 }, (_, i) => EXAMPLES(i)).join('')}`;

/** A create of a terraform_data instance at `address`, as the policy sees it. */
export const exampleView = (address: string): PolicyChangeView => ({
  address,
  mode: 'managed',
  type: 'terraform_data',
  name: 'web',
  provider: 'terraform.io/builtin/terraform',
  kind: 'create',
  actions: ['create'],
});

/** The i-th of the harmless creates. */
export const createView = (i: number): PolicyChangeView => exampleView(`terraform_data.web["${i}"]`);

/** What the benches use of a tree's policy code. */
export interface PolicyCode {
  compilePolicy: typeof CompilePolicy;
  PolicyEvaluator: typeof PolicyEvaluator;
  planJudgement: typeof PlanJudgement;
  noCounts: typeof NoCounts;
}

/** The policy code of the tree at `root` (its src/; @bufbuild/cel from its node_modules). */
export async function policyCode(root = REPO): Promise<PolicyCode> {
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const [compile, evaluate, judge, actions] = await Promise.all([
    load('src/policy/compile.ts'),
    load('src/policy/evaluate.ts'),
    load('src/policy/judge.ts'),
    load('src/plan/actions.ts'),
  ]);
  return {
    compilePolicy: compile.compilePolicy,
    PolicyEvaluator: evaluate.PolicyEvaluator,
    planJudgement: judge.planJudgement,
    noCounts: actions.noCounts,
  };
}

/** `rules` example rules compiled. */
export function examplesPolicy(code: PolicyCode, rules: number): CompiledPolicy {
  const compiled = code.compilePolicy([{ file: 'policy/examples.yaml', text: examplesText(rules) }]);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  return compiled.policy;
}

/** A time limit no bench reaches: the figures are the evaluation's, never its stop. */
const TIME_LIMIT_MS = 600_000;

/** An evaluator of `rules` example rules, compiled. */
export function examplesEvaluator(code: PolicyCode, rules: number): PolicyEvaluator {
  return new code.PolicyEvaluator(examplesPolicy(code, rules), { timeLimitMs: TIME_LIMIT_MS });
}

const planView = (code: PolicyCode, changes: number) => ({
  counts: { ...code.noCounts(), create: changes },
  tool: 'terraform' as const,
  version: '1.11.4',
});

/** `changes` creates, then the plan, given to the evaluator directly: the outcome a run would get. */
export function evaluateCreates(code: PolicyCode, evaluator: PolicyEvaluator, changes: number): PolicyOutcome {
  for (let i = 0; i < changes; i++) evaluator.change(createView(i));
  return evaluator.plan(planView(code, changes));
}

/**
 * `changes` creates judged as a run judges them (src/policy/judge.ts: one rule a step, the slices of the event
 * loop, the stop request asked before each rule), handed over in chunks of 100 as the classifier streams them.
 */
export async function judgeCreates(code: PolicyCode, policy: CompiledPolicy, changes: number): Promise<PolicyOutcome> {
  const judgement = code.planJudgement(policy, {
    tool: 'terraform',
    timeLimitMs: TIME_LIMIT_MS,
    stopRequested: () => false,
  });
  for (let i = 0; i < changes; i++) {
    judgement.onChange(createView(i));
    if (i % 100 === 99) await judgement.pace();
  }
  const { counts, version } = planView(code, changes);
  // What the judgement reads of the classification (its counts and version; the gate's facts after it).
  const plan = { counts, terraformVersion: version, destructiveTotal: 0, actionsTotal: 0, failClosed: [] };
  const judged = await judgement.judge(plan as unknown as Classification);
  return judged.policy!;
}
