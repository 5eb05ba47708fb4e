// The secrets a state already holds: values of attributes terraform marks sensitive
// (`sensitive_attributes`) and of sensitive root outputs. The masker must know them before a plan
// is printed: after a secret input changes, terraform prints the OLD value of an attribute derived
// from it (terraform_data `output` loses the mark: `~ output = "old-secret" -> (known after apply)`),
// and the old value is in no input the runner was given. States can be large: read as a stream, one
// instance at a time.
//
// An instance's attributes come before its sensitive_attributes in the document, so which
// attributes to build is known only once they are past. The read that summarizes the state
// (summary.ts) notes, with a StateSecretScan, which instances have sensitive attributes (building
// nothing of them) and takes the sensitive outputs; stateSecrets then reads the state file again,
// building only those instances, and not at all when there are none: building every instance's
// attributes to find the few with a secret cost more than the rest of the read (BENCHMARKS.md).
import { createReadStream } from 'node:fs';
import { KEEP, readSelected, type Selector } from '../json/select-json.ts';
import { stringLeaves } from '../masking/mask.ts';

export interface StateSecret {
  value: string;
  /** Names where the value is (never the value itself), for the masker's too-short report. */
  label: string;
}

/** One step of a sensitive path as terraform writes it in state format 4. */
type PathStep = { type?: unknown; value?: unknown };

type ResourceName = { type?: unknown; name?: unknown };

/**
 * What the summary's read of a state notes for its secrets (summary.ts feeds it): the secret values
 * it could take at once, and where the instances with sensitive attributes are (the index of their
 * resource in `resources`, and theirs in its `instances`, counted as the document has them).
 */
export class StateSecretScan {
  /** Secret values found in the first read: sensitive outputs, and the attributes of the instances it built. */
  readonly found: StateSecret[] = [];
  readonly #places = new Map<number, Set<number>>();
  #resource = 0;
  #instance = 0;

  /** The selector of a resource's `instances` (not built): each instance's sensitive_attributes probed. */
  readonly instances: Selector = {
    items: {
      fields: {
        sensitive_attributes: {
          probe: (hasContent) => {
            if (!hasContent) return;
            const instances = this.#places.get(this.#resource) ?? new Set<number>();
            this.#places.set(this.#resource, instances.add(this.#instance));
          },
        },
      },
      emit: () => {
        this.#instance++;
      },
    },
  };

  /** The selector of the state's `outputs`, when the summary does not build them: the sensitive ones' values taken. */
  readonly outputs: Selector = {
    members: {
      fields: { value: KEEP, sensitive: KEEP },
      emit: (output, name) => this.addOutput(String(name), output),
    },
  };

  /** A resource of `resources` ended (whatever it was): the next one's instances are counted from 0. */
  endResource(): void {
    this.#resource++;
    this.#instance = 0;
  }

  /** A resource the summary built whole (the runner's record): its instances' secrets taken from it. */
  addBuiltResource(resource: ResourceName & { instances?: unknown }): void {
    if (Array.isArray(resource.instances))
      for (const instance of resource.instances) addInstanceSecrets(this.found, resource, instance);
  }

  /** Every output of a built `outputs` object (the summary's, when it keeps them). */
  addOutputs(outputs: Record<string, unknown>): void {
    for (const [name, output] of Object.entries(outputs)) this.addOutput(name, output);
  }

  private addOutput(name: string, output: unknown): void {
    const { value, sensitive } = (output ?? {}) as { value?: unknown; sensitive?: unknown };
    if (sensitive === true)
      for (const leaf of stringLeaves(value))
        this.found.push({ value: leaf, label: `sensitive output ${name} in the state` });
  }

  /** Where the instances with sensitive attributes are: resource index → instance indexes. */
  get places(): ReadonlyMap<number, ReadonlySet<number>> {
    return this.#places;
  }
}

/**
 * Every secret value of the state in `file`, the one `scan` was fed by: what the scan found, and
 * the sensitive attributes of the instances it noted, read again from the file (not at all when
 * there are none).
 */
export async function stateSecrets(file: string, scan: StateSecretScan): Promise<StateSecret[]> {
  const found = [...scan.found];
  if (scan.places.size === 0) return found;
  let resourceIndex = 0;
  let instanceIndex = 0;
  let resource: ResourceName = {};
  let wanted: ReadonlySet<number> | undefined;
  const instance: Selector = {
    fields: (key) =>
      (key === 'attributes' || key === 'sensitive_attributes') && wanted?.has(instanceIndex) ? KEEP : undefined,
    emit: (value) => {
      if (wanted?.has(instanceIndex)) addInstanceSecrets(found, resource, value);
      instanceIndex++;
    },
  };
  await readSelected(createReadStream(file), {
    fields: {
      resources: {
        items: {
          // type and name come before instances in terraform's state: the label can name them.
          fields: (key, built) => {
            if (key === 'type' || key === 'name') return KEEP;
            if (key !== 'instances') return undefined;
            wanted = scan.places.get(resourceIndex);
            if (!wanted) return undefined;
            resource = built;
            instanceIndex = 0;
            return { items: instance };
          },
          emit: () => {
            resourceIndex++;
          },
        },
      },
    },
  });
  return found;
}

/** The values at an instance's sensitive paths. */
function addInstanceSecrets(found: StateSecret[], resource: ResourceName, value: unknown): void {
  const { attributes, sensitive_attributes: paths } = (value ?? {}) as {
    attributes?: unknown;
    sensitive_attributes?: unknown;
  };
  if (!Array.isArray(paths)) return;
  for (const path of paths) {
    if (!Array.isArray(path)) continue;
    const at = valueAt(attributes, path as PathStep[]);
    const label = `a sensitive attribute of ${String(resource.type)}.${String(resource.name)} in the state`;
    for (const leaf of stringLeaves(unwrapDynamic(at))) found.push({ value: leaf, label });
  }
}

/** Follows a sensitive path into the attributes; stops where the path leaves what is there. */
function valueAt(root: unknown, path: readonly PathStep[]): unknown {
  let at = root;
  for (const step of path) {
    at = unwrapDynamic(at);
    if (at === null || typeof at !== 'object') return at;
    const key =
      step.type === 'index' && typeof step.value === 'object' && step.value !== null
        ? (step.value as { value?: unknown }).value
        : step.value;
    if (typeof key !== 'string' && typeof key !== 'number') return at;
    const next = (at as Record<string | number, unknown>)[key];
    if (next === undefined) return at;
    at = next;
  }
  return at;
}

/**
 * An attribute of dynamic type (terraform_data `input`, `output`) is stored as {value, type}: the
 * type ("string", ["object", …]) is no secret, and masking words like "string" would garble output.
 */
function unwrapDynamic(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 2 && keys.includes('value') && keys.includes('type'))
      return (value as { value: unknown }).value;
  }
  return value;
}
