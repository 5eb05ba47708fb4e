// The CEL side of policies: one environment (the standard library and the strings extension, as
// Kubernetes offers them), the views as CEL values, and the names a rule may use. @bufbuild/cel
// has no public type checker, so a rule is checked in two ways at compile time: here, every name
// and field it reads must exist (CEL's `false && change.typo` is false, never an error, so
// evaluation alone would miss the typo), and compile.ts evaluates it over a synthetic view of
// every kind. Only the policy chunk imports this file: the CEL library loads only with a policy.
import {
  celEnv,
  celError,
  celFunc,
  celList,
  celType,
  isCelError,
  isCelList,
  isCelMap,
  listType,
  CelScalar,
  parse,
  plan,
  type CelEnv,
  type CelInput,
  type CelList,
  type CelResult,
  type CelValue,
} from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import type { ActionCounts } from '../schemas/classification.ts';
import {
  callCharge,
  CostMeter,
  dimOf,
  EvaluationStopped,
  MAX_BUILT_LIST_ELEMENTS,
  MAX_BUILT_STRING_CHARS,
  rangeCost,
} from './cost.ts';
import type { RuleScope } from './schema.ts';
import { celSyntaxProblem } from './cel-syntax.ts';
import { compilePattern } from './regex.ts';
import type { PolicyActionView, PolicyChangeView, PolicyPlanView } from '../plan/policy-views.ts';

const LIST = listType(CelScalar.DYN);

/**
 * Lists are joined into a new list: the library's own `+` returns a view of both, and the `map`
 * and `filter` macros append once an element, so a built list would be a chain as deep as it is
 * long (each element read through every link). Same id as the library's: it takes its place.
 */
const joinLists = celFunc('_+_', [LIST, LIST], LIST, (left: CelList, right: CelList) => {
  const joined = elementsOf(left).concat(elementsOf(right));
  const list = celList(joined);
  BUILT.set(list, joined);
  return list;
});

/** The arrays behind the accumulators `@captf.append` grows in place. */
const OWNED = new WeakMap<CelList, CelValue[]>();

/** The arrays behind the lists `+` built: read again without the library's iterator. */
const BUILT = new WeakMap<CelList, CelValue[]>();
const elementsOf = (list: CelList): CelValue[] => BUILT.get(list) ?? [...list];

const ENV = celEnv({ funcs: [...strings, joinLists] });

type Expr = ReturnType<typeof parse>['expr'];

/** The CEL variables one evaluation sees: `change`, `action` or `plan`. */
export type CelBindings = Record<string, CelInput>;

/** A parsed and planned expression: evaluating it never throws; every unit it spends is charged to `meter`, which stops it at its limit. */
export type CelProgram = (bindings: CelBindings, meter: CostMeter) => CelResult;

/** The parsed expression: what estimate.ts reads. */
export type CelExpr = Expr;

/** The CEL variable each scope binds: a change rule sees `change` only, and so on. */
const SCOPE_VARIABLE: Readonly<Record<RuleScope, string>> = { change: 'change', action: 'action', plan: 'plan' };

/** Fields a rule can read: a leaf is a value, an object names its own fields. */
type Shape = { readonly [field: string]: Shape | 'value' };

const leaves = (...names: string[]): Shape => Object.fromEntries(names.map((name) => [name, 'value' as const]));

const COUNT_FIELDS = [
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
 * Parses `source` and checks the names it reads against the scope's view. Returns the program,
 * or every problem found (a parse error is the only one then).
 */
export function compileExpression(
  source: string,
  scope: RuleScope,
): { program: CelProgram; expr: Expr } | { problems: string[] } {
  let parsed;
  try {
    parsed = parse(source);
  } catch (error) {
    return { problems: [`does not parse: ${celSyntaxProblem(source, (error as Error).message)}`] };
  }
  const problems: string[] = [];
  checkNames(parsed.expr, scope, new Set(), problems);
  if (problems.length || !parsed.expr) return { problems: [...new Set(problems)] };
  const expr = parsed.expr;
  // Parsed again, then metered: estimate.ts reads the expression as written.
  const metered = parse(source).expr!;
  const nodes = instrument(metered);
  const planned = plan(METERED_ENV, metered);
  return {
    expr,
    program: (bindings, meter) => {
      const outer = current;
      current = meter;
      try {
        meter.charge(nodes);
        return planned(bindings);
      } catch (error) {
        // plan() catches what evaluation throws (the meter's stop included); this is the belt
        return error instanceof EvaluationStopped ? celError('stopped') : celError(error);
      } finally {
        current = outer;
      }
    },
  };
}

/** The meter of the evaluation running now (evaluation is synchronous: one at a time). */
let current: CostMeter | undefined;

/** Calls the instrumented expression makes to the meter; `@` names cannot be written in CEL. */
const STEP = '@captf.step';
const RANGE = '@captf.range';
const APPEND = '@captf.append';
/** The accumulator of the macros' comprehensions: no rule can name it. */
export const ACCUMULATOR = '@result';

/**
 * Rewrites every comprehension (every macro: all, exists, exists_one, map, filter) so that each
 * step charges its body's nodes, `@captf.step(condition, nodes)`, and its range is charged when it
 * is materialised, `@captf.range(range)`. Returns the nodes of the whole expression: what one
 * evaluation charges before it starts (idents, selects, constants and literals cost one each).
 */
function instrument(expr: Expr): number {
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'selectExpr':
      return 1 + (kind.value.operand ? instrument(kind.value.operand) : 0);
    case 'callExpr':
      return (
        1 +
        (kind.value.target ? instrument(kind.value.target) : 0) +
        kind.value.args.reduce((n, arg) => n + instrument(arg), 0)
      );
    case 'listExpr':
      return 1 + kind.value.elements.reduce((n, element) => n + instrument(element), 0);
    case 'structExpr':
      return (
        1 +
        kind.value.entries.reduce(
          (n, entry) =>
            n +
            (entry.keyKind.case === 'mapKey' ? instrument(entry.keyKind.value) : 0) +
            (entry.value ? instrument(entry.value) : 0),
          0,
        )
      );
    case 'comprehensionExpr': {
      const c = kind.value;
      const body = (c.loopCondition ? instrument(c.loopCondition) : 0) + (c.loopStep ? instrument(c.loopStep) : 0);
      const rest =
        (c.iterRange ? instrument(c.iterRange) : 0) +
        (c.accuInit ? instrument(c.accuInit) : 0) +
        (c.result ? instrument(c.result) : 0);
      if (c.loopCondition)
        c.loopCondition = meterCall(c.loopCondition, STEP, [c.loopCondition, constInt(c.loopCondition, 1 + body)]);
      if (c.iterRange) c.iterRange = meterCall(c.iterRange, RANGE, [c.iterRange]);
      if (c.loopStep) appendInPlace(c.loopStep, c.accuVar);
      return 1 + body + rest;
    }
    default:
      return 1;
  }
}

/**
 * `map` and `filter` append one element to their accumulator at each step (`@result + [x]`): a
 * list copied at each step, quadratic in the range. The accumulator is seen by its step alone, so
 * the step appends to it in place instead (`@captf.append(@result, x)`): linear, as it is charged.
 */
function appendInPlace(step: Expr, accumulator: string): void {
  const kind = step.exprKind;
  if (kind.case !== 'callExpr' || accumulator !== ACCUMULATOR) return;
  if (kind.value.function === '_?_:_') {
    for (const branch of kind.value.args.slice(1)) appendInPlace(branch, accumulator);
    return;
  }
  const [accu, appended] = kind.value.args;
  if (kind.value.function !== '_+_' || accu?.exprKind.case !== 'identExpr' || accu.exprKind.value.name !== accumulator)
    return;
  if (appended?.exprKind.case !== 'listExpr' || appended.exprKind.value.elements.length !== 1) return;
  step.exprKind = {
    case: 'callExpr',
    value: { $typeName: 'cel.expr.Expr.Call', function: APPEND, args: [accu, appended.exprKind.value.elements[0]!] },
  } as Expr['exprKind'];
}

function meterCall(at: Expr, fn: string, args: Expr[]): Expr {
  return {
    ...at,
    exprKind: { case: 'callExpr', value: { $typeName: 'cel.expr.Expr.Call', function: fn, args } },
  } as Expr;
}

function constInt(at: Expr, value: number): Expr {
  return {
    ...at,
    exprKind: {
      case: 'constExpr',
      value: { $typeName: 'cel.expr.Constant', constantKind: { case: 'int64Value', value: BigInt(value) } },
    },
  } as Expr;
}

type FuncGroup = { call(id: number, target: CelValue | undefined, args: CelValue[]): CelResult | undefined };
type FuncResolver = { find(name: string): FuncGroup | undefined } & Iterable<unknown>;

/**
 * The environment's functions, each call charged to the running evaluation's meter before it runs
 * (from its operands' sizes) and its result checked against the bounds after. The library has no
 * cost hooks: its planner takes the environment's function resolver, and this one wraps each
 * function it finds (the same functions, the same results).
 */
function meteredFunctions(inner: FuncResolver): FuncResolver {
  const stepGroup: FuncGroup = {
    call: (_id, _target, [condition, nodes]) => {
      current?.charge(Number(nodes));
      return condition;
    },
  };
  const rangeGroup: FuncGroup = {
    call: (_id, _target, [range]) => {
      if (current && range !== undefined && (isCelList(range) || isCelMap(range)))
        current.charge(rangeCost(range.size));
      return range;
    },
  };
  const appendGroup: FuncGroup = {
    call: (_id, _target, [accumulator, element]) => {
      current?.charge(
        callCharge('_+_', [
          { kind: 'list', len: 0, weight: 1, appendable: true },
          { kind: 'list', len: 1, weight: 1 },
        ]).cost,
      );
      if (!isCelList(accumulator) || element === undefined)
        return celError('internal error: an accumulator that is no list');
      // The accumulator's array is this fold's own once it appended (the first step copies: `[]` may be shared).
      let array = OWNED.get(accumulator);
      if (!array) {
        array = [...accumulator];
        accumulator = celList(array);
        OWNED.set(accumulator, array);
      }
      if (current && array.length >= MAX_BUILT_LIST_ELEMENTS)
        checkBuilt(current, 'map', { kind: 'list', len: array.length + 1 }, 'could build');
      array.push(element);
      return accumulator;
    },
  };
  return {
    find(name) {
      if (name === 'matches') return matchesGroup;
      if (name === STEP) return stepGroup;
      if (name === RANGE) return rangeGroup;
      if (name === APPEND) return appendGroup;
      const group = inner.find(name);
      return group && { call: (id, target, args) => meteredCall(name, group, id, target, args) };
    },
    [Symbol.iterator]: () => inner[Symbol.iterator](),
  };
}

/**
 * `s.matches(pattern)`, in place of the library's (which compiled the pattern at every call, at any
 * size): the pattern compiled once (regex.ts), a program over the bound refused before it is built,
 * the call charged by its instructions.
 */
const matchesGroup: FuncGroup = {
  call: (_id, target, [pattern]) => {
    if (typeof target !== 'string' || typeof pattern !== 'string') return undefined;
    const compiled = compilePattern(pattern);
    if ('refused' in compiled) {
      if (compiled.size) current?.stop({ kind: 'size', what: compiled.refused });
      return celError(compiled.refused);
    }
    current?.charge(
      callCharge('matches', [
        { kind: 'string', len: target.length, weight: target.length },
        { kind: 'string', len: pattern.length, weight: pattern.length, program: compiled.instructions },
      ]).cost,
    );
    return compiled.matcher.test(target);
  },
};

function meteredCall(
  name: string,
  group: FuncGroup,
  id: number,
  target: CelValue | undefined,
  args: CelValue[],
): CelResult | undefined {
  const meter = current;
  if (!meter) return group.call(id, target, args);
  const operands = target === undefined ? args : [target, ...args];
  // Measuring stops where the traversal alone would exceed what is left.
  const cap = meter.left * 10 + 10;
  const charge = callCharge(
    name,
    operands.map((operand) => dimOf(operand, cap)),
  );
  meter.charge(charge.cost);
  // Refused before the call when it could build more than the bounds allow, checked again on what it built.
  if (charge.builds) checkBuilt(meter, name, charge.builds, 'could build');
  const result = group.call(id, target, args);
  if (result !== undefined && !isCelError(result)) {
    const built = dimOf(result, 0);
    if (built.kind === 'string' || built.kind === 'list')
      checkBuilt(meter, name, { kind: built.kind, len: built.len }, 'built');
  }
  return result;
}

/** The bounds of what a rule builds. */
function checkBuilt(meter: CostMeter, fn: string, built: { kind: 'string' | 'list'; len: number }, verb: string): void {
  const [bound, unit] =
    built.kind === 'string' ? [MAX_BUILT_STRING_CHARS, 'characters'] : [MAX_BUILT_LIST_ELEMENTS, 'elements'];
  if (built.len > bound)
    meter.stop({
      kind: 'size',
      what: `${fn} ${verb} a ${built.kind} of ${built.len} ${unit} (a rule builds at most ${bound})`,
    });
}

/** The environment rules are planned in: the same as ENV, its functions metered. */
const METERED_ENV: CelEnv = Object.create(ENV, {
  funcs: { value: meteredFunctions(ENV.funcs as unknown as FuncResolver) },
}) as CelEnv;

/** Walks the expression; returns the shape of the value when it is a view (or part of one). */
function checkNames(
  expr: Expr | undefined,
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
  expr: Expr | undefined,
  variable: string,
  shadowed = false,
  found = new Set<string>(),
): Set<string> {
  const kind = expr?.exprKind;
  const isVariable = (operand: Expr | undefined) =>
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
function isNamespace(target: Expr | undefined, fn: string, locals: ReadonlySet<string>): boolean {
  const kind = target?.exprKind;
  if (kind?.case !== 'identExpr' || locals.has(kind.value.name)) return false;
  return (ENV.funcs as unknown as FuncResolver).find(`${kind.value.name}.${fn}`) !== undefined;
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
function describePath(expr: Expr | undefined, locals: ReadonlySet<string>, variable: string): string {
  const kind = expr?.exprKind;
  if (kind?.case === 'identExpr' && !locals.has(kind.value.name)) return kind.value.name;
  if (kind?.case === 'selectExpr') return `${describePath(kind.value.operand, locals, variable)}.${kind.value.field}`;
  return variable;
}

const text = (value: string | null | undefined) => value ?? '';

/** What a change goes by: where it is and, when it moved (`known`: where it was is known), where it was, each once. */
const goesBy = (current: string, previous: string, known: boolean) =>
  known && previous !== current ? [current, previous] : [current];

/** A change as CEL sees it: exactly the documented fields, optional ones as "", [] or false. */
export function changeBinding(view: PolicyChangeView): CelBindings {
  const moved = view.moved === true && text(view.previousAddress) !== '';
  // The parts of the previous address, when terraform's previous_address could be read (the root module is "").
  const parts = moved && text(view.previousName) !== '';
  return {
    change: {
      address: view.address,
      module: text(view.module),
      mode: text(view.mode),
      type: text(view.type),
      name: text(view.name),
      previousModule: text(view.previousModule),
      previousType: text(view.previousType),
      previousName: text(view.previousName),
      addresses: goesBy(view.address, text(view.previousAddress), moved),
      modules: goesBy(text(view.module), text(view.previousModule), parts),
      types: goesBy(text(view.type), text(view.previousType), parts),
      names: goesBy(text(view.name), text(view.previousName), parts),
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

/** A check's evaluation that was stopped, as the error it reports. */
export const celStopped = (why: string) => celError(why);

/** A value's CEL type, as problems and findings name it: `a string`, `an int`, `a list`. */
export function celTypeName(value: CelValue): string {
  const name = celType(value).toString();
  return `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name}`;
}
