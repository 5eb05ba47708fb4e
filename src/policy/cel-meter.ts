// The cost metering, apart: the library has no cost hooks, so each comprehension is rewritten and every function wrapped.
import {
  celError,
  celList,
  isCelList,
  isCelMap,
  plan,
  type CelInput,
  type CelList,
  type CelResult,
  type CelValue,
} from '@bufbuild/cel';
import {
  callCharge,
  CostMeter,
  dimOf,
  EvaluationStopped,
  type CallCharge,
  type Dim,
  MAX_BUILT_LIST_ELEMENTS,
  MAX_BUILT_STRING_CHARS,
  rangeCost,
} from './cost.ts';
import {
  callNode,
  ENV,
  functionsOf,
  intConstant,
  withFunctions,
  type CelExpr,
  type FuncGroup,
  type FuncResolver,
} from './cel-shapes.ts';
import { compilePattern } from './regex.ts';

/** The CEL variables one evaluation sees: `change`, `action` or `plan`. */
export type CelBindings = Record<string, CelInput>;

/** A parsed and planned expression: evaluating it never throws; every unit it spends is charged to `meter`, which stops it at its limit. */
export type CelProgram = (bindings: CelBindings, meter: CostMeter) => CelResult;

/**
 * `expr` (a parse of its own: it is rewritten in place) planned in the metered environment: each
 * evaluation charges the expression's nodes before it starts, then every step, range and call.
 */
export function meteredProgram(expr: CelExpr): CelProgram {
  const nodes = instrument(expr);
  const planned = plan(METERED_ENV, expr);
  return (bindings, meter) => {
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
  };
}

/** The meter of the evaluation running now (evaluation is synchronous: one at a time). */
let current: CostMeter | undefined;

/** The arrays behind the accumulators `@captf.append` grows in place. */
const OWNED = new WeakMap<CelList, CelValue[]>();

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
function instrument(expr: CelExpr): number {
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
        c.loopCondition = callNode(c.loopCondition, STEP, [c.loopCondition, intConstant(c.loopCondition, 1 + body)]);
      if (c.iterRange) c.iterRange = callNode(c.iterRange, RANGE, [c.iterRange]);
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
function appendInPlace(step: CelExpr, accumulator: string): void {
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
  step.exprKind = callNode(step, APPEND, [accu, appended.exprKind.value.elements[0]!]).exprKind;
}

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
      // A call of scalars alone (bools, numbers) is charged the same at every call: its charge is kept, by arity.
      const scalarCharges: CallCharge[] = [];
      return group && { call: (id, target, args) => meteredCall(name, group, scalarCharges, id, target, args) };
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
  scalarCharges: CallCharge[],
  id: number,
  target: CelValue | undefined,
  args: CelValue[],
): CelResult | undefined {
  const meter = current;
  if (!meter) return group.call(id, target, args);
  const count = args.length + (target === undefined ? 0 : 1);
  let charge = scalars(target, args) ? scalarCharges[count] : undefined;
  if (!charge) {
    // Measuring stops where the traversal alone would exceed what is left.
    const cap = meter.left * 10 + 10;
    const operands: Dim[] = target === undefined ? [] : [dimOf(target, cap)];
    for (const arg of args) operands.push(dimOf(arg, cap));
    charge = callCharge(name, operands);
    if (scalars(target, args)) scalarCharges[count] = charge;
  }
  meter.charge(charge.cost);
  // Refused before the call when it could build more than the bounds allow, checked again on what it built.
  if (charge.builds) checkBuilt(meter, name, charge.builds, 'could build');
  const result = group.call(id, target, args);
  if (typeof result === 'string' || result instanceof Uint8Array)
    checkBuilt(meter, name, { kind: 'string', len: result.length }, 'built');
  else if (result !== undefined && isCelList(result))
    checkBuilt(meter, name, { kind: 'list', len: result.size }, 'built');
  return result;
}

/** Operands whose dimensions are a scalar's, whatever their value (dimOf): a bool, a double, an int. */
function scalars(target: CelValue | undefined, args: CelValue[]): boolean {
  if (target !== undefined && !isScalar(target)) return false;
  for (const arg of args) if (!isScalar(arg)) return false;
  return true;
}

const isScalar = (value: CelValue) =>
  typeof value === 'boolean' || typeof value === 'number' || typeof value === 'bigint';

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
const METERED_ENV = withFunctions(ENV, meteredFunctions(functionsOf(ENV)));
