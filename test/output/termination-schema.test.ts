// contract/termination.schema.json describes what the termination message really holds: every form
// compactResult writes (the richest to the smallest) parses with the schema, every member declared.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { Masker } from '../../src/masking/mask.ts';
import { compactResult } from '../../src/output/termination.ts';
import { TerminationMessage, type Result } from '../../src/schemas/result.ts';
import { classifyPlan } from '../../src/plan/classify.ts';
import { blockedResultOf, manyDeletes } from './results.support.ts';

const result = (destructive: number, message: string, warnings: string[]): Result =>
  blockedResultOf(manyDeletes(destructive), {
    message,
    inputsHash: 'a'.repeat(64),
    approvalHash: 'b'.repeat(64),
    stateInputsHash: null,
    planHash: 'c'.repeat(64),
    approval: { given: true, matched: true, required: true, unreviewed: [], unreviewedTotal: 2 },
    error: { kind: 'blocked', reason: 'DestructivePlanBlocked', step: 'decide', message, detail: { diagnostics: [] } },
    annotations: { 'captf.io/outcome': 'blocked' },
    warnings,
  });

it('every form of the termination message has only the members the schema declares, of their types', () => {
  const every = z.strictObject(TerminationMessage.shape);
  const forms = new Set<string>();
  for (const [destructive, length, warnings] of [
    [0, 10, 0],
    [3, 100, 5],
    [50, 3000, 5],
    [500, 50_000, 5],
    [5000, 50_000, 40],
  ] as const) {
    const text = compactResult(
      result(
        destructive,
        'm'.repeat(length),
        Array.from({ length: warnings }, (_, i) => `warning ${i} ${'w'.repeat(400)}`),
      ),
      new Masker(),
    );
    const parsed = every.safeParse(JSON.parse(text));
    assert.ok(parsed.success, `${text.slice(0, 300)}: ${parsed.error && z.prettifyError(parsed.error)}`);
    forms.add(Object.keys(parsed.data).sort().join());
  }
  assert.ok(forms.size >= 2, 'more than one form was checked');
});

it("with a policy's findings too", () => {
  const every = z.strictObject(TerminationMessage.shape);
  const policy = {
    effects: 'all' as const,
    denied: Array.from({ length: 20 }, (_, i) => ({
      rule: 'no-deletes',
      address: `terraform_data.n${i}`,
      message: 'x'.repeat(900),
    })),
    deniedTotal: 20,
    approvalRequired: [{ rule: 'review' }],
    approvalRequiredTotal: 1,
    deletes: 20,
    timedOut: false,
    cost: 0,
    costExceeded: false,
  };
  for (const destructive of [0, 500]) {
    const judged = result(destructive, 'm', []);
    const text = compactResult({ ...judged, plan: { ...judged.plan!, policy } }, new Masker());
    const parsed = every.safeParse(JSON.parse(text));
    assert.ok(parsed.success, `${text.slice(0, 300)}: ${parsed.error && z.prettifyError(parsed.error)}`);
    assert.equal(parsed.data.policy!.deniedTotal, 20);
  }
});

it('the smallest form keeps what the schema requires, and nothing else is required', () => {
  const smallest = {
    apiVersion: 'runner.captf.io/v1',
    op: 'apply',
    outcome: 'failed',
    reason: 'ApplyFailed',
    exitCode: 1,
  };
  assert.ok(TerminationMessage.safeParse(smallest).success);
  for (const key of Object.keys(smallest)) {
    const without: Record<string, unknown> = { ...smallest };
    delete without[key];
    assert.equal(TerminationMessage.safeParse(without).success, false, key);
  }
  // A v1 reader ignores members it does not know.
  assert.ok(TerminationMessage.safeParse({ ...smallest, addedLater: 1 }).success);
});

it('with provider actions too: the first few and how many were left out', () => {
  const every = z.strictObject(TerminationMessage.shape);
  const invocations = Array.from({ length: 8 }, (_, i) => ({
    address: `action.stop.m${i}`,
    type: 'stop',
    name: `m${i}`,
    provider_name: 'registry.terraform.io/hashicorp/aws',
    invoke_action_trigger: {},
  }));
  const judged = result(0, 'm', []);
  const plan = classifyPlan(
    {
      format_version: '1.2',
      applyable: true,
      complete: true,
      errored: false,
      resource_changes: [],
      action_invocations: invocations,
    },
    { limit: 1000 },
  );
  const text = compactResult({ ...judged, plan }, new Masker());
  const parsed = every.safeParse(JSON.parse(text));
  assert.ok(parsed.success, `${text.slice(0, 300)}: ${parsed.error && z.prettifyError(parsed.error)}`);
  assert.equal(parsed.data.actionsTotal, 8);
  assert.equal(parsed.data.actions!.length + parsed.data.actionsOmitted!, 8);
});
