// The provider actions a plan invokes (action_invocations, deferred_action_invocations), as the
// classification lists them: when each runs, on which resource, what a failure does; and why the
// runner cannot tell, if so (the classifier fails closed on those). Pure.
import type { PlannedAction } from '../schemas/classification.ts';
import type { ActionInvocation, InvokeActionTrigger, LifecycleActionTrigger } from './types.ts';
import { fieldsOf, isRecord, jsonTypeName, optionalString, shown } from './values.ts';

/** terraform's lifecycle events that run an action (configs.ActionTriggerEvent; BeforeDestroy and AfterDestroy from 1.16). */
export const ACTION_TRIGGER_EVENTS = [
  'BeforeCreate',
  'AfterCreate',
  'BeforeUpdate',
  'AfterUpdate',
  'BeforeDestroy',
  'AfterDestroy',
] as const;
const TRIGGER_EVENTS: ReadonlySet<string> = new Set(ACTION_TRIGGER_EVENTS);
/** configs.ActionOnFailure as terraform 1.16 writes it. */
const ACTION_ON_FAILURE: Readonly<Record<string, string>> = {
  ActionOnFailureHalt: 'halt',
  ActionOnFailureTaint: 'taint',
  ActionOnFailureContinue: 'continue',
};

/**
 * One action invocation, the fields the contract lists (never config_values: they may hold secrets),
 * and why the runner cannot tell when it runs or what a failure does, if so.
 */
export function readActionInvocation(
  entry: unknown,
  position: string,
  deferredReason: string | null,
): { action: PlannedAction; problems: string[] } {
  const invocation = fieldsOf<ActionInvocation>(entry);
  const problems: string[] = isRecord(entry) ? [] : [`it is ${jsonTypeName(entry)}, not an object`];
  const { lifecycle_action_trigger: lifecycleValue, invoke_action_trigger: invoke } = invocation;
  let trigger = 'unknown';
  let triggeringResource: string | null = null;
  let onFailure: string | null = null;
  if (isRecord(lifecycleValue) && !isRecord(invoke)) {
    const lifecycle = fieldsOf<LifecycleActionTrigger>(lifecycleValue);
    const event = lifecycle.action_trigger_event;
    if (typeof event === 'string' && TRIGGER_EVENTS.has(event)) trigger = event;
    else problems.push(`unknown action_trigger_event ${shown(event ?? null)}`);
    triggeringResource = optionalString(lifecycle.triggering_resource_address) ?? null;
    if (lifecycle.on_failure !== undefined) {
      onFailure =
        typeof lifecycle.on_failure === 'string' ? (ACTION_ON_FAILURE[lifecycle.on_failure] ?? 'unknown') : 'unknown';
      if (onFailure === 'unknown') problems.push(`unknown on_failure ${shown(lifecycle.on_failure)}`);
    }
  } else if (isRecord(invoke) && !isRecord(lifecycleValue)) {
    trigger = 'invoke';
    triggeringResource = optionalString(fieldsOf<InvokeActionTrigger>(invoke).calling_resource_address) ?? null;
  } else if (isRecord(entry))
    problems.push('it has neither a lifecycle_action_trigger nor an invoke_action_trigger (or both)');
  const action: PlannedAction = {
    address: optionalString(invocation.address) ?? position,
    type: optionalString(invocation.type) ?? null,
    provider: optionalString(invocation.provider_name) ?? null,
    trigger,
    triggeringResource,
    onFailure,
    deferred: deferredReason !== null,
    deferredReason,
  };
  return { action, problems };
}
