// Classifies `terraform show -json` output as it streams in: only the fields of the plan model
// (types.ts) are ever built (addresses, actions, reasons, header flags, variables' sensitive flags,
// the small fields of provider actions), one entry at a time, so memory stays flat however large
// the plan is. Top-level keys outside the allow-list are probed for content, never built. The same
// PlanClassifier as the reference classifyPlan runs the rules.
import type { Classification } from '../schemas/classification.ts';
import { RunnerError } from '../errors.ts';
import { assertPlanObject, type ClassifyOptions, PlanClassifier } from './classify.ts';
import { JsonSyntaxError } from '../util/json-syntax-error.ts';
import { type ByteSource, KEEP, readSelected, type Selector, type Shape } from '../json/select-json.ts';
import { isRecord } from './values.ts';
import type { PlanObserver } from './observer.ts';
import {
  type ActionInvocation,
  type Change,
  type Configuration,
  type ConfiguredResource,
  type DeferredActionInvocation,
  type DeferredResource,
  type DeferredResourceChange,
  type InvokeActionTrigger,
  type LifecycleActionTrigger,
  type OutputChange,
  type Plan,
  PLAN_HEADER_FIELDS,
  PLAN_TOP_LEVEL_KEYS,
  type PlanHeader,
  type ResourceChange,
  type RootModule,
  type VariableDeclaration,
} from './types.ts';

/** The selectors of every field of a model type: a field the model lacks, or one left out, is a type error. */
const modelFields = <T>(selectors: { [K in keyof T]-?: Selector }) => selectors;

/** Of a change's before, only the object's id is built (never its values): classify.ts links a forget and an import of one object by it. */
const CHANGE: Shape = {
  fields: modelFields<Change>({
    actions: KEEP,
    importing: KEEP,
    replace_paths: KEEP,
    before: { fields: { id: KEEP } },
  }),
};

/** A resource_changes or resource_drift entry. */
function resourceEntry(emit: (entry: unknown) => void, change: Shape = CHANGE): Selector {
  return {
    fields: modelFields<ResourceChange>({
      address: KEEP,
      module_address: KEEP,
      mode: KEEP,
      type: KEEP,
      name: KEEP,
      provider_name: KEEP,
      previous_address: KEEP,
      deposed: KEEP,
      action_reason: KEEP,
      change,
    }),
    emit,
  };
}

/** The classifier's options, its observer told also what only the streaming reader meets (changed values, module calls) and awaited for its pace. */
export type StreamOptions = ClassifyOptions & PlanObserver;

/** A change's selector that also builds before and after when its actions (read first: terraform writes them first) change a value. */
function withValues(shape: Shape): Shape {
  const fields = shape.fields as Record<string, Selector>;
  return {
    fields: (key, built) => {
      if (key !== 'before' && key !== 'after') return fields[key];
      return changesValue(built.actions) ? KEEP : fields[key];
    },
  };
}

/** Whether a change's actions update or replace a value (its before and after are then built whole). */
function changesValue(actions: unknown): boolean {
  if (!Array.isArray(actions)) return false;
  return actions.includes('update') || (actions.includes('delete') && actions.includes('create'));
}

/** Hands a change's before and after to `onChangedValues`, and the change without them on. */
function takeValues(
  change: Record<string, unknown> | undefined,
  onChangedValues: NonNullable<PlanObserver['onChangedValues']>,
): void {
  if (change && changesValue(change.actions) && ('before' in change || 'after' in change)) {
    onChangedValues(change.before, change.after);
    delete change.before;
    delete change.after;
  }
}

/** A resource_changes or resource_drift entry, its change's values handed to `onChangedValues` when given. */
function resourceEntryWithValues(
  emit: (entry: unknown) => void,
  onChangedValues: PlanObserver['onChangedValues'],
): Selector {
  if (!onChangedValues) return resourceEntry(emit);
  return resourceEntry((entry) => {
    const change = (entry as { change?: Record<string, unknown> }).change;
    const before = change?.before;
    takeValues(change, onChangedValues);
    // the object's id stays (what a forget and an import of one object are linked by), its values do not
    if (change && isRecord(before) && typeof before.id === 'string') change.before = { id: before.id };
    emit(entry);
  }, withValues(CHANGE));
}

/** The header's fields (PLAN_HEADER_FIELDS, the one list of them), built as they are. */
const HEADER = Object.fromEntries(PLAN_HEADER_FIELDS.map((field) => [field, KEEP])) as Record<
  keyof PlanHeader,
  Selector
>;

const OUTPUT_CHANGE: Shape = { fields: modelFields<OutputChange>({ actions: KEEP }) };

/** An action invocation: never config_values (they may hold secrets). */
const ACTION_INVOCATION: Shape = {
  fields: modelFields<ActionInvocation>({
    address: KEEP,
    type: KEEP,
    provider_name: KEEP,
    lifecycle_action_trigger: {
      fields: modelFields<LifecycleActionTrigger>({
        triggering_resource_address: KEEP,
        action_trigger_event: KEEP,
        on_failure: KEEP,
      }),
    },
    invoke_action_trigger: { fields: modelFields<InvokeActionTrigger>({ calling_resource_address: KEEP }) },
  }),
};

function planSelector(
  classifier: PlanClassifier,
  onChangedValues?: PlanObserver['onChangedValues'],
  onModuleCall?: PlanObserver['onModuleCall'],
): Selector {
  const rootModule = modelFields<RootModule>({
    variables: {
      members: {
        fields: modelFields<VariableDeclaration>({ sensitive: KEEP }),
        emit: (declaration, name) => classifier.addVariable(String(name), declaration),
      },
    },
    resources: {
      items: {
        fields: modelFields<ConfiguredResource>({ address: KEEP, mode: KEEP }),
        emit: (resource) => classifier.addConfiguredResource(resource),
      },
    },
    module_calls: {
      members: {
        fields: onModuleCall ? { expressions: KEEP, module: KEEP } : {},
        emit: (call, name) => {
          classifier.addModuleCall(String(name));
          onModuleCall?.(call);
        },
      },
    },
  });
  return {
    fields: modelFields<Plan>({
      ...HEADER,
      resource_changes: {
        items: resourceEntryWithValues((entry) => classifier.addResourceChange(entry), onChangedValues),
        emit: (section) => classifier.checkSection('resource_changes', section),
      },
      resource_drift: {
        items: resourceEntryWithValues((entry) => classifier.addResourceDrift(entry), onChangedValues),
        emit: (section) => classifier.checkSection('resource_drift', section),
      },
      deferred_changes: {
        items: {
          fields: modelFields<DeferredResourceChange>({
            reason: KEEP,
            resource_change: {
              fields: modelFields<DeferredResource>({
                address: KEEP,
                change: { fields: modelFields<DeferredResource['change']>({ actions: KEEP }) },
              }),
            },
          }),
          emit: (entry) => classifier.addDeferredChange(entry),
        },
        emit: (section) => classifier.checkSection('deferred_changes', section),
      },
      deferred_action_invocations: {
        items: {
          fields: modelFields<DeferredActionInvocation>({ reason: KEEP, action_invocation: ACTION_INVOCATION }),
          emit: (entry) => classifier.addDeferredActionInvocation(entry),
        },
        emit: (section) => classifier.checkSection('deferred_action_invocations', section),
      },
      output_changes: {
        members: {
          ...(onChangedValues ? withValues(OUTPUT_CHANGE) : OUTPUT_CHANGE),
          emit: (change, name) => {
            if (onChangedValues) takeValues(change as Record<string, unknown>, onChangedValues);
            classifier.addOutputChange(String(name), change);
          },
        },
        emit: (section) => classifier.checkSection('output_changes', section),
      },
      action_invocations: {
        items: { ...ACTION_INVOCATION, emit: (entry) => classifier.addActionInvocation(entry) },
        emit: (section) => classifier.checkSection('action_invocations', section),
      },
      configuration: { fields: modelFields<Configuration>({ root_module: { fields: rootModule } }) },
    }),
    // Keys the runner knows and does not read are skipped; any other is probed for content, never built.
    otherFields: (key) =>
      PLAN_TOP_LEVEL_KEYS.has(key) ? undefined : { probe: (hasContent) => classifier.addOtherKey(key, hasContent) },
    // The document's own value holds only the header fields by now: the lists were emitted.
    emit: (document) => {
      assertPlanObject(document);
      classifier.addHeader(document);
    },
  };
}

/** Classifies the plan document `source` yields (terraform show -json stdout). */
export async function classifyPlanStream(source: ByteSource, options: StreamOptions = {}): Promise<Classification> {
  const { onChangedValues, onModuleCall, pace, ...classifyOptions } = options;
  const classifier = new PlanClassifier(classifyOptions);
  let read: boolean;
  try {
    read = await readSelected(source, planSelector(classifier, onChangedValues, onModuleCall), pace);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw new RunnerError({
      kind: 'plan',
      reason: 'PlanUnreadable',
      message: `the plan JSON from terraform show -json is unreadable: ${error.message}`,
      detail: { offset: error.offset },
      cause: error,
    });
  }
  if (!read) {
    throw new RunnerError({
      kind: 'plan',
      reason: 'PlanUnreadable',
      message: 'terraform show -json printed no plan document (empty output)',
    });
  }
  return classifier.result();
}
