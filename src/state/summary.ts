// Summarizes `terraform state pull` output as it streams in: serial, lineage, terraform version and
// the inputs hash the runner recorded in its own terraform_data resource. States can be as large as
// plans, so only these fields are built (see select-json.ts).
import { RunnerError } from '../errors.ts';
import { JsonSyntaxError } from '../util/json-syntax-error.ts';
import { type ByteSource, KEEP, readSelected, type Selector } from '../json/select-json.ts';
import { isSha256 } from '../util/sha256.ts';
import type { StateSecretScan } from './secrets.ts';
import { INPUTS_HASH_RESOURCE_NAME, INPUTS_HASH_RESOURCE_TYPE } from '../workspace/reserved-names.ts';

export interface StateSummary {
  serial: number | null;
  lineage: string | null;
  terraformVersion: string | null;
  /** resources[captf_inputs_hash].instances[0].attributes.input.value: the inputs hash of the last apply. */
  recordedInputsHash: string | null;
  /** The runner's record as the state holds it (its resource entry, small), when there is one. */
  record?: Record<string, unknown>;
  /** The root module's outputs as the state holds them ({value, type, sensitive?}), when asked for. */
  outputs?: Record<string, unknown>;
}

/** The root-module resource the runner injects to record its inputs hash. */
export const isInputsHashResource = (resource: Record<string, unknown>) =>
  !('module' in resource) &&
  resource.mode === 'managed' &&
  resource.type === INPUTS_HASH_RESOURCE_TYPE &&
  resource.name === INPUTS_HASH_RESOURCE_NAME;

const at = (value: unknown, key: string | number): unknown =>
  typeof value === 'object' && value !== null ? (value as Record<string | number, unknown>)[key] : undefined;

function stateSelector(summary: StateSummary, withOutputs: boolean, secrets: StateSecretScan | undefined): Selector {
  return {
    fields: {
      serial: KEEP,
      ...(withOutputs ? { outputs: KEEP } : secrets ? { outputs: secrets.outputs } : {}),
      lineage: KEEP,
      terraform_version: KEEP,
      resources: {
        items: {
          // terraform writes module, mode, type and name before instances, so the resource is known
          // by the time its instances come; only the runner's resource has its instances built.
          fields: (key, built) =>
            key === 'instances' ? (isInputsHashResource(built) ? KEEP : secrets?.instances) : KEEP,
          emit: (resource) => {
            secrets?.endResource();
            if (
              typeof resource !== 'object' ||
              resource === null ||
              !isInputsHashResource(resource as Record<string, unknown>)
            )
              return;
            secrets?.addBuiltResource(resource);
            summary.record = resource as Record<string, unknown>;
            // terraform_data stores `input` as {value, type}.
            const hash = at(at(at(at(at(resource, 'instances'), 0), 'attributes'), 'input'), 'value');
            // Anything but a sha256 is no record at all (the controller then applies: StateWithoutInputsHash).
            if (typeof hash === 'string' && isSha256(hash)) summary.recordedInputsHash = hash;
          },
        },
      },
    },
    emit: (state) => {
      if (typeof state !== 'object' || state === null || Array.isArray(state)) {
        throw new RunnerError({
          kind: 'state',
          reason: 'StateUnreadable',
          message: 'the state from terraform state pull is not a JSON object',
        });
      }
      const { serial, lineage, terraform_version: version, outputs } = state as Record<string, unknown>;
      if (withOutputs) {
        summary.outputs =
          typeof outputs === 'object' && outputs !== null && !Array.isArray(outputs)
            ? (outputs as Record<string, unknown>)
            : {};
        secrets?.addOutputs(summary.outputs);
      }
      summary.serial = typeof serial === 'number' ? serial : null;
      summary.lineage = typeof lineage === 'string' ? lineage : null;
      summary.terraformVersion = typeof version === 'string' ? version : null;
    },
  };
}

export interface SummaryOptions {
  /** Build the root module's outputs (summary.outputs). */
  outputs?: boolean;
  /** Fed, in the same read, what the state's secrets need (secrets.ts). */
  secrets?: StateSecretScan;
}

/** Summarizes the state document `source` yields; empty input (no state yet) gives all nulls (and no outputs). */
export async function summarizeState(source: ByteSource, options: SummaryOptions = {}): Promise<StateSummary> {
  const summary: StateSummary = { serial: null, lineage: null, terraformVersion: null, recordedInputsHash: null };
  try {
    await readSelected(source, stateSelector(summary, options.outputs === true, options.secrets));
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw new RunnerError({
      kind: 'state',
      reason: 'StateUnreadable',
      message: `the state from terraform state pull is unreadable: ${error.message}`,
      detail: { offset: error.offset },
      cause: error,
    });
  }
  return summary;
}
