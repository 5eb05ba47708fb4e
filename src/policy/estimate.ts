// A rule's worst-case cost, estimated when the policy is compiled, as Kubernetes estimates a CEL
// rule's cost against its schema's largest values: the same charges as the meter (cost.ts) over
// the largest view the estimate assumes (VIEW_BOUNDS). A rule whose worst case is over the rule
// budget is refused before any plan: it could only fail closed on large plans. The estimate is an
// early word, not the bound: a plan with longer addresses than assumed is still held to the
// runtime budget.
import { ACCUMULATOR } from './cel-meter.ts';
import type { CelExpr } from './cel-shapes.ts';
import { instructionBound } from './regex.ts';
import { callCharge, ELEMENT_WEIGHT, rangeCost, type Dim } from './cost.ts';
import type { RuleScope } from './schema.ts';

/** The size of a value an expression can hold, at most. */
type Size =
  | { kind: 'scalar' }
  | { kind: 'string'; len: number }
  | { kind: 'list'; len: number; elem: Size }
  | { kind: 'map'; len: number; key: Size; value: Size }
  | { kind: 'view'; fields: Readonly<Record<string, Size>> };

const SCALAR: Size = { kind: 'scalar' };
const str = (len: number): Size => ({ kind: 'string', len });
const list = (len: number, elem: Size): Size => ({ kind: 'list', len, elem });

/** The most the estimate takes an address to be (characters): a module path with keys and a keyed instance. */
export const ESTIMATE_ADDRESS_CHARS = 1024;
/** The most the estimate takes any other string of a view to be (a type, a name, a provider, a reason). */
export const ESTIMATE_STRING_CHARS = 256;

const ADDRESS = str(ESTIMATE_ADDRESS_CHARS);
const TEXT = str(ESTIMATE_STRING_CHARS);

/** The largest view of each scope the estimate assumes; the fields are those of cel-names.ts. */
const VIEW_BOUNDS: Readonly<Record<RuleScope, Readonly<Record<string, Size>>>> = {
  change: {
    address: ADDRESS,
    module: ADDRESS,
    mode: TEXT,
    type: TEXT,
    name: TEXT,
    provider: TEXT,
    kind: TEXT,
    actions: list(4, TEXT),
    reason: TEXT,
    replacePaths: list(64, list(16, TEXT)),
    deposed: TEXT,
    previousAddress: ADDRESS,
    previousModule: ADDRESS,
    previousType: TEXT,
    previousName: TEXT,
    addresses: list(2, ADDRESS),
    modules: list(2, ADDRESS),
    types: list(2, TEXT),
    names: list(2, TEXT),
    moved: SCALAR,
    imported: SCALAR,
  },
  action: {
    address: ADDRESS,
    type: TEXT,
    provider: TEXT,
    trigger: TEXT,
    triggeringResource: ADDRESS,
    onFailure: TEXT,
    deferred: SCALAR,
  },
  plan: { counts: { kind: 'map', len: 10, key: TEXT, value: SCALAR }, tool: TEXT, version: TEXT },
};

const SCOPE_VARIABLE: Readonly<Record<RuleScope, string>> = { change: 'change', action: 'action', plan: 'plan' };

/** The worst-case cost of one evaluation of `expr` in `scope`, in the meter's units. */
export function estimateCost(expr: CelExpr, scope: RuleScope): number {
  const locals = new Map<string, Size>([[SCOPE_VARIABLE[scope], { kind: 'view', fields: VIEW_BOUNDS[scope] }]]);
  return nodes(expr) + estimate(expr, locals).cost;
}

interface Estimate {
  cost: number;
  size: Size;
}

/** The nodes of an expression (what an evaluation, or a comprehension's step, charges for them). */
function nodes(expr: CelExpr | undefined): number {
  if (!expr) return 0;
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'selectExpr':
      return 1 + nodes(kind.value.operand);
    case 'callExpr':
      return 1 + nodes(kind.value.target) + kind.value.args.reduce((n, arg) => n + nodes(arg), 0);
    case 'listExpr':
      return 1 + kind.value.elements.reduce((n, element) => n + nodes(element), 0);
    case 'structExpr':
      return (
        1 +
        kind.value.entries.reduce(
          (n, entry) => n + (entry.keyKind.case === 'mapKey' ? nodes(entry.keyKind.value) : 0) + nodes(entry.value),
          0,
        )
      );
    case 'comprehensionExpr': {
      const c = kind.value;
      return 1 + nodes(c.iterRange) + nodes(c.accuInit) + nodes(c.loopCondition) + nodes(c.loopStep) + nodes(c.result);
    }
    default:
      return 1;
  }
}

function weightOf(size: Size): number {
  switch (size.kind) {
    case 'string':
      return size.len;
    case 'list':
      return 1 + size.len * (ELEMENT_WEIGHT + weightOf(size.elem));
    case 'map':
      return 1 + size.len * (2 * ELEMENT_WEIGHT + weightOf(size.key) + weightOf(size.value));
    case 'view':
      return (
        1 +
        Object.values(size.fields).reduce(
          (sum, field) => sum + 2 * ELEMENT_WEIGHT + ESTIMATE_STRING_CHARS + weightOf(field),
          0,
        )
      );
    default:
      return 1;
  }
}

function dimOf(size: Size): Dim {
  switch (size.kind) {
    case 'string':
      return { kind: 'string', len: size.len, weight: size.len };
    case 'list':
    case 'map':
      return { kind: size.kind, len: size.len, weight: weightOf(size) };
    case 'view':
      return { kind: 'map', len: Object.keys(size.fields).length, weight: weightOf(size) };
    default:
      return { kind: 'scalar', len: 1, weight: 1 };
  }
}

/** The larger of two sizes (a value that may be either). */
function merge(a: Size, b: Size): Size {
  if (a.kind === 'string' && b.kind === 'string') return str(Math.max(a.len, b.len));
  if (a.kind === 'list' && b.kind === 'list') return list(Math.max(a.len, b.len), merge(a.elem, b.elem));
  if (a.kind === 'map' && b.kind === 'map')
    return { kind: 'map', len: Math.max(a.len, b.len), key: merge(a.key, b.key), value: merge(a.value, b.value) };
  return weightOf(a) >= weightOf(b) ? a : b;
}

function estimate(expr: CelExpr | undefined, locals: ReadonlyMap<string, Size>): Estimate {
  if (!expr) return { cost: 0, size: SCALAR };
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'constExpr': {
      const constant = kind.value.constantKind;
      return {
        cost: 0,
        size: constant.case === 'stringValue' || constant.case === 'bytesValue' ? str(constant.value.length) : SCALAR,
      };
    }
    case 'identExpr':
      return { cost: 0, size: locals.get(kind.value.name) ?? SCALAR };
    case 'selectExpr': {
      const operand = estimate(kind.value.operand, locals);
      return { cost: operand.cost, size: kind.value.testOnly ? SCALAR : member(operand.size, kind.value.field) };
    }
    case 'listExpr': {
      const elements = kind.value.elements.map((element) => estimate(element, locals));
      return { cost: sum(elements), size: list(elements.length, elements.map((e) => e.size).reduce(merge, SCALAR)) };
    }
    case 'structExpr': {
      const keys = kind.value.entries.map((entry) =>
        estimate(entry.keyKind.case === 'mapKey' ? entry.keyKind.value : undefined, locals),
      );
      const values = kind.value.entries.map((entry) => estimate(entry.value, locals));
      const size: Size = {
        kind: 'map',
        len: values.length,
        key: keys.map((k) => k.size).reduce(merge, SCALAR),
        value: values.map((v) => v.size).reduce(merge, SCALAR),
      };
      return { cost: sum(keys) + sum(values), size };
    }
    case 'comprehensionExpr':
      return comprehension(kind.value, locals);
    case 'callExpr':
      return call(kind.value, locals);
    default:
      return { cost: 0, size: SCALAR };
  }
}

const sum = (estimates: readonly Estimate[]) => estimates.reduce((total, e) => total + e.cost, 0);

/** A field of a view, a map's value (`m.key`), or the larger of a view's fields when it is read by a key only known at run time. */
function member(size: Size, field: string | undefined): Size {
  if (size.kind === 'view')
    return (
      (field !== undefined && Object.hasOwn(size.fields, field) ? size.fields[field] : undefined) ??
      Object.values(size.fields).reduce(merge, SCALAR)
    );
  if (size.kind === 'map') return size.value;
  if (size.kind === 'list') return size.elem;
  return SCALAR;
}

type Call = Extract<CelExpr['exprKind'], { case: 'callExpr' }>['value'];
type Comprehension = Extract<CelExpr['exprKind'], { case: 'comprehensionExpr' }>['value'];

function call(c: Call, locals: ReadonlyMap<string, Size>): Estimate {
  const args = c.args.map((arg) => estimate(arg, locals));
  switch (c.function) {
    case '_[_]': {
      const [container] = args;
      const keyExpr = c.args[1]?.exprKind;
      const field =
        keyExpr?.case === 'constExpr' && keyExpr.value.constantKind.case === 'stringValue'
          ? keyExpr.value.constantKind.value
          : undefined;
      return { cost: sum(args), size: member(container!.size, field) };
    }
    case '_?_:_': {
      const [condition, whenTrue, whenFalse] = args;
      return {
        cost: condition!.cost + Math.max(whenTrue!.cost, whenFalse!.cost),
        size: merge(whenTrue!.size, whenFalse!.size),
      };
    }
    case '_&&_':
    case '_||_':
    case '@not_strictly_false':
      return { cost: sum(args), size: SCALAR };
  }
  // `strings.quote(s)`: a qualified name, not a method of `strings`
  const target =
    c.target?.exprKind.case === 'identExpr' && !locals.has(c.target.exprKind.value.name)
      ? undefined
      : c.target && estimate(c.target, locals);
  const name =
    c.target && !target && c.target.exprKind.case === 'identExpr'
      ? `${c.target.exprKind.value.name}.${c.function}`
      : c.function;
  const operands = target ? [target, ...args] : args;
  const dims = operands.map((operand) => dimOf(operand.size));
  // A constant pattern's program is bounded from its text; any other may compile to the most a pattern may.
  const pattern = c.args[0]?.exprKind;
  if (
    name === 'matches' &&
    dims[1] &&
    pattern?.case === 'constExpr' &&
    pattern.value.constantKind.case === 'stringValue'
  )
    dims[1] = { ...dims[1], program: instructionBound(pattern.value.constantKind.value) };
  // A macro's step appends to its accumulator in place (cel-meter.ts): only the appended element is built.
  const first = c.args[0]?.exprKind;
  if (name === '_+_' && first?.case === 'identExpr' && first.value.name === ACCUMULATOR && dims[0])
    dims[0] = { ...dims[0], appendable: true };
  const charge = callCharge(name, dims);
  return {
    cost: sum(operands) + charge.cost,
    size: resultSize(
      name,
      operands.map((o) => o.size),
      charge.builds,
      c.args[0],
    ),
  };
}

/** What a call gives, as large as it can be. */
function resultSize(
  name: string,
  operands: readonly Size[],
  builds: { kind: 'string' | 'list'; len: number } | undefined,
  firstArg: CelExpr | undefined,
): Size {
  const [a] = operands;
  if (builds?.kind === 'string') return str(builds.len);
  if (builds?.kind === 'list') {
    // split("") gives the characters; another separator, pieces as long as the whole at most
    const constant = firstArg?.exprKind.case === 'constExpr' ? firstArg.exprKind.value.constantKind : undefined;
    if (name === 'split')
      return list(builds.len, constant?.case === 'stringValue' && constant.value === '' ? str(1) : (a ?? SCALAR));
    const elems = operands.map((o) => (o.kind === 'list' ? o.elem : SCALAR));
    return list(builds.len, elems.reduce(merge, SCALAR));
  }
  if (name === 'dyn' && a) return a;
  if (name === 'bytes' && a) return a;
  return SCALAR;
}

function comprehension(c: Comprehension, locals: ReadonlyMap<string, Size>): Estimate {
  const range = estimate(c.iterRange, locals);
  const init = estimate(c.accuInit, locals);
  const count = range.size.kind === 'list' || range.size.kind === 'map' ? range.size.len : 0;
  const element = range.size.kind === 'list' ? range.size.elem : range.size.kind === 'map' ? range.size.key : SCALAR;
  const scope = (accu: Size) =>
    new Map([
      ...locals,
      [c.iterVar, element],
      [c.accuVar, accu],
      ...(c.iterVar2 ? [[c.iterVar2, element] as const] : []),
    ]);
  // The accumulator as large as it grows: a step that appends adds the same each time (map, filter).
  const once = estimate(c.loopStep, scope(init.size)).size;
  const grown =
    init.size.kind === 'list' && once.kind === 'list' && once.len > init.size.len
      ? list(init.size.len + count * (once.len - init.size.len), merge(init.size.elem, once.elem))
      : merge(init.size, once);
  const inner = scope(grown);
  const step =
    1 +
    nodes(c.loopCondition) +
    nodes(c.loopStep) +
    estimate(c.loopCondition, inner).cost +
    estimate(c.loopStep, inner).cost;
  const result = estimate(c.result, inner);
  return { cost: range.cost + init.cost + rangeCost(count) + count * step + result.cost, size: result.size };
}
