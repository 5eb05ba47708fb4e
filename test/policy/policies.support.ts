// Shared pieces of the policy tests: the contract's example file verbatim, and views to feed.
import assert from 'node:assert/strict';
import { compilePolicy, type CompiledPolicy } from '../../src/policy/compile.ts';
import { ACTIONS_OF } from '../../src/policy/synthetic.ts';
import { addressParts } from '../../src/plan/address.ts';
import { noCounts } from '../../src/plan/actions.ts';
import type { PolicyActionView, PolicyChangeView, PolicyPlanView } from '../../src/plan/policy-views.ts';

/** The example file of contract/sections/policy.md §2, as other tools rely on it: it must work exactly as written. */
export const ISSUE_EXAMPLE = `apiVersion: policy.captf.io/v1
rules:
- name: protect-databases
  on: change
  match: '"terraform_data" in change.types && change.names.exists(n, n.startsWith("db")) && change.kind in ["delete", "replace", "unknown"]'
  effect: deny
  message: '"databases are never deleted by the runner: " + change.address'
- name: iam-needs-review
  match: change.kind == "update" && change.addresses.exists(a, a.startsWith("terraform_data.iam"))
  effect: requireApproval
limits:
  maxDeletes: 5         # counted like destructiveTotal (deletes, replaces, deposed deletes, unknown); more is denied
`;

export const POLICY_HEADER = 'apiVersion: policy.captf.io/v1\n';

/** Compiles the texts (file names a.yaml, b.yaml, … unless given) and fails the test on any problem. */
export function compiled(...texts: (string | { file: string; text: string })[]): CompiledPolicy {
  const sources = texts.map((text, i) =>
    typeof text === 'string' ? { file: `policy/${String.fromCharCode(97 + i)}.yaml`, text } : text,
  );
  const result = compilePolicy(sources);
  assert.ok(result.ok, `the policy should compile: ${JSON.stringify(!result.ok && result.problems)}`);
  return result.policy;
}

/** A policy of one rule. */
export const oneRule = (rule: string) => compiled(`${POLICY_HEADER}rules:\n${rule}`);

/** A root terraform_data change of `kind` at `terraform_data.<name>`. */
export function changeView(
  name: string,
  kind: PolicyChangeView['kind'],
  extra: Partial<PolicyChangeView> = {},
): PolicyChangeView {
  return {
    address: `terraform_data.${name}`,
    mode: 'managed',
    type: 'terraform_data',
    name,
    provider: 'terraform.io/builtin/terraform',
    kind,
    actions: ACTIONS_OF[kind],
    ...extra,
  };
}

/** `view` renamed by a moved block to `address` (`terraform_data.archive`, `module.wrap.terraform_data.store`): what the classifier hands over. */
export function movedTo(view: PolicyChangeView, address: string): PolicyChangeView {
  const parts = addressParts(address)!;
  return {
    ...view,
    address,
    module: parts.module || null,
    type: parts.type,
    name: parts.name,
    moved: true,
    previousAddress: view.address,
    previousModule: view.module ?? '',
    previousType: view.type ?? null,
    previousName: view.name ?? null,
  };
}

export function actionView(address: string, extra: Partial<PolicyActionView> = {}): PolicyActionView {
  return {
    address,
    type: 'aws_lambda_invoke',
    provider: 'registry.terraform.io/hashicorp/aws',
    trigger: 'invoke',
    deferred: false,
    ...extra,
  };
}

export const planView = (extra: Partial<PolicyPlanView> = {}): PolicyPlanView => ({
  counts: noCounts(),
  tool: 'terraform',
  version: '1.11.4',
  ...extra,
});
