// What reading a plan tells as it goes: the one interface through which the classifier (classify.ts)
// and the streaming reader (stream.ts) hand what they meet to the run (the log lines, the masker,
// the policy's judgement, the approval's coverage), and observers(), the one way to combine them.
// Pure: no I/O.
import type { DestructiveChange, PlannedAction } from '../schemas/classification.ts';
import type { PolicyChangeView } from './policy-views.ts';

/**
 * Every hook is optional and called unbound (give arrow functions), synchronously as the entry is
 * read, but `pace`. A hook left out costs nothing: the classifier builds no view for an absent
 * `onChange`, the streaming reader no values for an absent `onChangedValues`.
 */
export interface PlanObserver {
  /**
   * Told every managed resource (`type.name`) and module call (`module.name`) the root module's
   * configuration declares, so the runner can check its own reading of the module against terraform's.
   */
  onRootDeclaration?: (address: string) => void;
  /** Told every destructive entry, also those beyond `limit` (the logs name them all). */
  onDestructive?: (entry: DestructiveChange) => void;
  /** Told every provider action, also those beyond `limit`. */
  onAction?: (action: PlannedAction) => void;
  /**
   * Told every resource entry `counts` counts, as a policy rule sees it (src/plan/policy-views.ts): the
   * destructive ones among them are exactly `destructiveTotal`. Never the runner's own entries.
   */
  onChange?: (change: PolicyChangeView) => void;
  /**
   * Streaming reader only. The values before and after of each change that updates or replaces a
   * value: resource changes, resource drift (what changed outside terraform) and output changes, whose
   * before is the prior state's output (the masker learns a rotated secret's old value from them).
   * Only these are built, one entry at a time; they are never kept.
   */
  onChangedValues?: (before: unknown, after: unknown) => void;
  /**
   * Streaming reader only. Each module call of the root module, with its expressions and its module's
   * configuration (configuration.root_module.module_calls): what it passes to a sensitive variable of
   * a module (module-inputs.ts). Never kept.
   */
  onModuleCall?: (call: unknown) => void;
  /**
   * Streaming reader only. Awaited after each chunk of the document is read (the policy's evaluation
   * of what it handed over): reading waits for it.
   */
  pace?: () => Promise<void>;
}

/** The hooks the classifier itself calls (the reference classifyPlan and the streaming reader alike). */
export type ClassifierObserver = Pick<PlanObserver, 'onRootDeclaration' | 'onDestructive' | 'onAction' | 'onChange'>;

/**
 * One observer telling each of `list` (an absent one skipped) every hook it has, in the order given.
 * A hook none has stays absent, one that only one has is that one's own function: the classifier's
 * path per entry costs what that observer alone costs.
 */
export function observers(...list: (PlanObserver | undefined)[]): PlanObserver {
  const given = list.filter((observer) => observer !== undefined);
  const combined: PlanObserver = {};
  const onRootDeclaration = every(given.map((o) => o.onRootDeclaration));
  const onDestructive = every(given.map((o) => o.onDestructive));
  const onAction = every(given.map((o) => o.onAction));
  const onChange = every(given.map((o) => o.onChange));
  const onChangedValues = every(given.map((o) => o.onChangedValues));
  const onModuleCall = every(given.map((o) => o.onModuleCall));
  const paces = given.map((o) => o.pace).filter((pace) => pace !== undefined);
  if (onRootDeclaration) combined.onRootDeclaration = onRootDeclaration;
  if (onDestructive) combined.onDestructive = onDestructive;
  if (onAction) combined.onAction = onAction;
  if (onChange) combined.onChange = onChange;
  if (onChangedValues) combined.onChangedValues = onChangedValues;
  if (onModuleCall) combined.onModuleCall = onModuleCall;
  if (paces.length === 1) combined.pace = paces[0];
  else if (paces.length > 1)
    combined.pace = async () => {
      for (const pace of paces) await pace();
    };
  return combined;
}

/** One function calling each of `hooks` that is there, in order; undefined when none is, the one itself when one is. */
function every<A extends unknown[]>(hooks: (((...args: A) => void) | undefined)[]): ((...args: A) => void) | undefined {
  const present = hooks.filter((hook) => hook !== undefined);
  if (present.length <= 1) return present[0];
  return (...args: A) => {
    for (const hook of present) hook(...args);
  };
}
