#!/usr/bin/env node
// Writes a synthetic `terraform show -json` plan document (format 1.2, shaped like terraform 1.11's
// output for a module of terraform_data resources) of about the requested size, streamed in chunks
// so that documents larger than Node's maximum string length cost no memory. Prints the counts a
// classifier must find to stderr as one JSON line.
//
//   node scripts/generators/gen-plan.mjs --bytes 1073741824 --out /tmp/plan.json
//   node scripts/generators/gen-plan.mjs --bytes 1048576 > plan.json
//
// Resource i gets the kind KIND_CYCLE[i % 10]; each instance costs about --entry-bytes bytes in all
// (its resource_changes entry plus its prior_state and planned_values copies, like terraform's).
// The runner's injected terraform_data.captf_inputs_hash is present with an update, and the expected
// counts assume it is ignored (as the runner does).
import { createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';

const KIND_CYCLE = [
  'create',
  'update',
  'delete',
  'replace',
  'replace-cbd',
  'no-op',
  'no-op',
  'no-op',
  'no-op',
  'no-op',
];
const ACTIONS = {
  create: ['create'],
  update: ['update'],
  delete: ['delete'],
  replace: ['delete', 'create'],
  'replace-cbd': ['create', 'delete'],
  'no-op': ['no-op'],
};
const INPUTS_HASH_ADDRESS = 'terraform_data.captf_inputs_hash';
const CHUNK_BYTES = 1 << 20;

const resourceAddress = (i) => `terraform_data.r[${i}]`;
const fakeId = (i) => `0f1e2d3c-${String(i).padStart(12, '0')}`;

function resourceChange(i, kind, padding) {
  const address = resourceAddress(i);
  const id = fakeId(i);
  const before =
    kind === 'create' ? 'null' : `{"id":"${id}","input":"${padding}","output":"${padding}","triggers_replace":null}`;
  const after =
    kind === 'delete'
      ? 'null'
      : kind === 'no-op'
        ? before
        : `{"input":"${padding.slice(1)}x","triggers_replace":${kind.startsWith('replace') ? '"v2"' : 'null'}}`;
  const afterUnknown = kind === 'delete' || kind === 'no-op' ? '{}' : '{"id":true,"output":true}';
  const reason = kind.startsWith('replace')
    ? ',"action_reason":"replace_because_cannot_update"'
    : kind === 'delete'
      ? ',"action_reason":"delete_because_count_index"'
      : '';
  const replacePaths = kind.startsWith('replace') ? ',"replace_paths":[["triggers_replace"]]' : '';
  return (
    `{"address":"${address}","mode":"managed","type":"terraform_data","name":"r","index":${i},` +
    `"provider_name":"terraform.io/builtin/terraform","change":{"actions":${JSON.stringify(ACTIONS[kind])},` +
    `"before":${before},"after":${after},"after_unknown":${afterUnknown},"before_sensitive":{},"after_sensitive":{}${replacePaths}}${reason}}`
  );
}

function stateResource(i, padding) {
  return (
    `{"address":"${resourceAddress(i)}","mode":"managed","type":"terraform_data","name":"r","index":${i},` +
    `"provider_name":"terraform.io/builtin/terraform","schema_version":0,` +
    `"values":{"id":"${fakeId(i)}","input":"${padding}","output":"${padding}","triggers_replace":null},"sensitive_values":{}}`
  );
}

/** Expected classification counts for `resources` generated resources (the inputs-hash entry ignored). */
function expectedCounts(resources) {
  const perKind = Object.fromEntries(Object.keys(ACTIONS).map((k) => [k, 0]));
  const full = Math.floor(resources / KIND_CYCLE.length);
  for (const kind of KIND_CYCLE) perKind[kind] += full;
  for (let i = full * KIND_CYCLE.length; i < resources; i++) perKind[KIND_CYCLE[i % KIND_CYCLE.length]] += 1;
  return {
    resources,
    counts: {
      create: perKind.create,
      update: perKind.update,
      delete: perKind.delete,
      replace: perKind.replace + perKind['replace-cbd'],
      read: 0,
      noop: perKind['no-op'],
      forget: 0,
      import: 0,
      move: 0,
      unknown: 0,
    },
    destructiveTotal: perKind.delete + perKind.replace + perKind['replace-cbd'],
    outputChanges: { create: 0, update: 1, delete: 0 },
    sensitiveVariables: ['secret'],
    ignoreAddresses: [INPUTS_HASH_ADDRESS],
  };
}

/**
 * Yields the document as strings of about CHUNK_BYTES. `targetBytes` is approximate (within one
 * entry of padding); `entryBytes` is the size of one instance across all three sections.
 */
export function* generatePlan({ targetBytes, entryBytes = 1060 }) {
  // One instance appears in resource_changes, prior_state and planned_values; the padding fills the
  // attribute values so that the three copies add up to entryBytes.
  const bare = resourceChange(0, 'update', '').length + 2 * stateResource(0, '').length;
  const padding = 'p'.repeat(Math.max(1, Math.round((entryBytes - bare) / 6)));
  const averageChange =
    KIND_CYCLE.reduce((sum, kind) => sum + resourceChange(1e6, kind, padding).length, 0) / KIND_CYCLE.length;
  const perResource = averageChange + 2 * stateResource(1e6, padding).length + 3;
  const resources = Math.max(1, Math.floor(targetBytes / perResource));

  let buffer = '';
  function* flushIfFull() {
    if (buffer.length >= CHUNK_BYTES) {
      yield buffer;
      buffer = '';
    }
  }
  function* section(open, close, count, entry) {
    buffer += open;
    for (let i = 0; i < count; i++) {
      if (i > 0) buffer += ',';
      buffer += entry(i);
      yield* flushIfFull();
    }
    buffer += close;
  }

  const hashValues = '{"id":"hash-id","input":"sha256:new","output":"sha256:new","triggers_replace":null}';
  const hashChange =
    `{"address":"${INPUTS_HASH_ADDRESS}","mode":"managed","type":"terraform_data","name":"captf_inputs_hash",` +
    `"provider_name":"terraform.io/builtin/terraform","change":{"actions":["update"],` +
    `"before":{"id":"hash-id","input":"sha256:old","output":"sha256:old","triggers_replace":null},"after":{"input":"sha256:new","triggers_replace":null},` +
    `"after_unknown":{"output":true},"before_sensitive":{},"after_sensitive":{}}}`;
  const hashState = `{"address":"${INPUTS_HASH_ADDRESS}","mode":"managed","type":"terraform_data","name":"captf_inputs_hash","provider_name":"terraform.io/builtin/terraform","schema_version":0,"values":${hashValues},"sensitive_values":{}}`;

  buffer +=
    '{"format_version":"1.2","terraform_version":"1.11.4","variables":{"secret":{"value":"S3CRET"},"size":{"value":3}},';
  yield* section(
    '"planned_values":{"outputs":{"count":{"sensitive":false,"type":"number","value":3}},"root_module":{"resources":[',
    `,${hashState}]}},`,
    resources,
    (i) => stateResource(i, padding),
  );
  yield* section('"resource_changes":[', `,${hashChange}],`, resources, (i) =>
    resourceChange(i, KIND_CYCLE[i % KIND_CYCLE.length], padding),
  );
  buffer +=
    '"output_changes":{"count":{"actions":["update"],"before":2,"after":3,"after_unknown":false,"before_sensitive":false,"after_sensitive":false}},';
  yield* section(
    '"prior_state":{"format_version":"1.0","terraform_version":"1.11.4","values":{"outputs":{"count":{"sensitive":false,"value":2,"type":"number"}},"root_module":{"resources":[',
    `,${hashState}]}}},`,
    resources,
    (i) => stateResource(i, padding),
  );
  buffer +=
    '"configuration":{"provider_config":{"terraform":{"name":"terraform","full_name":"terraform.io/builtin/terraform"}},"root_module":{' +
    '"outputs":{"count":{"expression":{"references":["var.size"]}}},' +
    `"resources":[{"address":"terraform_data.r","mode":"managed","type":"terraform_data","name":"r","provider_config_key":"terraform","expressions":{"input":{"constant_value":"${padding}"}},"schema_version":0,"count_expression":{"constant_value":${resources}}},` +
    `{"address":"${INPUTS_HASH_ADDRESS}","mode":"managed","type":"terraform_data","name":"captf_inputs_hash","provider_config_key":"terraform","expressions":{"input":{"constant_value":"sha256:new"}},"schema_version":0}],` +
    '"variables":{"secret":{"default":"S3CRET","sensitive":true},"size":{"default":3,"description":"how many"}}}},' +
    '"relevant_attributes":[{"resource":"terraform_data.r","attribute":["input"]}],' +
    '"timestamp":"2026-01-01T00:00:00Z","applyable":true,"complete":true,"errored":false}\n';
  yield buffer;
  return expectedCounts(resources);
}

async function main() {
  const { values } = parseArgs({
    options: {
      bytes: { type: 'string', default: String(1 << 20) },
      'entry-bytes': { type: 'string', default: '1060' },
      out: { type: 'string' },
    },
  });
  const targetBytes = Number(values.bytes);
  const entryBytes = Number(values['entry-bytes']);
  if (!Number.isSafeInteger(targetBytes) || targetBytes <= 0 || !Number.isSafeInteger(entryBytes) || entryBytes < 500) {
    throw new Error('usage: gen-plan.mjs --bytes N [--entry-bytes N>=500] [--out FILE]');
  }
  const out = values.out ? createWriteStream(values.out) : process.stdout;
  const generator = generatePlan({ targetBytes, entryBytes });
  let bytes = 0;
  for (;;) {
    const next = generator.next();
    if (next.done) {
      process.stderr.write(`${JSON.stringify({ bytes, ...next.value })}\n`);
      break;
    }
    bytes += Buffer.byteLength(next.value);
    if (!out.write(next.value)) await new Promise((resolve) => out.once('drain', resolve));
  }
  await new Promise((resolve, reject) =>
    out === process.stdout ? resolve() : out.end((error) => (error ? reject(error) : resolve())),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    process.stderr.write(`gen-plan: ${error.message}\n`);
    process.exitCode = 1;
  });
}
