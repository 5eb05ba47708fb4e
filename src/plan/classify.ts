// Classifies a terraform plan: which entries destroy something, what changes at all, and what makes
// the runner fail closed. Pure: no I/O. PlanClassifier takes one piece of the document at a time so
// that the reference classifyPlan (a parsed document) and the streaming reader (src/plan/stream.ts)
// run exactly the same rules. contract/sections/classification.md states the rules for other languages.
import type {
  ActionCounts,
  Classification,
  DeferredChange,
  DestructiveChange,
  DriftEntry,
  PlannedAction,
  ResourceEntry,
} from '../schemas/classification.ts';
import { RunnerError } from '../errors.ts';
import { needsApproval } from './gate.ts';
import type { ActionKind } from '../vocabulary/action-kinds.ts';
import {
  changesResource,
  countedAs,
  isDestructive,
  kindName,
  listedActions,
  noCounts,
  readActions,
} from './actions.ts';
import { reservedAddressOf, reservedEntryWhy, RUNNER_DESTROY_KINDS, RUNNER_KINDS } from './reserved.ts';
import {
  type Change,
  type Configuration,
  type ConfiguredResource,
  type DeferredActionInvocation,
  type DeferredResource,
  type DeferredResourceChange,
  type OutputChange,
  type Plan,
  PLAN_HEADER_FIELDS,
  PLAN_SECTIONS,
  PLAN_TOP_LEVEL_KEYS,
  type PlanHeader,
  type PlanSection,
  type ResourceChange,
  type RootModule,
  type VariableDeclaration,
} from './types.ts';
import { fieldsOf, isRecord, jsonTypeName, optionalString, type Unchecked } from './values.ts';
import type { PolicyChangeView } from './policy-views.ts';
import { addressParts } from './address.ts';
import { readActionInvocation } from './action-invocations.ts';
import type { ClassifierObserver } from './observer.ts';

/** How a plan is classified, and the observer told what the classifier meets (observer.ts). */
export interface ClassifyOptions extends ClassifierObserver {
  /**
   * Addresses the runner reserves for its own resources (terraform_data.captf_inputs_hash): what the
   * runner itself plans there is skipped everywhere (see reservedEntryWhy); anything else at them,
   * at an instance of them or moved out of them is destructive, with a `why` naming the address.
   */
  ignoreAddresses?: ReadonlySet<string>;
  /** A `plan -destroy`: there the runner's own action at its reserved addresses is the delete. */
  destroyPlan?: boolean;
  /** The most `destructive` and `drift` entries to list; their totals count all. Default 100. */
  limit?: number;
}

export const DEFAULT_LIST_LIMIT = 100;

/** Format majors this classifier understands. terraform-json rejects unknown majors the same way. */
const KNOWN_FORMAT_MAJORS = new Set([0, 1]);

const planUnreadable = (message: string) => new RunnerError({ kind: 'plan', reason: 'PlanUnreadable', message });

/** Fails unless the document is a JSON object; both the reference and the streaming reader use it. */
export function assertPlanObject(document: unknown): asserts document is Record<string, unknown> {
  if (!isRecord(document)) {
    throw planUnreadable(
      `the plan document is ${jsonTypeName(document)}, expected a JSON object (terraform show -json output)`,
    );
  }
}

/**
 * The reference classification of a parsed plan document. It walks the document in key order, as
 * the streaming reader meets it, so that both give identical results (including failClosed order).
 */
export function classifyPlan(document: unknown, options: ClassifyOptions = {}): Classification {
  assertPlanObject(document);
  const classifier = new PlanClassifier(options);
  classifier.addHeader(document);
  for (const [key, value] of Object.entries(document)) {
    switch (key) {
      case 'resource_changes':
      case 'resource_drift':
        if (Array.isArray(value)) {
          for (const entry of value) {
            if (key === 'resource_changes') classifier.addResourceChange(entry);
            else classifier.addResourceDrift(entry);
          }
        }
        classifier.checkSection(key, value);
        break;
      case 'output_changes':
        if (isRecord(value))
          for (const [name, change] of Object.entries(value)) classifier.addOutputChange(name, change);
        classifier.checkSection(key, value);
        break;
      case 'action_invocations':
      case 'deferred_action_invocations':
      case 'deferred_changes':
        if (Array.isArray(value)) {
          for (const entry of value) {
            if (key === 'action_invocations') classifier.addActionInvocation(entry);
            else if (key === 'deferred_action_invocations') classifier.addDeferredActionInvocation(entry);
            else classifier.addDeferredChange(entry);
          }
        }
        classifier.checkSection(key, value);
        break;
      case 'configuration': {
        const {
          variables,
          resources,
          module_calls: moduleCalls,
        } = fieldsOf<RootModule>(fieldsOf<Configuration>(value).root_module);
        if (isRecord(variables))
          for (const [name, declaration] of Object.entries(variables)) classifier.addVariable(name, declaration);
        if (Array.isArray(resources)) for (const resource of resources) classifier.addConfiguredResource(resource);
        if (isRecord(moduleCalls)) for (const name of Object.keys(moduleCalls)) classifier.addModuleCall(name);
        break;
      }
      default:
        classifier.addOtherKey(key, holdsContent(value));
    }
  }
  return classifier.result();
}

/** The rules, fed one piece of the document at a time (classifyPlan above, or the streaming reader); result() says what they found. */
export class PlanClassifier {
  readonly #ignore: ReadonlySet<string>;
  readonly #runnerKinds: ReadonlySet<ActionKind>;
  #header: Unchecked<PlanHeader> = {};
  #resourceEntries = 0;
  #driftEntries = 0;
  #hasResourceChanges = false;
  #hasOutputChanges = false;
  readonly #counts: ActionCounts = noCounts();
  readonly #outputCounts = { create: 0, update: 0, delete: 0 };
  // The listed entries: every one counted, the first `limit` kept.
  readonly #destructive: BoundedList<DestructiveChange>;
  readonly #drift: BoundedList<DriftEntry>;
  readonly #changes: BoundedList<ResourceEntry>;
  readonly #actions: BoundedList<PlannedAction>;
  readonly #deferred: BoundedList<DeferredChange>;
  #record: Classification['record'];
  readonly #failClosed: string[] = [];
  readonly #sensitiveVariables: string[] = [];
  #actionEntries = 0;
  #deferredActionEntries = 0;

  readonly #onRootDeclaration: ((address: string) => void) | undefined;
  readonly #onDestructive: ((entry: DestructiveChange) => void) | undefined;
  readonly #onAction: ((action: PlannedAction) => void) | undefined;
  readonly #onChange: ((change: PolicyChangeView) => void) | undefined;
  /**
   * A forget and an import of the same object are a move in disguise (a `removed` block that keeps
   * the object and an `import` block that takes it in at another address): the entries that import
   * are held until resource_changes is read, then recorded as moved from the address that forgets
   * the object (same type, provider and id). `#forgotten`: `type provider id` → that address.
   */
  readonly #imports: (() => void)[] = [];
  readonly #forgotten = new Map<string, string>();

  constructor(options: ClassifyOptions = {}) {
    this.#ignore = options.ignoreAddresses ?? new Set();
    this.#runnerKinds = options.destroyPlan ? RUNNER_DESTROY_KINDS : RUNNER_KINDS;
    const limit = options.limit ?? DEFAULT_LIST_LIMIT;
    this.#destructive = new BoundedList(limit);
    this.#drift = new BoundedList(limit);
    this.#changes = new BoundedList(limit);
    this.#actions = new BoundedList(limit);
    this.#deferred = new BoundedList(limit);
    this.#onRootDeclaration = options.onRootDeclaration;
    this.#onDestructive = options.onDestructive;
    this.#onAction = options.onAction;
    this.#onChange = options.onChange;
  }

  /** A resource declared in configuration.root_module.resources. */
  addConfiguredResource(value: unknown): void {
    const resource = fieldsOf<ConfiguredResource>(value);
    if (resource.mode === 'managed' && typeof resource.address === 'string')
      this.#onRootDeclaration?.(resource.address);
  }

  /** A module call declared in configuration.root_module.module_calls. */
  addModuleCall(name: string): void {
    this.#onRootDeclaration?.(`module.${name}`);
  }

  /** The top-level scalar fields. Fields absent here keep what an earlier call gave. */
  addHeader(header: Unchecked<Plan>): void {
    for (const field of PLAN_HEADER_FIELDS) if (field in header) this.#header[field] = header[field];
  }

  /**
   * Called once a section has been read (after its entries): fails closed when it has the wrong
   * JSON type (then it has no entries), or when it is deferred_changes and lists any.
   */
  checkSection(section: PlanSection, value: unknown): void {
    if (section === 'resource_changes') this.#recordImports();
    const expected = PLAN_SECTIONS[section];
    const matches = expected === 'array' ? Array.isArray(value) : isRecord(value);
    if (!matches)
      this.#failClosed.push(
        `${section} is ${jsonTypeName(value)}, expected ${expected === 'array' ? 'an array' : 'an object'}`,
      );
    const deferred = this.#deferred.total;
    if (section === 'deferred_changes' && deferred > 0)
      this.#failClosed.push(
        `deferred_changes lists ${deferred} change${deferred === 1 ? '' : 's'} terraform could not plan yet (partial.deferred): the plan is incomplete`,
      );
  }

  /** A top-level key outside PLAN_TOP_LEVEL_KEYS: the runner cannot tell what applying it means when it holds anything. */
  addOtherKey(key: string, hasContent: boolean): void {
    if (PLAN_TOP_LEVEL_KEYS.has(key) || !hasContent) return;
    this.#failClosed.push(
      `the plan has a top-level key this runner does not know, ${JSON.stringify(key)}, and it holds content: what applying it does cannot be checked`,
    );
  }

  /** One entry of action_invocations. */
  addActionInvocation(entry: unknown): void {
    this.#recordAction(entry, `action_invocations[${this.#actionEntries++}]`, null);
  }

  /** One entry of deferred_action_invocations: `{reason, action_invocation}`. */
  addDeferredActionInvocation(entry: unknown): void {
    const position = `deferred_action_invocations[${this.#deferredActionEntries++}]`;
    const deferred = fieldsOf<DeferredActionInvocation>(entry);
    const reason = optionalString(deferred.reason) ?? 'unknown';
    this.#recordAction(isRecord(entry) ? (deferred.action_invocation ?? null) : entry, position, reason);
  }

  /** One entry of deferred_changes: `{reason, resource_change}`, listed in partial.deferred, never counted or destructive. */
  addDeferredChange(entry: unknown): void {
    const position = `deferred_changes[${this.#deferred.total}]`;
    const deferred = fieldsOf<DeferredResourceChange>(entry);
    const resource = fieldsOf<DeferredResource>(deferred.resource_change);
    this.#deferred.add({
      address: optionalString(resource.address) ?? position,
      action: kindName(readActions(fieldsOf<Change>(resource.change).actions).kind),
      reason: optionalString(deferred.reason) ?? null,
    });
  }

  addResourceChange(value: unknown): void {
    const position = `resource_changes[${this.#resourceEntries++}]`;
    if (!isRecord(value)) {
      this.#recordUnknownEntry(position, `${position} is ${jsonTypeName(value)}, not an object`);
      return;
    }
    const entry = fieldsOf<ResourceChange>(value);
    const address = optionalString(entry.address);
    const change = fieldsOf<Change>(entry.change);
    const reading = readActions(change.actions);
    const reserved = reservedAddressOf(entry, this.#ignore);
    const reservedWhy =
      reserved === undefined ? undefined : reservedEntryWhy(entry, change, reading, reserved, this.#runnerKinds);
    if (reserved !== undefined && reservedWhy === undefined) {
      // The runner's own: skipped everywhere, but said, since terraform's own counts include it.
      if (changesResource(reading.kind)) this.#record = { address: reserved, actions: listedActions(change.actions) };
      return;
    }
    const importing = isRecord(change.importing);
    const moved = typeof entry.previous_address === 'string' && entry.previous_address !== address;

    for (const kind of countedAs(reading.kind)) this.#counts[kind] += 1;
    if (importing) this.#counts.import += 1;
    if (moved) this.#counts.move += 1;
    const record = (previous: string | undefined) =>
      this.#recordChange(entry, change, reading, reservedWhy, address ?? position, previous, importing);
    if (reservedWhy === undefined && !moved && (importing || reading.kind === 'forget')) {
      const ids = objectIds(change, importing);
      if (reading.kind === 'forget' && address !== undefined)
        for (const id of ids) this.#forgotten.set(objectKey(entry, id), address);
      if (importing && ids.length) {
        const held = () => record(ids.map((id) => this.#forgotten.get(objectKey(entry, id))).find(Boolean));
        this.#imports.push(held);
        return;
      }
    }
    record(moved ? optionalString(entry.previous_address) : undefined);
  }

  /** The held imports, once every forget is known: each moved from the address that forgets its object, if any. */
  #recordImports(): void {
    for (const held of this.#imports.splice(0)) held();
  }

  /** What one resource change tells: the listed change, the policy's view, a destructive entry. `previous`: where it was before a move. */
  #recordChange(
    entry: Unchecked<ResourceChange>,
    change: Unchecked<Change>,
    reading: ReturnType<typeof readActions>,
    reservedWhy: string | undefined,
    address: string,
    previous: string | undefined,
    importing: boolean,
  ): void {
    const moved = previous !== undefined;
    // A no-op that moves or imports still changes the state, so terraform must apply it. A data
    // source read changes no resource: counting it would report drift where there is none.
    if (changesResource(reading.kind) || importing || moved) {
      this.#hasResourceChanges = true;
      this.#changes.add(resourceEntry(entry, address, previous, listedActions(change.actions)));
    }

    const destroys = isDestructive(reading.kind) ? reading.kind : undefined;
    const deposed = optionalString(entry.deposed);
    const reason = optionalString(entry.action_reason);
    const replacePaths = readReplacePaths(change.replace_paths);
    this.#onChange?.({
      address,
      module: optionalString(entry.module_address) ?? null,
      mode: optionalString(entry.mode) ?? null,
      type: optionalString(entry.type) ?? null,
      name: optionalString(entry.name) ?? null,
      provider: optionalString(entry.provider_name) ?? null,
      // At a reserved address every entry is destructive and unknown (below); a create-forget forgets.
      kind: reservedWhy !== undefined ? 'unknown' : reading.kind === 'createForget' ? 'forget' : reading.kind,
      actions: listedActions(change.actions),
      reason: reason ?? null,
      replacePaths: replacePaths ?? null,
      deposed: deposed ?? null,
      ...previousOf(previous),
      moved,
      imported: importing,
    });
    if (destroys === undefined && reservedWhy === undefined) return;
    const why = reservedWhy ?? reading.why;
    this.#recordDestructive({
      address,
      ...(previous !== undefined && { previousAddress: previous }),
      ...(deposed !== undefined && { deposed }),
      // At a reserved address even a create or a no-op fails closed: the runner cannot tell what it means.
      action: destroys ?? 'unknown',
      actions: listedActions(change.actions),
      ...(reason !== undefined && { reason }),
      ...(replacePaths !== undefined && { replacePaths }),
      ...(why !== undefined && { why }),
    });
  }

  addResourceDrift(value: unknown): void {
    const position = `resource_drift[${this.#driftEntries++}]`;
    const entry = fieldsOf<ResourceChange>(value);
    const address = optionalString(entry.address);
    const change = fieldsOf<Change>(entry.change);
    const reserved = reservedAddressOf(entry, this.#ignore);
    if (reserved !== undefined) {
      // A refresh-only plan reports moves here, and applying it carries them out: a move into or
      // out of the record, an instance or a deposed object of it fails closed as in resource_changes.
      const why = reservedEntryWhy(entry, change, { kind: 'noop' }, reserved, RUNNER_KINDS);
      if (why === undefined) return; // the record's own value changed outside terraform: never drift
      this.#counts.unknown += 1;
      this.#hasResourceChanges = true;
      const deposed = optionalString(entry.deposed);
      this.#recordDestructive({
        address: address ?? position,
        ...(deposed !== undefined && { deposed }),
        action: 'unknown',
        actions: listedActions(change.actions),
        why: `${position}: ${why}`,
      });
      this.#onChange?.({
        address: address ?? position,
        deposed: deposed ?? null,
        kind: 'unknown',
        actions: listedActions(change.actions),
      });
      return;
    }
    // A refresh-only plan reports its moves only here (a normal plan in resource_changes), and applying it carries them out.
    const previous = optionalString(entry.previous_address);
    const moved = previous !== undefined && previous !== address;
    if (moved) this.#counts.move += 1;
    this.#drift.add(
      resourceEntry(entry, address ?? position, moved ? previous : undefined, listedActions(change.actions)),
    );
  }

  /** One member of output_changes. Outputs change the state but never destroy infrastructure. */
  addOutputChange(name: string, change: unknown): void {
    const { actions } = fieldsOf<OutputChange>(change);
    const reading = readActions(actions);
    switch (reading.kind) {
      case 'noop':
        return;
      case 'create':
      case 'update':
      case 'delete':
        this.#outputCounts[reading.kind] += 1;
        break;
      default:
        // Outputs have no replace, read or forget: anything else is a shape this runner does not know.
        this.#failClosed.push(
          `output ${JSON.stringify(name)}: ${reading.why ?? `unexpected actions ${JSON.stringify(actions)}`}`,
        );
    }
    this.#hasOutputChanges = true;
  }

  /** One root module variable declaration (configuration.root_module.variables). */
  addVariable(name: string, declaration: unknown): void {
    if (fieldsOf<VariableDeclaration>(declaration).sensitive === true) this.#sensitiveVariables.push(name);
  }

  result(): Classification {
    this.#recordImports();
    const headerProblems: string[] = [];
    const formatVersion = this.#readFormatVersion(headerProblems);
    const errored = this.#readBoolean('errored', false, true, headerProblems);
    const hasChanges = this.#hasResourceChanges || this.#hasOutputChanges || this.#actions.total > 0;
    // Format 0.x and OpenTofu have no complete/applyable: such plans were complete, and applyable when they changed something.
    const complete = this.#readBoolean('complete', !errored, false, headerProblems);
    // terraform writes complete false for deferred changes and -target (which the runner never passes): applying it does not finish the configuration.
    if (!complete && !errored && typeof this.#header.complete === 'boolean')
      headerProblems.push(
        'complete is false: terraform says applying this plan does not finish the configuration (deferred changes, or -target)',
      );
    const failClosed = [...headerProblems, ...this.#failClosed];
    const facts = { destructiveTotal: this.#destructive.total, actionsTotal: this.#actions.total, failClosed };
    return {
      gated: needsApproval(facts),
      formatVersion,
      ...(typeof this.#header.terraform_version === 'string' && { terraformVersion: this.#header.terraform_version }),
      errored,
      complete,
      applyable: this.#readBoolean('applyable', hasChanges && !errored, false, headerProblems),
      hasResourceChanges: this.#hasResourceChanges,
      hasOutputChanges: this.#hasOutputChanges,
      destructive: [...this.#destructive.items],
      destructiveTotal: this.#destructive.total,
      counts: { ...this.#counts },
      outputChanges: { ...this.#outputCounts },
      drift: [...this.#drift.items],
      driftTotal: this.#drift.total,
      changes: [...this.#changes.items],
      changesTotal: this.#changes.total,
      ...(this.#record && { record: this.#record }),
      failClosed,
      sensitiveVariables: [...this.#sensitiveVariables].sort(),
      actions: [...this.#actions.items],
      actionsTotal: this.#actions.total,
      ...((!complete || this.#deferred.total > 0) && {
        partial: { complete, deferred: [...this.#deferred.items], deferredTotal: this.#deferred.total },
      }),
    };
  }

  #recordAction(entry: unknown, position: string, deferredReason: string | null): void {
    const { action, problems } = readActionInvocation(entry, position, deferredReason);
    if (problems.length) this.#failClosed.push(`${position} (${action.address}): ${problems.join('; ')}`);
    this.#actions.add(action);
    this.#onAction?.(action);
  }

  #recordUnknownEntry(position: string, why: string): void {
    this.#counts.unknown += 1;
    this.#hasResourceChanges = true;
    this.#recordDestructive({ address: position, action: 'unknown', actions: [], why });
    this.#onChange?.({ address: position, kind: 'unknown', actions: [] });
  }

  /** Every destructive entry is counted and told to onDestructive; the first `limit` are kept. */
  #recordDestructive(entry: DestructiveChange): void {
    this.#destructive.add(entry);
    this.#onDestructive?.(entry);
  }

  #readFormatVersion(problems: string[]): string {
    const version = this.#header.format_version;
    if (typeof version !== 'string') {
      problems.push(
        version === undefined
          ? 'format_version is missing'
          : `format_version is ${jsonTypeName(version)}, expected a string`,
      );
      return '';
    }
    const major = /^(\d+)\.\d+$/.exec(version)?.[1];
    if (major === undefined) problems.push(`format_version ${JSON.stringify(version)} is not MAJOR.MINOR`);
    else if (!KNOWN_FORMAT_MAJORS.has(Number(major))) {
      problems.push(
        `format_version ${JSON.stringify(version)} has major version ${major}; this runner reads 0.x and 1.x`,
      );
    }
    return version;
  }

  /** A header boolean: `absent` when terraform did not write it, `invalid` (and a fail-closed note) when it is not a boolean. */
  #readBoolean(
    field: 'errored' | 'complete' | 'applyable',
    absent: boolean,
    invalid: boolean,
    problems: string[],
  ): boolean {
    const value = this.#header[field];
    if (value === undefined) return absent;
    if (typeof value === 'boolean') return value;
    problems.push(`${field} is ${jsonTypeName(value)}, expected a boolean`);
    return invalid;
  }
}

// ---- what the classifier reads entries with ----

function readReplacePaths(value: unknown): DestructiveChange['replacePaths'] {
  const isPath = (path: unknown) =>
    Array.isArray(path) && path.every((step) => typeof step === 'string' || typeof step === 'number');
  return Array.isArray(value) && value.every(isPath) ? (value as (string | number)[][]) : undefined;
}

/** What a present value holds, as the allow-list of top-level keys judges it: a non-empty array or object, or any scalar but null and false. */
function holdsContent(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return value !== null && value !== false;
}

/** An entry of resource_changes or resource_drift as the classification lists it: its address, where it moved from, its deposed key, its actions. */
function resourceEntry(
  entry: Unchecked<ResourceChange>,
  address: string,
  previous: string | undefined,
  actions: string[],
): ResourceEntry {
  const deposed = optionalString(entry.deposed);
  return {
    address,
    ...(previous !== undefined && { previousAddress: previous }),
    ...(deposed !== undefined && { deposed }),
    actions,
  };
}

/**
 * The ids an object goes by in the plan: what an import names (`importing.id`) and the object's own
 * `id` before the change (a forgotten object's, an imported one's as terraform read it). Only
 * compared, never printed.
 */
function objectIds(change: Unchecked<Change>, importing: boolean): string[] {
  const ids = new Set<string>();
  const imported = importing ? (change.importing as { id?: unknown }).id : undefined;
  if (typeof imported === 'string' && imported !== '') ids.add(imported);
  const before = isRecord(change.before) ? change.before.id : undefined;
  if (typeof before === 'string' && before !== '') ids.add(before);
  return [...ids];
}

/** One object as a forget and an import name it: the same type, provider and id. */
const objectKey = (entry: Unchecked<ResourceChange>, id: string) =>
  JSON.stringify([optionalString(entry.type) ?? '', optionalString(entry.provider_name) ?? '', id]);

/** Where a moved entry was, and that address's parts, as a policy view carries them (null when it did not move). */
function previousOf(
  previous: string | undefined,
): Pick<PolicyChangeView, 'previousAddress' | 'previousModule' | 'previousType' | 'previousName'> {
  const parts = previous === undefined ? undefined : addressParts(previous);
  return {
    previousAddress: previous ?? null,
    previousModule: parts?.module ?? null,
    previousType: parts?.type ?? null,
    previousName: parts?.name ?? null,
  };
}

/** Entries counted whole and listed up to a limit (the result's bounded lists and their totals). */
class BoundedList<T> {
  readonly items: T[] = [];
  total = 0;
  constructor(readonly limit: number) {}

  add(entry: T): void {
    this.total += 1;
    if (this.items.length < this.limit) this.items.push(entry);
  }
}
