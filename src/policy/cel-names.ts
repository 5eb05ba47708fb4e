// The compile-time name check, apart: CEL's `false && change.typo` is false, never an error, so evaluation alone misses a typo.
import type { ActionCounts } from '../schemas/classification.ts';
import { ENV, functionsOf, type CelExpr } from './cel-shapes.ts';
import type { RuleScope } from './schema.ts';

/** The CEL variable each scope binds: a change rule sees `change` only, and so on. */
const SCOPE_VARIABLE: Readonly<Record<RuleScope, string>> = { change: 'change', action: 'action', plan: 'plan' };

/** Fields a rule can read: a leaf is a value, an object names its own fields. */
type Shape = { readonly [field: string]: Shape | 'value' };

const leaves = (...names: string[]): Shape => Object.fromEntries(names.map((name) => [name, 'value' as const]));

export const COUNT_FIELDS = [
  'create',
  'update',
  'delete',
  'replace',
  'read',
  'noop',
  'forget',
  'import',
  'move',
  'unknown',
] as const satisfies readonly (keyof ActionCounts)[];

const SCOPE_SHAPES: Readonly<Record<RuleScope, Shape>> = {
  change: leaves(
    'address',
    'module',
    'mode',
    'type',
    'name',
    'provider',
    'kind',
    'actions',
    'reason',
    'replacePaths',
    'deposed',
    'previousAddress',
    'previousModule',
    'previousType',
    'previousName',
    'addresses',
    'modules',
    'types',
    'names',
    'moved',
    'imported',
  ),
  action: leaves('address', 'type', 'provider', 'trigger', 'triggeringResource', 'onFailure', 'deferred'),
  plan: { counts: leaves(...COUNT_FIELDS), tool: 'value', version: 'value' },
};

/** CEL's type denotations, which an expression may name (`type(x) == string`). */
const TYPE_NAMES = new Set([
  'bool',
  'bytes',
  'double',
  'int',
  'list',
  'map',
  'null_type',
  'string',
  'type',
  'uint',
  'dyn',
]);

/**
 * Walks the expression, each problem into `problems`; returns the shape of the value when it is a
 * view (or part of one).
 */
export function checkNames(
  expr: CelExpr | undefined,
  scope: RuleScope,
  locals: ReadonlySet<string>,
  problems: string[],
): Shape | undefined {
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
        problems.push(
          `unknown name "${name}": an "on: ${scope}" rule sees only "${variable}"${other ? ` ("${name}" is seen by "on: ${other}" rules)` : ''}`,
        );
      }
      return undefined;
    }
    case 'selectExpr': {
      const shape = checkNames(kind.value.operand, scope, locals, problems);
      return fieldOf(
        shape,
        kind.value.field,
        kind.value.testOnly,
        describePath(kind.value.operand, locals, variable),
        problems,
      );
    }
    case 'callExpr': {
      if (!isNamespace(kind.value.target, kind.value.function, locals))
        checkNames(kind.value.target, scope, locals, problems);
      const args = kind.value.args.map((arg) => checkNames(arg, scope, locals, problems));
      if (kind.value.function === '_[_]' && kind.value.args.length === 2) {
        const key = kind.value.args[1]!.exprKind;
        if (key.case === 'constExpr' && key.value.constantKind.case === 'stringValue')
          return fieldOf(
            args[0],
            key.value.constantKind.value,
            false,
            describePath(kind.value.args[0], locals, variable),
            problems,
          );
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

/** The fields of the scope's variable an expression reads (`change.name`, `change["name"]`), where a comprehension does not shadow it. */
export function fieldsRead(
  expr: CelExpr | undefined,
  variable: string,
  shadowed = false,
  found = new Set<string>(),
): Set<string> {
  const kind = expr?.exprKind;
  const isVariable = (operand: CelExpr | undefined) =>
    !shadowed && operand?.exprKind.case === 'identExpr' && operand.exprKind.value.name === variable;
  switch (kind?.case) {
    case 'selectExpr':
      if (isVariable(kind.value.operand)) found.add(kind.value.field);
      fieldsRead(kind.value.operand, variable, shadowed, found);
      break;
    case 'callExpr': {
      const [container, key] = kind.value.args;
      if (
        kind.value.function === '_[_]' &&
        isVariable(container) &&
        key?.exprKind.case === 'constExpr' &&
        key.exprKind.value.constantKind.case === 'stringValue'
      )
        found.add(key.exprKind.value.constantKind.value);
      fieldsRead(kind.value.target, variable, shadowed, found);
      for (const arg of kind.value.args) fieldsRead(arg, variable, shadowed, found);
      break;
    }
    case 'listExpr':
      for (const element of kind.value.elements) fieldsRead(element, variable, shadowed, found);
      break;
    case 'structExpr':
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') fieldsRead(entry.keyKind.value, variable, shadowed, found);
        fieldsRead(entry.value, variable, shadowed, found);
      }
      break;
    case 'comprehensionExpr': {
      const c = kind.value;
      fieldsRead(c.iterRange, variable, shadowed, found);
      fieldsRead(c.accuInit, variable, shadowed, found);
      const inner = shadowed || [c.iterVar, c.iterVar2, c.accuVar].includes(variable);
      for (const part of [c.loopCondition, c.loopStep, c.result]) fieldsRead(part, variable, inner, found);
      break;
    }
  }
  return found;
}

/** `strings` in `strings.quote(x)`: the namespace of a function the environment has, not a name the rule reads. */
function isNamespace(target: CelExpr | undefined, fn: string, locals: ReadonlySet<string>): boolean {
  const kind = target?.exprKind;
  if (kind?.case !== 'identExpr' || locals.has(kind.value.name)) return false;
  return functionsOf(ENV).find(`${kind.value.name}.${fn}`) !== undefined;
}

function fieldOf(
  shape: Shape | undefined,
  field: string,
  testOnly: boolean,
  path: string,
  problems: string[],
): Shape | undefined {
  if (!shape) return undefined;
  const found = Object.hasOwn(shape, field) ? shape[field] : undefined;
  if (found === undefined) {
    problems.push(`${path} has no field "${field}" (its fields: ${Object.keys(shape).join(', ')})`);
    return undefined;
  }
  if (testOnly)
    problems.push(
      `has(${path}.${field}) is always true: every field is always present ("", [] or false when terraform gives none); compare the value instead, e.g. ${path}.${field} != ""`,
    );
  return found === 'value' ? undefined : found;
}

/** `change`, `plan.counts`: how a problem names the view an expression reads. */
function describePath(expr: CelExpr | undefined, locals: ReadonlySet<string>, variable: string): string {
  const kind = expr?.exprKind;
  if (kind?.case === 'identExpr' && !locals.has(kind.value.name)) return kind.value.name;
  if (kind?.case === 'selectExpr') return `${describePath(kind.value.operand, locals, variable)}.${kind.value.field}`;
  return variable;
}
