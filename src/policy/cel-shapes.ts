// What policies rely on of @bufbuild/cel beyond its public API (its AST, its function resolver), in one file to check on an upgrade.
import {
  celEnv,
  celFunc,
  celList,
  listType,
  CelScalar,
  parse,
  type CelEnv,
  type CelList,
  type CelResult,
  type CelValue,
} from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

/** The parsed expression: the library's AST, which it does not export by name. */
export type CelExpr = ReturnType<typeof parse>['expr'];

/** One function of the resolver, every overload: undefined when no overload takes the arguments. */
export type FuncGroup = { call(id: number, target: CelValue | undefined, args: CelValue[]): CelResult | undefined };
/** The environment's function resolver, which the library's planner reads functions from. */
export type FuncResolver = { find(name: string): FuncGroup | undefined } & Iterable<unknown>;

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

/** The arrays behind the lists `+` built: read again without the library's iterator. */
const BUILT = new WeakMap<CelList, CelValue[]>();
const elementsOf = (list: CelList): CelValue[] => BUILT.get(list) ?? [...list];

/** The standard library and the strings extension, as Kubernetes offers them. */
export const ENV = celEnv({ funcs: [...strings, joinLists] });

/** The environment's function resolver. */
export const functionsOf = (env: CelEnv): FuncResolver => env.funcs as unknown as FuncResolver;

/** The same environment with another function resolver. */
export const withFunctions = (env: CelEnv, funcs: FuncResolver): CelEnv =>
  Object.create(env, { funcs: { value: funcs } }) as CelEnv;

/** A call of `fn` with `args`, in place of the node `at` (its id kept). */
export function callNode(at: CelExpr, fn: string, args: CelExpr[]): CelExpr {
  return {
    ...at,
    exprKind: { case: 'callExpr', value: { $typeName: 'cel.expr.Expr.Call', function: fn, args } },
  } as CelExpr;
}

/** An int constant, in place of the node `at` (its id kept). */
export function intConstant(at: CelExpr, value: number): CelExpr {
  return {
    ...at,
    exprKind: {
      case: 'constExpr',
      value: { $typeName: 'cel.expr.Constant', constantKind: { case: 'int64Value', value: BigInt(value) } },
    },
  } as CelExpr;
}
