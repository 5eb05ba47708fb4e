// The classifier's rules for the addresses the runner reserves for its own resources (the record of
// the inputs hash, terraform_data.captf_inputs_hash): what the runner itself plans there is skipped,
// anything else at them fails closed. Pure.
import type { ActionsReading } from './actions.ts';
import type { ActionKind } from '../vocabulary/action-kinds.ts';
import type { Change, ResourceChange } from './types.ts';
import { shown, type Unchecked } from './values.ts';

/** What the runner itself plans at its reserved address: a plain create, in-place update or no-op. */
export const RUNNER_KINDS: ReadonlySet<ActionKind> = new Set(['create', 'update', 'noop']);
/** In a destroy plan: the delete, since a destroy removes the record with everything else. */
export const RUNNER_DESTROY_KINDS: ReadonlySet<ActionKind> = new Set(['delete']);

/** The reserved address `address` is or is an instance of (`R[0]`, `R["a"]`), if any. */
function reservedOf(address: unknown, reserved: ReadonlySet<string>): string | undefined {
  if (typeof address !== 'string') return undefined;
  const bracket = address.indexOf('[');
  const resource = bracket < 0 ? address : address.slice(0, bracket);
  return reserved.has(resource) ? resource : undefined;
}

/** The reserved address a resource_changes or resource_drift entry is at, or moved from. */
export const reservedAddressOf = (
  entry: Unchecked<ResourceChange>,
  reserved: ReadonlySet<string>,
): string | undefined => reservedOf(entry.address, reserved) ?? reservedOf(entry.previous_address, reserved);

/**
 * Why an entry that touches the reserved address `reserved` is more than the runner's own create,
 * update or no-op of it, or undefined when it is the runner's (then it is skipped). Anything more
 * fails closed: a moved block into the record once hid the replace of another resource. Fields that
 * are present but odd count too.
 */
export function reservedEntryWhy(
  entry: Unchecked<ResourceChange>,
  change: Unchecked<Change>,
  reading: ActionsReading,
  reserved: string,
  runnerKinds: ReadonlySet<ActionKind>,
): string | undefined {
  const facts: string[] = [];
  if (reading.why !== undefined) facts.push(reading.why);
  else if (!runnerKinds.has(reading.kind)) facts.push(`actions ${JSON.stringify(change.actions)}`);
  const { address, previous_address: previous, deposed } = entry;
  if (previous !== undefined && previous !== address) facts.push(`moved from ${shown(previous)}`);
  else if (address !== reserved) facts.push(`the instance ${shown(address)}`);
  if (change.importing !== undefined && change.importing !== null) facts.push('imported');
  if (deposed !== undefined) facts.push(`deposed object ${shown(deposed)}`);
  return facts.length === 0
    ? undefined
    : `${reserved} is reserved for the runner's own resource, which the runner only creates, updates in place or keeps: ${facts.join(', ')}`;
}
