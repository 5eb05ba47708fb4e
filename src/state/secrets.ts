// The secrets a state already holds: values of attributes terraform marks sensitive
// (`sensitive_attributes`) and of sensitive root outputs. The masker must know them before a plan
// is printed: after a secret input changes, terraform prints the OLD value of an attribute derived
// from it (terraform_data `output` loses the mark: `~ output = "old-secret" -> (known after apply)`),
// and the old value is in no input the runner was given. States can be large: read as a stream, one
// instance at a time.
import { createReadStream } from 'node:fs';
import { KEEP, readSelected, type Selector } from '../json/select-json.ts';
import { stringLeaves, type Masker } from '../output/mask.ts';

export interface StateSecret {
  value: string;
  /** Names where the value is (never the value itself), for the masker's too-short report. */
  label: string;
}

/** One step of a sensitive path as terraform writes it in state format 4. */
type PathStep = { type?: unknown; value?: unknown };

/** Every secret value of the state in `file` (a `state pull`); an empty or missing file gives none. */
export async function stateSecrets(file: string): Promise<StateSecret[]> {
  const found: StateSecret[] = [];
  let resource: { type?: unknown; name?: unknown } = {};
  const instance: Selector = {
    fields: { attributes: KEEP, sensitive_attributes: KEEP },
    emit: (value) => {
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
    },
  };
  const selector: Selector = {
    fields: {
      resources: {
        items: {
          // type and name come before instances in terraform's state: the label can name them.
          fields: (key, built) => {
            if (key === 'type' || key === 'name') return KEEP;
            if (key === 'instances') {
              resource = built;
              return { items: instance };
            }
            return undefined;
          },
          emit: () => undefined,
        },
      },
      outputs: {
        members: {
          fields: { value: KEEP, sensitive: KEEP },
          emit: (output, name) => {
            const { value, sensitive } = (output ?? {}) as { value?: unknown; sensitive?: unknown };
            if (sensitive === true)
              for (const leaf of stringLeaves(value))
                found.push({ value: leaf, label: `sensitive output ${String(name)} in the state` });
          },
        },
      },
    },
  };
  try {
    await readSelected(createReadStream(file), selector);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return found;
}

/** Teaches the masker every secret value of the state in `file`. */
export async function maskStateSecrets(file: string, masker: Masker): Promise<void> {
  for (const { value, label } of await stateSecrets(file)) masker.add(value, label);
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
