// Builders for plan documents shaped like terraform 1.11's show -json, and helpers to feed them to
// the streaming reader in chunks.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** hashicorp/terraform-json's plan fixtures, kept in the repository (their README has the licence). */
const TERRAFORM_JSON_CORPUS = fileURLToPath(new URL('../fixtures/plans/terraform-json/', import.meta.url));
export const corpusFiles = () =>
  readdirSync(TERRAFORM_JSON_CORPUS)
    .filter((f) => f.endsWith('.json'))
    .sort();
export const corpusPath = (file: string) => join(TERRAFORM_JSON_CORPUS, file);

export const INPUTS_HASH_ADDRESS = 'terraform_data.captf_inputs_hash';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A resource_changes entry with the values terraform writes around the fields the classifier reads. */
export function resourceChange(
  address: string,
  actions: Json,
  extra: Record<string, Json> = {},
  changeExtra: Record<string, Json> = {},
): Record<string, Json> {
  return {
    address,
    mode: 'managed',
    type: 'terraform_data',
    name: address.split('.').at(-1)!.replace(/\[.*$/, ''),
    provider_name: 'terraform.io/builtin/terraform',
    change: {
      actions,
      before: { id: 'abc', input: 'old "quoted" \\ value', output: null },
      after: { input: 'new ✓ value', triggers_replace: [1, 2.5e3, -0.5, true, false, null] },
      after_unknown: { id: true, output: true },
      before_sensitive: {},
      after_sensitive: { input: { secret: true } },
      ...changeExtra,
    },
    ...extra,
  };
}

/** A whole plan document; `sections` are placed where terraform places them. */
export function planDocument(sections: Record<string, Json> = {}): Record<string, Json> {
  const { format_version = '1.2', errored = false, complete = true, applyable = true, variables, ...rest } = sections;
  return {
    format_version,
    terraform_version: '1.11.4',
    variables: { secret: { value: 'S3CRET' } },
    planned_values: { root_module: { resources: [{ address: 'terraform_data.x', values: { input: 'S3CRET' } }] } },
    ...rest,
    prior_state: { format_version: '1.0', values: { root_module: {} } },
    configuration: {
      root_module: { variables: (variables as Json) ?? { secret: { sensitive: true, default: 'S3CRET' }, plain: {} } },
    },
    timestamp: '2026-01-01T00:00:00Z',
    applyable,
    complete,
    errored,
  };
}

/** Yields `bytes` split at the given offsets (empty chunks included, as a stream may deliver them). */
export async function* chunked(bytes: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  const points = [0, ...[...cuts].sort((a, b) => a - b), bytes.length];
  for (let i = 1; i < points.length; i++) yield bytes.subarray(points[i - 1], points[i]);
}

/** Where a stream of `size`-byte chunks (its highWaterMark) would cut `bytes`: for chunked(). */
export const everyNthByte = (bytes: Buffer, size: number) =>
  Array.from({ length: Math.floor(bytes.length / size) }, (_, i) => (i + 1) * size);
