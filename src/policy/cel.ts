// The CEL side of policies: one environment (the standard library and the strings extension, as
// Kubernetes offers them), the views as CEL values, and the names a rule may use. @bufbuild/cel
// has no public type checker, so a rule is checked in two ways at compile time: here, every name
// and field it reads must exist (CEL's `false && change.typo` is false, never an error, so
// evaluation alone would miss the typo), and compile.ts evaluates it over a synthetic view of
// every kind. Only the policy chunk imports this file: the CEL library loads only with a policy.
import { celEnv, celError, celType, isCelError, parse, plan, type CelInput, type CelResult, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import type { ActionCounts } from '../schemas/classification.ts';
import type { RuleScope } from './schema.ts';
import type { PolicyActionView, PolicyChangeView, PolicyPlanView } from './views.ts';

const ENV = celEnv({ funcs: strings });

type Expr = ReturnType<typeof parse>['expr'];

/** The CEL variables one evaluation sees: `change`, `action` or `plan`. */
export type CelBindings = Record<string, CelInput>;

/** A parsed and planned expression: evaluating it never throws. */
export type CelProgram = (bindings: CelBindings) => CelResult;

/** The CEL variable each scope binds: a change rule sees `change` only, and so on. */
const SCOPE_VARIABLE: Readonly<Record<RuleScope, string>> = { change: 'change', action: 'action', plan: 'plan' };

/** Fields a rule can read: a leaf is a value, an object names its own fields. */
type Shape = { readonly [field: string]: Shape | 'value' };

const leaves = (...names: string[]): Shape => Object.fromEntries(names.map((name) => [name, 'value' as const]));

const COUNT_FIELDS = ['create', 'update', 'delete', 'replace', 'read', 'noop', 'forget', 'import', 'move', 'unknown'] as const satisfies readonly (keyof ActionCounts)[];

const SCOPE_SHAPES: Readonly<Record<RuleScope, Shape>> = {
  change: leaves('address', 'module', 'mode', 'type', 'name', 'provider', 'kind', 'actions', 'reason', 'replacePaths', 'deposed', 'previousAddress', 'moved', 'imported'),
  action: leaves('address', 'type', 'provider', 'trigger', 'triggeringResource', 'onFailure', 'deferred'),
  plan: { counts: leaves(...COUNT_FIELDS), tool: 'value', version: 'value' },
};

/** CEL's type denotations, which an expression may name (`type(x) == string`). */
const TYPE_NAMES = new Set(['bool', 'bytes', 'double', 'int', 'list', 'map', 'null_type', 'string', 'type', 'uint', 'dyn']);

/**
 * Parses `source` and checks the names it reads against the scope's view. Returns the program,
 * or every problem found (a parse error is the only one then).
 */
export function compileExpression(source: string, scope: RuleScope): { program: CelProgram } | { problems: string[] } {
  let parsed;
  try {
    parsed = parse(source);
  } catch (error) {
    return { problems: [`does not parse: ${(error as Error).message.replace(/^<input>:(\d+):(\d+): /, 'line $1, column $2: ')}`] };
  }
  const problems: string[] = [];
  checkNames(parsed.expr, scope, new Set(), problems);
  if (problems.length) return { problems: [...new Set(problems)] };
  const planned = plan(ENV, parsed);
  return {
    program: (bindings) => {
      try {
        return planned(bindings);
      } catch (error) {
        return celError(error); // plan() catches what evaluation throws; this is the belt
      }
    },
  };
}

/** Walks the expression; returns the shape of the value when it is a view (or part of one). */
function checkNames(expr: Expr | undefined, scope: RuleScope, locals: ReadonlySet<string>, problems: string[]): Shape | undefined {
  if (!expr) return undefined;
  const kind = expr.exprKind;
  const variable = SCOPE_VARIABLE[scope];
  switch (kind.case) {
    case 'identExpr': {
      const name = kind.value.name;
      if (locals.has(name)) return undefined;
      if (name === variable) return SCOPE_SHAPES[scope];
      if (!TYPE_NAMES.has(name)) {
        const other = Object.entries(SCOPE_VARIABLE).find(([, v]) => v === name)?.[0];
        problems.push(`unknown name "${name}": an "on: ${scope}" rule sees only "${variable}"${other ? ` ("${name}" is seen by "on: ${other}" rules)` : ''}`);
      }
      return undefined;
    }
    case 'selectExpr': {
      const shape = checkNames(kind.value.operand, scope, locals, problems);
      return fieldOf(shape, kind.value.field, kind.value.testOnly, describePath(kind.value.operand, locals, variable), problems);
    }
    case 'callExpr': {
      checkNames(kind.value.target, scope, locals, problems);
      const args = kind.value.args.map((arg) => checkNames(arg, scope, locals, problems));
      if (kind.value.function === '_[_]' && kind.value.args.length === 2) {
        const key = kind.value.args[1]!.exprKind;
        if (key.case === 'constExpr' && key.value.constantKind.case === 'stringValue')
          return fieldOf(args[0], key.value.constantKind.value, false, describePath(kind.value.args[0], locals, variable), problems);
      }
      return undefined;
    }
    case 'listExpr':
      for (const element of kind.value.elements) checkNames(element, scope, locals, problems);
      return undefined;
    case 'structExpr':
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') checkNames(entry.keyKind.value, scope, locals, problems);
        checkNames(entry.value, scope, locals, problems);
      }
      return undefined;
    case 'comprehensionExpr': {
      const c = kind.value;
      checkNames(c.iterRange, scope, locals, problems);
      checkNames(c.accuInit, scope, locals, problems);
      const inner = new Set([...locals, c.iterVar, c.accuVar, ...(c.iterVar2 ? [c.iterVar2] : [])]);
      for (const part of [c.loopCondition, c.loopStep, c.result]) checkNames(part, scope, inner, problems);
      return undefined;
    }
    default:
      return undefined;
  }
}

function fieldOf(shape: Shape | undefined, field: string, testOnly: boolean, path: string, problems: string[]): Shape | undefined {
  if (!shape) return undefined;
  const found = Object.hasOwn(shape, field) ? shape[field] : undefined;
  if (found === undefined) {
    problems.push(`${path} has no field "${field}" (its fields: ${Object.keys(shape).join(', ')})`);
    return undefined;
  }
  if (testOnly) problems.push(`has(${path}.${field}) is always true: every field is always present ("", [] or false when terraform gives none); compare the value instead, e.g. ${path}.${field} != ""`);
  return found === 'value' ? undefined : found;
}

/** `change`, `plan.counts`: how a problem names the view an expression reads. */
function describePath(expr: Expr | undefined, locals: ReadonlySet<string>, variable: string): string {
  const kind = expr?.exprKind;
  if (kind?.case === 'identExpr' && !locals.has(kind.value.name)) return kind.value.name;
  if (kind?.case === 'selectExpr') return `${describePath(kind.value.operand, locals, variable)}.${kind.value.field}`;
  return variable;
}

const text = (value: string | null | undefined) => value ?? '';

/** A change as CEL sees it: exactly the documented fields, optional ones as "", [] or false. */
export function changeBinding(view: PolicyChangeView): CelBindings {
  return {
    change: {
      address: view.address,
      module: text(view.module),
      mode: text(view.mode),
      type: text(view.type),
      name: text(view.name),
      provider: text(view.provider),
      kind: view.kind,
      actions: [...view.actions],
      reason: text(view.reason),
      replacePaths: (view.replacePaths ?? []).map((path) => path.map(String)),
      deposed: text(view.deposed),
      previousAddress: text(view.previousAddress),
      moved: view.moved === true,
      imported: view.imported === true,
    },
  };
}

export function actionBinding(view: PolicyActionView): CelBindings {
  return {
    action: {
      address: view.address,
      type: text(view.type),
      provider: text(view.provider),
      trigger: view.trigger,
      triggeringResource: text(view.triggeringResource),
      onFailure: text(view.onFailure),
      deferred: view.deferred === true,
    },
  };
}

/** Counts are CEL ints (a JS number would be a CEL double, and `plan.counts.delete + 1` would fail). */
export function planBinding(view: PolicyPlanView): CelBindings {
  const counts: Record<string, bigint> = {};
  for (const field of COUNT_FIELDS) counts[field] = BigInt(view.counts[field]);
  return { plan: { counts, tool: view.tool, version: view.version } };
}

export { isCelError as isError };

/** A value's CEL type, as problems and findings name it: `a string`, `an int`, `a list`. */
export function celTypeName(value: CelValue): string {
  const name = celType(value).toString();
  return `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name}`;
}
