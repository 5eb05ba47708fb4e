// How the runner classifies every plan, in the ops and in `classify`: what a plan does at the
// runner's own record (terraform_data.captf_inputs_hash) is the runner's, never counted as a change.
import type { ClassifyOptions } from './classify.ts';
import { INPUTS_HASH_RESOURCE } from '../workspace/reserved-names.ts';

export const runnerClassifyOptions = (options: ClassifyOptions = {}): ClassifyOptions => ({
  ignoreAddresses: new Set([INPUTS_HASH_RESOURCE]),
  ...options,
});
