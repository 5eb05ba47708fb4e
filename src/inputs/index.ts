// The inputs dir, canonical JSON and the inputs/approval hashes. The definition other languages
// replay is contract/sections/inputs.md, with vectors in contract/vectors/inputs-hash.json.
export { readInputs } from './read.ts';
export {
  inputsFromFiles,
  secretValues,
  SENSITIVE_TFVARS_FILE,
  terraformVarFiles,
  TFVARS_FILE,
  varFileOf,
  type InputsSnapshot,
} from './snapshot.ts';
export {
  canonicalInputsDocument,
  computeHashes,
  type InputsHashes,
} from './hash.ts';
export {
  canonicalJson,
  canonicalNumber,
  JsonNumber,
  type JsonObject,
  type JsonValue,
} from './canonical.ts';
export { MAX_NESTING, NegativeZeroError, parseExactJson } from './json.ts';
export { JsonSyntaxError } from '../util/json-syntax-error.ts';
