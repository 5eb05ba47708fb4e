// Properties of the evaluator over random rules and changes. The rules are built from parts that
// fail on some data (a division by a count, an index, a map key, a conversion) and are compiled
// without the synthetic check, as a rule that passed it may still fail on a real plan.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { changeBinding, compileExpression, type CelProgram } from '../../src/policy/cel.ts';
import type { CompiledPolicy, CompiledRule } from '../../src/policy/compile.ts';
import { CostMeter, RULE_COST_LIMIT } from '../../src/policy/cost.ts';
import { PolicyEvaluator } from '../../src/policy/evaluate.ts';
import { CHANGE_KINDS, type PolicyChangeView } from '../../src/plan/policy-views.ts';
import { runs } from '../support/property-runs.ts';
import { planView } from './policies.support.ts';

const program = (source: string): CelProgram => {
  const compiled = compileExpression(source, 'change');
  assert.ok('program' in compiled, `${source}: ${'problems' in compiled ? compiled.problems.join('; ') : ''}`);
  return compiled.program;
};

const kind = fc.constantFrom(...CHANGE_KINDS);

const atom = fc.oneof(
  kind.map((k) => `change.kind == "${k}"`),
  fc.constantFrom('db', '1', 'x').map((s) => `change.name.startsWith("${s}")`),
  fc.integer({ min: 0, max: 2 }).map((n) => `1 / (size(change.actions) - ${n}) > 0`),
  fc.integer({ min: 0, max: 1 }).map((i) => `change.replacePaths[${i}][0] == "engine"`),
  fc.constant('{"create": true, "delete": false, "noop": false}[change.kind]'),
  fc.constant('int(change.name) > 0'),
  fc.constant('change.moved'),
  fc.constant('change.deposed != ""'),
);

const expression: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    atom,
    fc.tuple(tie('e'), fc.constantFrom('&&', '||'), tie('e')).map(([a, op, b]) => `(${a} ${op} ${b})`),
    tie('e').map((a) => `!${a}`),
  ),
})).e;

const changeView: fc.Arbitrary<PolicyChangeView> = fc
  .record({
    name: fc.constantFrom('db1', '12', 'x', ''),
    kind,
    actions: fc.constantFrom(['create'], ['delete', 'create'], [], ['delete']),
    replacePaths: fc.constantFrom([], [['engine']], [['tags'], ['engine', 0]]),
    moved: fc.boolean(),
    deposed: fc.constantFrom(undefined, '00aa'),
  })
  .map((view) => ({ ...view, address: `terraform_data.${view.name || 'unnamed'}` }));

const rule = fc.record({
  match: expression,
  effect: fc.constantFrom('deny' as const, 'requireApproval' as const),
  message: fc.option(
    fc.oneof(fc.constant('"no: " + change.address'), fc.constant('"path " + change.replacePaths[0][0]')),
    { nil: undefined },
  ),
});

const policyOf = (
  rules: { match: string; effect: CompiledRule['effect']; message: string | undefined }[],
  maxDeletes?: number,
): CompiledPolicy => ({
  files: ['policy/p.yaml'],
  warnings: [],
  rules: rules.map((r, i) => ({
    name: `r${i}`,
    file: 'policy/p.yaml',
    on: 'change',
    effect: r.effect,
    match: program(r.match),
    message: r.effect === 'deny' && r.message ? program(r.message) : undefined,
  })),
  maxDeletes: maxDeletes === undefined ? undefined : { limit: maxDeletes, file: 'policy/p.yaml' },
});

describe('policy evaluation properties', () => {
  it('a rule that errors is never "allowed": a failing deny rule denies, a failing requireApproval rule requires approval', () => {
    fc.assert(
      fc.property(
        fc.array(rule, { minLength: 1, maxLength: 4 }),
        fc.array(changeView, { maxLength: 6 }),
        (rules, views) => {
          const unique = views.map((view, i) => ({ ...view, address: `terraform_data.c${i}` }));
          const policy = policyOf(rules);
          const evaluator = new PolicyEvaluator(policy);
          for (const view of unique) evaluator.change(view);
          const outcome = evaluator.plan(planView());
          for (const [i, compiledRule] of policy.rules.entries()) {
            for (const view of unique) {
              const result = compiledRule.match(changeBinding(view), new CostMeter(RULE_COST_LIMIT, 'rule'));
              const listed =
                compiledRule.effect === 'deny'
                  ? outcome.denied.filter((d) => d.rule === compiledRule.name && d.address === view.address)
                  : outcome.approvalRequired.filter((a) => a.rule === compiledRule.name && a.address === view.address);
              // Only `false` lets a change through: true and any error are findings.
              assert.equal(
                listed.length,
                result === false ? 0 : 1,
                `${rules[i]!.match} on ${JSON.stringify(view)} gave ${String(result)}`,
              );
              const [finding] = listed;
              if (finding && 'message' in finding) assert.ok(finding.message.length > 0);
              if (finding && !('message' in finding)) assert.equal(finding.error !== undefined, result !== true);
            }
          }
          assert.equal(outcome.timedOut, false);
        },
      ),
      // Each run compiles up to four rules and their messages: 100 runs here, more with CAPTF_PROPERTY_RUNS.
      { numRuns: runs(100) },
    );
  });

  it('maxDeletes denies exactly when more changes than the limit are deletes, replaces or unknown', () => {
    fc.assert(
      fc.property(fc.array(changeView, { maxLength: 12 }), fc.integer({ min: 0, max: 8 }), (views, limit) => {
        const outcome = outcomeWithLimit(views, limit);
        const deleting = views.filter(
          (v) => v.kind === 'delete' || v.kind === 'replace' || v.kind === 'unknown',
        ).length;
        assert.equal(outcome.deletes, deleting);
        assert.equal(outcome.deniedTotal, deleting > limit ? 1 : 0);
      }),
      { numRuns: runs(100) },
    );
  });
});

function outcomeWithLimit(views: PolicyChangeView[], limit: number) {
  const evaluator = new PolicyEvaluator(policyOf([], limit));
  for (const view of views) evaluator.change(view);
  return evaluator.plan(planView());
}
