// From policy files to rules ready to evaluate. Pure: the texts come from load.ts. Every problem
// is collected, named by file and rule: the YAML or JSON syntax, the schema, each expression's
// syntax and names, its evaluation over the synthetic views, rule names used twice.
import { isScalar, parseDocument, visit } from 'yaml';
import type * as z from '../schemas/zod.ts';
import {
  actionBinding,
  celStopped,
  celTypeName,
  changeBinding,
  compileExpression,
  isError,
  planBinding,
  type CelProgram,
} from './cel.ts';
import { fieldsRead } from './cel-names.ts';
import type { CelExpr } from './cel-shapes.ts';
import { CostMeter, PLAN_COST_LIMIT, RULE_COST_LIMIT } from './cost.ts';
import { ESTIMATE_ADDRESS_CHARS, ESTIMATE_STRING_CHARS, estimateCost } from './estimate.ts';
import type { PolicySource } from './load.ts';
import type { PolicyProblem } from './problems.ts';
import { PolicyFile, type PolicyRule, type RuleEffect, type RuleScope } from './schema.ts';
import { syntheticViews, type SyntheticView } from './synthetic.ts';

/** The most rules of all files together: every rule runs over every change of a plan. */
export const MAX_RULES = 500;

export interface CompiledRule {
  name: string;
  file: string;
  on: RuleScope;
  effect: RuleEffect;
  match: CelProgram;
  message: CelProgram | undefined;
}

export interface CompiledPolicy {
  /** The files read, in order. */
  files: string[];
  /** What compiles but may not hold (a rule that a rename walks past): contract check shows them. */
  warnings: PolicyProblem[];
  /** In file order, then in each file's order. */
  rules: CompiledRule[];
  /** The smallest maxDeletes of all files, and the file that sets it. */
  maxDeletes: { limit: number; file: string } | undefined;
}

export type CompileResult = { ok: true; policy: CompiledPolicy } | { ok: false; problems: PolicyProblem[] };

export function compilePolicy(sources: readonly PolicySource[]): CompileResult {
  const steps = compilePolicySteps(sources);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * compilePolicy, one check at a time: it yields after each evaluation over a synthetic view (at
 * most one rule's budget), so a caller can yield to the event loop and hear a stop request while
 * a large policy is checked (index.ts, loadPolicy).
 */
export function* compilePolicySteps(sources: readonly PolicySource[]): Generator<void, CompileResult, void> {
  const problems: PolicyProblem[] = [];
  const files: { file: string; policy: PolicyFile }[] = [];
  for (const { file, text } of sources) {
    const parsed = parsePolicyText(file, text);
    if ('problems' in parsed) problems.push(...parsed.problems);
    else files.push({ file, policy: parsed.policy });
  }
  // Counted before any expression is compiled: compiling costs an evaluation per synthetic view.
  let counted = 0;
  for (const { file, policy } of files) {
    counted += policy.rules.length;
    if (counted > MAX_RULES)
      return {
        ok: false,
        problems: inFileOrder(
          [
            ...problems,
            {
              file,
              message: `the policy dir holds more than ${MAX_RULES} rules with this file; fewer, broader rules evaluate faster`,
            },
          ],
          sources,
        ),
      };
  }
  const rules: CompiledRule[] = [];
  const warnings: PolicyProblem[] = [];
  const firstFileOf = new Map<string, string>();
  // What the checks over the synthetic views may spend, all rules together: a plan's budget.
  const checks = new CostMeter(PLAN_COST_LIMIT, 'plan');
  let maxDeletes: CompiledPolicy['maxDeletes'];
  for (const { file, policy } of files) {
    for (const rule of policy.rules) {
      const seenIn = firstFileOf.get(rule.name);
      if (seenIn !== undefined) {
        problems.push({
          file,
          rule: rule.name,
          message: `the name is already used${seenIn === file ? ' in this file' : ` in ${seenIn}`}: rule names are unique across the policy dir (results name rules only)`,
        });
        continue;
      }
      firstFileOf.set(rule.name, file);
      const compiled = yield* compileRule(file, rule, checks);
      if ('problems' in compiled) problems.push(...compiled.problems);
      else {
        rules.push(compiled.rule);
        const warning = renameWarning(rule, compiled.match);
        if (warning) warnings.push({ file, rule: rule.name, message: warning });
      }
    }
    const limit = policy.limits?.maxDeletes;
    if (limit !== undefined && (maxDeletes === undefined || limit < maxDeletes.limit)) maxDeletes = { limit, file };
  }
  if (problems.length) return { ok: false, problems: inFileOrder(problems, sources) };
  return { ok: true, policy: { files: sources.map((source) => source.file), warnings, rules, maxDeletes } };
}

/** The problems in the order of their files (stable: each file's own in the order found). */
function inFileOrder(problems: PolicyProblem[], sources: readonly PolicySource[]): PolicyProblem[] {
  const position = new Map(sources.map((source, i) => [source.file, i]));
  return problems.sort((a, b) => (position.get(a.file) ?? 0) - (position.get(b.file) ?? 0));
}

/** One file's text as a policy: YAML 1.2 (JSON is read by the same parser: JSON is YAML), one document, no duplicate keys, no unknown key. */
export function parsePolicyText(file: string, text: string): { policy: PolicyFile } | { problems: PolicyProblem[] } {
  const problem = (message: string) => ({ problems: [{ file, message }] });
  const json = file.endsWith('.json');
  const document = parseDocument(text, {
    version: '1.2',
    schema: json ? 'json' : 'core',
    uniqueKeys: true,
    strict: true,
    merge: false,
    prettyErrors: true,
  });
  const syntax = [...document.errors, ...document.warnings][0];
  if (syntax) return problem(`not valid ${json ? 'JSON' : 'YAML'}: ${syntax.message.split('\n')[0]}`);
  if (document.contents === null)
    return problem('the file is empty: give it apiVersion and rules or limits, or remove it');
  let complexKey = false;
  visit(document, { Pair: (_, pair) => void (complexKey ||= !isScalar(pair.key)) });
  if (complexKey) return problem('a map key is not a plain string (a YAML complex key)');
  let value: unknown;
  try {
    value = document.toJS(); // at most 100 aliases: an alias bomb cannot grow the document
  } catch (error) {
    return problem(`cannot be read: ${(error as Error).message}`);
  }
  const checked = PolicyFile.safeParse(value);
  if (checked.success) return { policy: checked.data };
  return { problems: checked.error.issues.map((issue) => schemaProblem(file, value, issue)) };
}

/** A schema issue named by its path, and by the rule's name when the issue is inside one. */
function schemaProblem(file: string, value: unknown, issue: z.core.$ZodIssue): PolicyProblem {
  const path = issue.path
    .map((step) => (typeof step === 'number' ? `[${step}]` : `.${String(step)}`))
    .join('')
    .replace(/^\./, '');
  const [section, index] = issue.path;
  const rules = (value as { rules?: unknown } | null)?.rules;
  const name =
    section === 'rules' && typeof index === 'number' && Array.isArray(rules)
      ? (rules[index] as { name?: unknown } | null)?.name
      : undefined;
  return { file, ...(typeof name === 'string' && { rule: name }), message: `${path || 'the file'}: ${issue.message}` };
}

/** What a change is named by where it is, and what names it where it was before a move (or says it moved). */
const NAMED_BY = ['address', 'name', 'module', 'type'] as const;
const WAS_NAMED_BY = new Set([
  'previousAddress',
  'previousName',
  'previousModule',
  'previousType',
  'addresses',
  'names',
  'modules',
  'types',
  'moved',
]);
const GOES_BY: Readonly<Record<(typeof NAMED_BY)[number], string>> = {
  address: 'addresses',
  name: 'names',
  module: 'modules',
  type: 'types',
};

/**
 * A change rule that tests where a change is and never where it was: one `moved` block takes the
 * object past it (a database renamed from `db` to `archive` is no longer `db*`).
 */
function renameWarning(rule: PolicyRule, match: CelExpr): string | undefined {
  if (rule.on !== 'change') return undefined;
  const read = fieldsRead(match, 'change');
  const named = NAMED_BY.filter((field) => read.has(field));
  if (named.length === 0 || [...read].some((field) => WAS_NAMED_BY.has(field))) return undefined;
  const fields = named.map((field) => `change.${field}`).join(', ');
  const lists = named.map((field) => `change.${GOES_BY[field]}`).join(', ');
  return `match tests ${fields} and never where the change was before a move: a module author's moved block renames the object past this rule. Test every name it goes by instead (${lists}, e.g. change.names.exists(n, n.startsWith("db")))`;
}

function* compileRule(
  file: string,
  rule: PolicyRule,
  checks: CostMeter,
): Generator<void, { rule: CompiledRule; match: CelExpr } | { problems: PolicyProblem[] }, void> {
  const problems: PolicyProblem[] = [];
  const add = (message: string) => problems.push({ file, rule: rule.name, message });
  const views = syntheticViews(rule.on);
  const evaluate = (program: CelProgram, synthetic: SyntheticView) => evaluateChecked(program, synthetic, checks);
  const match = yield* compileChecked(rule, 'match', rule.match, 'bool', views, evaluate, add);
  // A message is evaluated only where the rule matches: it is checked over the views that match (its names always).
  const matching: SyntheticView[] = [];
  if (match && rule.message !== undefined)
    for (const view of views) {
      if (evaluate(match.program, view) === true) matching.push(view);
      yield;
    }
  const message =
    rule.message === undefined
      ? undefined
      : (yield* compileChecked(rule, 'message', rule.message, 'string', matching, evaluate, add))?.program;
  if (problems.length || !match) return { problems };
  return {
    rule: { name: rule.name, file, on: rule.on, effect: rule.effect, match: match.program, message },
    match: match.expr,
  };
}

/**
 * One check's evaluation: metered like a plan's (the rule's budget), all checks together held to a
 * plan's budget. Over either, the policy cannot be checked: refused.
 */
function evaluateChecked(program: CelProgram, synthetic: SyntheticView, checks: CostMeter): ReturnType<CelProgram> {
  const meter = new CostMeter(Math.min(RULE_COST_LIMIT, checks.left), 'rule');
  const result = program(bindingOf(synthetic), meter);
  checks.spent += meter.spent;
  if (meter.exhausted)
    return celStopped(
      meter.exhausted.kind === 'size'
        ? meter.exhausted.what
        : checks.left === 0
          ? `the checks of the whole policy ran over their cost budget (${PLAN_COST_LIMIT} units)`
          : `it ran over its cost budget of ${RULE_COST_LIMIT} units`,
    );
  return result;
}

/** Parses, checks names, estimates the worst case, then evaluates over each of `views`: the first failure is the problem. */
function* compileChecked(
  rule: PolicyRule,
  field: 'match' | 'message',
  source: string,
  expected: 'bool' | 'string',
  views: readonly SyntheticView[],
  evaluate: (program: CelProgram, synthetic: SyntheticView) => ReturnType<CelProgram>,
  add: (message: string) => void,
): Generator<void, { program: CelProgram; expr: CelExpr } | undefined, void> {
  const compiled = compileExpression(source, rule.on);
  if ('problems' in compiled) {
    for (const problem of compiled.problems) add(`${field}: ${problem}`);
    return undefined;
  }
  const estimated = estimateCost(compiled.expr, rule.on);
  if (estimated > RULE_COST_LIMIT) {
    add(
      `${field}: its worst case costs ${formatUnits(estimated)} units, over the ${formatUnits(RULE_COST_LIMIT)} one rule may spend on one ${rule.on} (estimated with addresses of ${ESTIMATE_ADDRESS_CHARS} characters and other strings of ${ESTIMATE_STRING_CHARS}); on a large plan it would deny or require approval for running out. Loop over less (split on a separator, not ""; no loop inside a loop over a string's characters), or compare whole values`,
    );
    return undefined;
  }
  for (const synthetic of views) {
    const result = evaluate(compiled.program, synthetic);
    yield;
    if (isError(result)) {
      const atRunTime =
        field === 'message'
          ? "denies with the runner's words instead"
          : rule.effect === 'deny'
            ? 'denies'
            : 'requires approval';
      add(
        `${field} fails on ${synthetic.what}: ${result.message}; at run time that ${atRunTime}. Guard the part that can fail (e.g. size(list) > 0 && list[0] …, or divisor != 0 && …)`,
      );
      return undefined;
    }
    if (typeof result !== (expected === 'bool' ? 'boolean' : 'string')) {
      add(`${field} gives ${celTypeName(result)} on ${synthetic.what}, not a ${expected}`);
      return undefined;
    }
  }
  return compiled;
}

/** 1234567 as "1,234,567"; Infinity as "more than 10^15". */
const formatUnits = (units: number) => (units > 1e15 ? 'more than 10^15' : Math.ceil(units).toLocaleString('en-US'));

/** The CEL variables of a view, by its scope. */
function bindingOf(synthetic: SyntheticView) {
  switch (synthetic.scope) {
    case 'change':
      return changeBinding(synthetic.view);
    case 'action':
      return actionBinding(synthetic.view);
    case 'plan':
      return planBinding(synthetic.view);
  }
}
