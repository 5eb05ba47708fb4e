// The streaming JSON reader run once over small documents while the startup snapshot is built
// (src/startup-snapshot.ts): node keeps the bytecode of the functions a build ran in the blob, so a
// run's first `state pull` and `show -json` start with the reader compiled (BENCHMARKS.md, the JSON
// reader from its first document). V8 clears the feedback and optimised code: what a run learns of
// its documents is still learnt from them. Nothing is kept: the documents are literals, the results
// are dropped, and nothing is read of the process.
import { classifyPlanStream } from './plan/stream.ts';
import { StateSecretScan } from './state/secrets.ts';
import { summarizeState } from './state/summary.ts';

const instance = (n: number) => ({
  index_key: n,
  schema_version: 0,
  attributes: {
    id: `i-${n}`,
    input: { s: 'a\\"b\u00e9\n\u0001', n: -1.5e-7, b: [true, false, null], e: {} },
    list: [],
  },
  sensitive_attributes: n === 0 ? [] : [[{ type: 'get_attr', value: 'input' }]],
  dependencies: ['terraform_data.x'],
});
const STATE = JSON.stringify(
  {
    version: 4,
    terraform_version: '1.11.4',
    serial: 3,
    lineage: 'a1b2',
    outputs: {
      plain: { value: ['x', 1], type: ['tuple', ['string', 'number']] },
      secret: { value: 's3', type: 'string', sensitive: true },
    },
    resources: [
      {
        mode: 'managed',
        type: 'terraform_data',
        name: 'x',
        provider: 'provider["terraform.io/builtin/terraform"]',
        instances: [instance(0), instance(1)],
      },
    ],
    check_results: null,
  },
  null,
  2,
);

const values = (n: number) => ({ input: { s: `v\\u00e9${n}`, n, b: n % 2 === 0, l: [1.5, 0, 1e21] }, id: null });
const change = (address: string, actions: string[]) => ({
  address,
  mode: 'managed',
  type: 'terraform_data',
  name: address.split('.')[1],
  provider_name: 'terraform.io/builtin/terraform',
  change: {
    actions,
    before: values(1),
    after: values(2),
    after_unknown: { id: true },
    before_sensitive: {},
    after_sensitive: {},
    replace_paths: [['input']],
  },
  action_reason: 'replace_because_cannot_update',
});
const PLAN = JSON.stringify(
  {
    format_version: '1.2',
    terraform_version: '1.11.4',
    variables: { v: { value: 'x' } },
    planned_values: { root_module: { resources: [{ address: 'terraform_data.a', values: values(3) }] } },
    resource_drift: [change('terraform_data.d', ['update'])],
    resource_changes: [
      change('terraform_data.a', ['update']),
      change('terraform_data.b', ['delete', 'create']),
      change('terraform_data.c', ['no-op']),
    ],
    output_changes: {
      o: { actions: ['update'], before: 'a', after: 'b', before_sensitive: false, after_sensitive: false },
    },
    prior_state: { format_version: '1.0', values: { root_module: { resources: [] } } },
    configuration: {
      root_module: {
        variables: { v: { sensitive: true } },
        resources: [{ address: 'terraform_data.a', mode: 'managed', expressions: { input: { constant_value: 1 } } }],
        module_calls: { m: { source: './m' } },
      },
    },
    relevant_attributes: [{ resource: 'terraform_data.a', attribute: ['input'] }],
    timestamp: '2026-01-01T00:00:00Z',
    applyable: true,
    complete: true,
    errored: false,
  },
  null,
  2,
);

/** The document in one chunk (the reader's loop between tokens) and in chunks that cut its tokens (its byte-by-byte path). */
function* chunkings(text: string): Generator<() => AsyncIterable<Uint8Array>> {
  const bytes = Buffer.from(text, 'utf8');
  for (const size of [bytes.length, 7, 1])
    yield async function* () {
      for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
    };
}

/** Reads a state and a plan as a run does, through every path of the reader; returns nothing and keeps nothing. */
export async function warmReader(): Promise<void> {
  for (const source of chunkings(STATE)) {
    await summarizeState(source(), { outputs: true });
    await summarizeState(source(), { secrets: new StateSecretScan() });
  }
  for (const source of chunkings(PLAN)) await classifyPlanStream(source(), { onChangedValues: () => {} });
}
