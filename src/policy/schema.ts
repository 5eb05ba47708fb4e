// The policy file: rules a platform team writes once, in CEL, and plan-wide limits. Zod is the
// single source of truth; contract/policy.schema.json is generated from it (npm run schema).
// Every object is closed: a typo'd key (`efect:`, `mach:`) would otherwise disable a rule silently.
import * as z from '../schemas/zod.ts';

const POLICY_API_VERSION = 'policy.captf.io/v1';

/** The longest match or message expression: CEL parse cost grows with it, and a rule is one line of intent. */
export const MAX_EXPRESSION_CHARS = 4096;

/**
 * A rule's name: it names the rule in results, logs and the termination message. Letters, digits,
 * `-` and `_` (no `.`: `limits.maxDeletes` names the limit's findings and can never be a rule's).
 */
const RuleName = z
  .string()
  .regex(
    /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$/,
    'a rule name is 1 to 63 letters, digits, "-" or "_", starting and ending with a letter or digit',
  );

export const RuleScope = z
  .enum(['change', 'action', 'plan'])
  .describe(
    'What the rule is evaluated over: every resource change (`change`), every provider action (`action`) or the plan once (`plan`)',
  );
export type RuleScope = z.infer<typeof RuleScope>;

export const RuleEffect = z
  .enum(['deny', 'requireApproval'])
  .describe('deny: nothing is applied, even with an approval; requireApproval: the plan needs the approval hash');
export type RuleEffect = z.infer<typeof RuleEffect>;

const Expression = z
  .string()
  .trim()
  .min(1, 'an expression cannot be empty')
  .max(MAX_EXPRESSION_CHARS, `an expression is at most ${MAX_EXPRESSION_CHARS} characters`);

export const PolicyRule = z.strictObject({
  name: RuleName,
  on: RuleScope.default('change'),
  match: Expression.describe('A CEL expression giving a bool; true applies the effect'),
  effect: RuleEffect,
  message: Expression.optional().describe('A CEL expression giving a string: what a denial says (deny rules only)'),
});
export type PolicyRule = z.infer<typeof PolicyRule>;

const PolicyLimits = z.strictObject({
  maxDeletes: z
    .nonNegativeInt()
    .describe(
      'The most deletes one plan may have, counted like destructiveTotal (deletes, replaces, deposed deletes, unknown actions); more is denied',
    ),
});
type PolicyLimits = z.infer<typeof PolicyLimits>;

export const PolicyFile = z
  .strictObject({
    apiVersion: z.literal(POLICY_API_VERSION),
    rules: z.array(PolicyRule).default([]),
    limits: PolicyLimits.optional(),
  })
  .refine((file) => file.rules.length > 0 || file.limits !== undefined, 'a policy file holds rules, limits or both')
  .superRefine((file, context) => {
    file.rules.forEach((rule, index) => {
      if (rule.message !== undefined && rule.effect !== 'deny')
        context.addIssue({
          code: 'custom',
          path: ['rules', index, 'message'],
          message: 'only a deny rule has a message (a requireApproval rule is listed by name)',
        });
    });
  });
export type PolicyFile = z.infer<typeof PolicyFile>;
