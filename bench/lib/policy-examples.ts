// The contract's example rules (contract/sections/policy.md §6: protect-databases, iam-needs-review) in as
// many copies as a bench asks, and harmless creates to evaluate them over, as a run evaluates them
// (bench/policy-units.ts, bench/masking-policy.ts).
import { compilePolicy } from '../../src/policy/compile.ts';
import { PolicyEvaluator } from '../../src/policy/evaluate.ts';
import { noCounts } from '../../src/plan/actions.ts';
import type { PolicyChangeView, PolicyOutcome } from '../../src/plan/policy-views.ts';

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

/** An evaluator of `rules` example rules (an even number: each copy is two rules), compiled. */
export function examplesEvaluator(rules: number): PolicyEvaluator {
  const compiled = compilePolicy([
    {
      file: 'policy/examples.yaml',
      text: `apiVersion: policy.captf.io/v1\nrules:\n${Array.from({ length: rules / 2 }, (_, i) => EXAMPLES(i)).join('')}`,
    },
  ]);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  return new PolicyEvaluator(compiled.policy, { timeLimitMs: 600_000 });
}

/** `changes` creates at `terraform_data.web["<i>"]`, then the plan: the outcome a run would get. */
export function evaluateCreates(evaluator: PolicyEvaluator, changes: number): PolicyOutcome {
  for (let i = 0; i < changes; i++) evaluator.change(exampleView(`terraform_data.web["${i}"]`));
  return evaluator.plan({
    counts: { ...noCounts(), create: changes },
    tool: 'terraform',
    version: '1.11.4',
  });
}
