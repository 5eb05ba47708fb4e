// A rule's expression compiled (parsed, its names checked, metered) and the views as CEL values: what compile and evaluate use.
import { celError, celList, celMap, celType, isCelError, parse, type CelMap, type CelValue } from '@bufbuild/cel';
import type { PolicyActionView, PolicyChangeView, PolicyPlanView } from '../plan/policy-views.ts';
import type { RuleScope } from './schema.ts';
import { celSyntaxProblem } from './cel-syntax.ts';
import { checkNames, COUNT_FIELDS } from './cel-names.ts';
import { meteredProgram, type CelBindings, type CelProgram } from './cel-meter.ts';
import type { CelExpr } from './cel-shapes.ts';

export type { CelBindings, CelProgram };

/**
 * Parses `source` and checks the names it reads against the scope's view. Returns the program,
 * or every problem found (a parse error is the only one then). @bufbuild/cel has no public type
 * checker: compile.ts also evaluates the program over a synthetic view of every kind.
 */
export function compileExpression(
  source: string,
  scope: RuleScope,
): { program: CelProgram; expr: CelExpr } | { problems: string[] } {
  let parsed;
  try {
    parsed = parse(source);
  } catch (error) {
    return { problems: [`does not parse: ${celSyntaxProblem(source, (error as Error).message)}`] };
  }
  const problems: string[] = [];
  checkNames(parsed.expr, scope, new Set(), problems);
  if (problems.length || !parsed.expr) return { problems: [...new Set(problems)] };
  // Parsed again, then metered: estimate.ts reads the expression as written.
  return { expr: parsed.expr, program: meteredProgram(parse(source).expr!) };
}

const text = (value: string | null | undefined) => value ?? '';

/** What a change goes by: where it is and, when it moved (`known`: where it was is known), where it was, each once. */
const goesBy = (current: string, previous: string, known: boolean) =>
  celList(known && previous !== current ? [current, previous] : [current]);

/**
 * A view's fields as a CEL map, every value already a CEL value (a string, a bool, an int, a list of them). The library
 * converts a variable given as a plain object into a new map at each read of it (a Map of every field, each rule, each
 * mention), so the bindings are made of its own values once a change and shared by every rule: a CEL value is never
 * changed in place (an append of a comprehension copies first: cel-meter.ts), so no rule sees another's work.
 */
function fields(entries: Record<string, CelValue>): CelMap {
  const map = new Map<string, CelValue>();
  for (const key in entries) map.set(key, entries[key]!);
  return celMap(map);
}

/** A change as CEL sees it: exactly the documented fields, optional ones as "", [] or false. */
export function changeBinding(view: PolicyChangeView): CelBindings {
  const moved = view.moved === true && text(view.previousAddress) !== '';
  // The parts of the previous address, when terraform's previous_address could be read (the root module is "").
  const parts = moved && text(view.previousName) !== '';
  return {
    change: fields({
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
      actions: celList([...view.actions]),
      reason: text(view.reason),
      replacePaths: celList((view.replacePaths ?? []).map((path) => celList(path.map(String)))),
      deposed: text(view.deposed),
      previousAddress: text(view.previousAddress),
      moved: view.moved === true,
      imported: view.imported === true,
    }),
  };
}

export function actionBinding(view: PolicyActionView): CelBindings {
  return {
    action: fields({
      address: view.address,
      type: text(view.type),
      provider: text(view.provider),
      trigger: view.trigger,
      triggeringResource: text(view.triggeringResource),
      onFailure: text(view.onFailure),
      deferred: view.deferred === true,
    }),
  };
}

/** Counts are CEL ints (a JS number would be a CEL double, and `plan.counts.delete + 1` would fail). */
export function planBinding(view: PolicyPlanView): CelBindings {
  const counts: Record<string, bigint> = {};
  for (const field of COUNT_FIELDS) counts[field] = BigInt(view.counts[field]);
  return { plan: fields({ counts: fields(counts), tool: view.tool, version: view.version }) };
}

export { isCelError as isError };

/** A check's evaluation that was stopped, as the error it reports. */
export const celStopped = (why: string) => celError(why);

/** A value's CEL type, as problems and findings name it: `a string`, `an int`, `a list`. */
export function celTypeName(value: CelValue): string {
  const name = celType(value).toString();
  return `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name}`;
}
