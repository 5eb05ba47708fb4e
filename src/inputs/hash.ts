// The inputs hash and the approval hash (pure). The inputs hash names everything an apply renders:
// the image reference and every module input. The destructive-plan guard approves exactly it;
// a pool's approval leaves out bootstrap_data, which rotations change every few minutes.
import { sha256Hex } from '../util/sha256.ts';
import type { ObjectKind } from '../object-kind.ts';
import { canonicalJson, JsonNumber, type JsonObject, type JsonValue } from './canonical.ts';

/** Bumped only with a new definition in contract/sections/inputs.md: every stored hash changes with it. */
const INPUTS_HASH_VERSION = 1;

/** The variable a pool's approval hash leaves out. */
const POOL_ROTATING_VARIABLE = 'bootstrap_data';

export interface HashedInputs {
  /** The image reference exactly as the Job runs it (tag or digest, as written). */
  image: string;
  /** terraform.tfvars.json and sensitive.tfvars.json merged. */
  variables: JsonObject;
  /** Every other input file by name; reserved names already left out. */
  files: ReadonlyMap<string, Uint8Array>;
}

export interface InputsHashes {
  inputsHash: string;
  /** What an approval must name: the inputs hash, except for a pool (without bootstrap_data). */
  approvalHash: string;
}

/** `{"files":{name:sha256},"image":…,"variables":…,"version":1}` in canonical JSON. */
export function canonicalInputsDocument(inputs: HashedInputs): string {
  const fileHashes = new Map<string, JsonValue>([...inputs.files].map(([name, bytes]) => [name, sha256Hex(bytes)]));
  return canonicalJson(
    new Map<string, JsonValue>([
      ['files', fileHashes],
      ['image', inputs.image],
      ['variables', inputs.variables],
      ['version', new JsonNumber(String(INPUTS_HASH_VERSION))],
    ]),
  );
}

export function computeHashes(inputs: HashedInputs & { kind: ObjectKind }): InputsHashes {
  const inputsHash = sha256Hex(canonicalInputsDocument(inputs));
  if (inputs.kind !== 'pool' || !inputs.variables.has(POOL_ROTATING_VARIABLE)) {
    return { inputsHash, approvalHash: inputsHash };
  }
  const variables = new Map(inputs.variables);
  variables.delete(POOL_ROTATING_VARIABLE);
  return { inputsHash, approvalHash: sha256Hex(canonicalInputsDocument({ ...inputs, variables })) };
}
