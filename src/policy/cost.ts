// What a rule may spend, in cost units, the way Kubernetes bounds CEL in admission policies: every
// call a rule makes is charged before it runs (from the sizes of its operands: a traversal costs
// 0.1 unit a character or element, a search the product of its operands' traversals) and for what
// it builds after (0.1 unit a character, 1 unit a list element); every expression node once an
// evaluation, every comprehension step its body's nodes. The same table serves the estimate made
// when a policy is compiled (estimate.ts, with the largest sizes a view can hold) and the meter that
// counts an evaluation, so a verdict depends on the plan and the rule, never on the node's speed.
// Units are tied to time and memory by the benchmark (bench/policy-cost.mjs, BENCHMARKS.md).
import { isCelList, isCelMap, type CelValue } from '@bufbuild/cel';
import { MAX_REGEX_INSTRUCTIONS } from './regex.ts';

/** One rule's one evaluation (a match or a message) over one change: Kubernetes' per-call limit. Also the most a rule's estimate may reach. */
export const RULE_COST_LIMIT = 1_000_000;
/**
 * One plan's whole evaluation (every rule over every change and action, the plan rules): a plan of
 * 10,000 changes under 100 rules like the contract's examples spends ≈ 25 million; at the slowest
 * unit the benchmark measures (≈ 0.4 µs) the whole budget is ≈ 20 s, under the 30 s time limit.
 */
export const PLAN_COST_LIMIT = 50_000_000;
/** The longest string a rule may build (characters): a message is cut to 1,000, an address is rarely 500. */
export const MAX_BUILT_STRING_CHARS = 100_000;
/** The longest list a rule may build (elements): `split("")` of a 10,000-character address. */
export const MAX_BUILT_LIST_ELEMENTS = 10_000;

/** A traversal's cost per character or element (Kubernetes' string traversal factor). */
const TRAVERSAL = 0.1;
/**
 * A regular expression's cost per instruction of its compiled program and character of its input
 * (with REGEX_CALL_CHARS more for the call itself): RE2's NFA steps through the program's
 * instructions at each character, and a call sets it up over all of them. Measured
 * (bench/policy-regex.mjs): at most ≈ 0.75 µs an instruction and character, so 2 units, each
 * ≈ 0.4 µs at worst. Kubernetes charges 0.25 a character of the pattern, which `.{1000}` (six
 * characters, 1,002 instructions) made 1,000 times too cheap.
 */
const REGEX = 1;
const REGEX_CALL_CHARS = 100;

/**
 * An operand's size: `len` its characters (a string, bytes) or elements (a list, a map); `weight`
 * what traversing it all visits, a character 1 and a list element or map entry 10 (an element is
 * read through the library's iterator: ten times a character's work), nested values and repeated
 * references counted each time.
 */
export interface Dim {
  kind: 'string' | 'list' | 'map' | 'scalar';
  len: number;
  weight: number;
  /** A comprehension's accumulator, appended to in place (cel-meter.ts): what is appended is built, not the whole. */
  appendable?: boolean;
  /** A pattern's compiled instructions (regex.ts), or their bound; unknown, the most a pattern may compile to. */
  program?: number;
}

const SCALAR: Dim = { kind: 'scalar', len: 1, weight: 1 };

const traverse = (n: number) => Math.ceil(n * TRAVERSAL);

/**
 * What a call costs before it runs (`cost`, building its result included), and what it builds: a
 * string of at most `resultLen` characters or a list of at most `resultLen` elements. The result
 * is charged from this bound before the call, so no call allocates more than its budget allows.
 */
export interface CallCharge {
  cost: number;
  builds?: { kind: 'string' | 'list'; len: number };
}

/**
 * What building a value costs: 0.1 unit a character (Kubernetes' traversal factor), 1 unit a list
 * element, new (a string `split` makes) or copied from another list (`map` and `filter` copy their
 * list at each step). A unit so builds at most ≈ 40 bytes: one rule's budget, at most ≈ 40 MB.
 */
const BUILD: Readonly<Record<'string' | 'list' | 'copy', number>> = { string: TRAVERSAL, list: 1, copy: 1 };

function charge(
  traversal: number,
  builds?: CallCharge['builds'],
  as: keyof typeof BUILD = builds?.kind ?? 'string',
): CallCharge {
  return builds ? { cost: 1 + traversal + Math.ceil(builds.len * BUILD[as]), builds } : { cost: 1 + traversal };
}

/**
 * A call's charge from its operands (a method's target first, then its arguments), by function name.
 * Functions not named here cost 1 and a traversal of their operands (conversions, arithmetic, time).
 */
export function callCharge(fn: string, operands: readonly Dim[]): CallCharge {
  const [a = SCALAR, b = SCALAR, c] = operands;
  switch (fn) {
    case '_==_':
    case '_!=_':
    case '_<_':
    case '_<=_':
    case '_>_':
    case '_>=_':
      return charge(traverse(Math.min(a.weight, b.weight)));
    case '_+_':
      // a new string or list holding both (a list is copied, shallow: a chain of appends is never a chain of views)
      if (a.kind === 'string') return charge(traverse(a.len + b.len), { kind: 'string', len: a.len + b.len });
      if (a.kind !== 'list') return charge(0);
      return a.appendable
        ? { cost: 1 + b.len, builds: { kind: 'list', len: a.len + b.len } }
        : charge(0, { kind: 'list', len: a.len + b.len }, 'copy');
    case '@in':
      // each element compared
      return charge(b.kind === 'list' ? b.len + traverse(Math.min(b.weight, a.weight * b.len)) : traverse(a.weight));
    case 'contains':
    case 'indexOf':
    case 'lastIndexOf':
      // a search: at worst each position of the string against the whole substring
      return charge(traverse(a.len) * Math.max(1, traverse(b.len)));
    case 'matches': {
      // RE2's NFA: each character of the input steps through the compiled program (compiled once: regex.ts)
      const program = b.program ?? MAX_REGEX_INSTRUCTIONS;
      return charge((1 + a.len + REGEX_CALL_CHARS) * program * REGEX);
    }
    case 'startsWith':
    case 'endsWith':
      return charge(traverse(b.len));
    case 'size':
      return charge(0);
    case 'split':
      // at most one element for each character, and one more
      return charge(traverse(a.len), { kind: 'list', len: a.len + 1 });
    case 'join':
      // the elements' characters, and a separator between each two
      return charge(traverse(a.weight), { kind: 'string', len: a.weight + a.len * (operands.length > 1 ? b.len : 0) });
    case 'replace': {
      // an empty pattern matches before each character and at the end
      const replacement = c?.len ?? 0;
      const len =
        b.len === 0
          ? a.len + (a.len + 1) * replacement
          : a.len + Math.floor(a.len / b.len) * Math.max(0, replacement - b.len);
      return charge(traverse(a.len), { kind: 'string', len });
    }
    case 'substring':
    case 'trim':
    case 'lowerAscii':
    case 'upperAscii':
    case 'charAt':
      return charge(traverse(a.len), { kind: 'string', len: a.len });
    case 'strings.quote':
      // an escape is at most 6 characters (\u0000)
      return charge(traverse(a.len), { kind: 'string', len: 6 * a.len + 2 });
    case 'format':
      // a clause (2 characters at least) prints at most ≈ 130 of a number; a list or map its elements with ", " between
      return charge(traverse(a.len + b.weight), { kind: 'string', len: 65 * a.len + 3 * b.weight });
    case 'string':
      return charge(traverse(a.weight), { kind: 'string', len: Math.max(32, 3 * a.len) });
    default: {
      let weight = 0;
      for (const operand of operands) weight += operand.weight;
      return charge(traverse(weight));
    }
  }
}

/** A comprehension's range, materialised before its first step: a traversal. */
export const rangeCost = (len: number) => 1 + traverse(len);

/** What traversing one list element or map entry weighs, beside its own value. */
export const ELEMENT_WEIGHT = 10;

/**
 * A runtime value's dimensions; the weight is measured only when a charge reads it (comparing,
 * joining, printing), and never past `cap`, so measuring costs no more than the budget it is
 * measured against. It counts each reference (a list holding one list 100 times weighs 100 of it):
 * that is what comparing or printing it traverses.
 */
export function dimOf(value: CelValue, cap: number): Dim {
  if (typeof value === 'string' || value instanceof Uint8Array)
    return { kind: 'string', len: value.length, weight: value.length };
  if (isCelList(value)) return new MeasuredDim('list', value, cap);
  if (isCelMap(value)) return new MeasuredDim('map', value, cap);
  return SCALAR;
}

/** A list's or a map's dimensions, its weight measured at the first read (a class: one shape, no closure a call). */
class MeasuredDim implements Dim {
  readonly len: number;
  #weight: number | undefined;

  constructor(
    readonly kind: 'list' | 'map',
    readonly value: CelValue & { size: number },
    readonly cap: number,
  ) {
    this.len = value.size;
  }

  get weight(): number {
    return (this.#weight ??= weigh(this.value, this.cap));
  }
}

function weigh(value: CelValue, cap: number): number {
  if (typeof value === 'string' || value instanceof Uint8Array) return value.length;
  if (!isCelList(value) && !isCelMap(value)) return 1;
  let weight = 1;
  if (isCelList(value)) {
    // By index: the library's iterator is a generator, several times slower a step.
    for (let i = 0; i < value.size; i++) {
      weight += ELEMENT_WEIGHT + weigh(value.get(i)!, cap - weight);
      if (weight > cap) break;
    }
    return weight;
  }
  for (const part of [...value.keys(), ...value.values()]) {
    weight += ELEMENT_WEIGHT + weigh(part as CelValue, cap - weight);
    if (weight > cap) break;
  }
  return weight;
}

/** Why an evaluation stopped before its end: its own budget, the plan's, the last-resort wall-time limit, or a value too large to build. */
export type Exhaustion =
  | { kind: 'rule' | 'plan'; limit: number }
  | { kind: 'time'; limitMs: number }
  | { kind: 'size'; what: string };

/** Thrown through the CEL evaluator to end an evaluation at once; the meter keeps why (CEL's `||` may swallow the throw, never the meter's word). */
export class EvaluationStopped extends Error {}

/**
 * Counts one evaluation's units against its limit (the rule's budget, or what is left of the
 * plan's when that is less) and, as the last resort, the wall-time limit. Once exhausted every
 * further charge throws again: nothing after the first overrun is evaluated.
 */
export class CostMeter {
  spent = 0;
  exhausted: Exhaustion | undefined;
  #sinceClock = 0;

  constructor(
    readonly limit: number,
    readonly limitKind: 'rule' | 'plan',
    /** The plan's wall-time limit: `at` on the `now` clock, after which the evaluation stops. */
    readonly clock?: { at: number; limitMs: number; now: () => number },
  ) {}

  charge(units: number): void {
    if (this.exhausted) throw new EvaluationStopped();
    this.spent += units;
    if (this.spent > this.limit) this.stop({ kind: this.limitKind, limit: this.limit });
    // The clock is read every 10,000 units: a unit is well under a microsecond.
    this.#sinceClock += units;
    if (this.#sinceClock >= 10_000 && this.clock) {
      this.#sinceClock = 0;
      if (this.clock.now() > this.clock.at) this.stop({ kind: 'time', limitMs: this.clock.limitMs });
    }
  }

  /** The units left before the limit (what a measurement may spend). */
  get left(): number {
    return Math.max(0, this.limit - this.spent);
  }

  stop(why: Exhaustion): never {
    this.exhausted ??= why;
    throw new EvaluationStopped();
  }
}
