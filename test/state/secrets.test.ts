// The state's secrets, read with its summary: instances with sensitive attributes noted in the one
// read, only those built in a second read of the file, and none when there are none.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { StateSecretScan, stateSecrets } from '../../src/state/secrets.ts';
import { summarizeState } from '../../src/state/summary.ts';

const PROVIDER = 'provider["terraform.io/builtin/terraform"]';
const instance = (input: string, sensitive: unknown[] = []) => ({
  schema_version: 0,
  attributes: { id: `id-${input}`, input: { value: input, type: 'string' }, output: { value: input, type: 'string' } },
  sensitive_attributes: sensitive,
});
const INPUT_PATH = [{ type: 'get_attr', value: 'input' }];
const resource = (name: string, instances: unknown[], extra: Record<string, unknown> = {}) => ({
  ...extra,
  mode: 'managed',
  type: 'terraform_data',
  name,
  provider: PROVIDER,
  instances,
});
const RECORD_HASH = 'c'.repeat(64);
const STATE = {
  version: 4,
  terraform_version: '1.11.4',
  serial: 7,
  lineage: 'lin',
  outputs: {
    plain: { value: 'not-secret', type: 'string' },
    token: { value: { a: 'output-secret-a', b: ['output-secret-b'] }, type: ['object'], sensitive: true },
  },
  resources: [
    resource('plain', [instance('plain-0'), instance('plain-1')]),
    resource('mixed', [instance('mixed-0'), instance('mixed-secret-1', [INPUT_PATH]), instance('mixed-2')]),
    resource('in_module', [instance('module-secret-0', [INPUT_PATH])], { module: 'module.m' }),
    resource('captf_inputs_hash', [instance(RECORD_HASH)]),
    resource('last', [instance('last-0'), instance('last-0b'), instance('last-secret-2', [INPUT_PATH])]),
  ],
};

async function read(document: unknown, withOutputs = false) {
  const dir = await mkdtemp(join(tmpdir(), 'captf-state-secrets-'));
  try {
    const text = JSON.stringify(document, null, 2);
    const file = join(dir, 'state.json');
    await writeFile(file, text);
    const scan = new StateSecretScan();
    const chunks = Array.from({ length: Math.ceil(text.length / 97) }, (_, i) => text.slice(i * 97, i * 97 + 97));
    const summary = await summarizeState(Readable.from(chunks), { secrets: scan, outputs: withOutputs });
    return { summary, secrets: await stateSecrets(file, scan), scan };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('state: its secrets, read with its summary', () => {
  it('finds the sensitive attributes of exactly the instances that have them, and the sensitive outputs', async () => {
    for (const withOutputs of [false, true]) {
      const { summary, secrets, scan } = await read(STATE, withOutputs);
      assert.equal(summary.serial, 7);
      assert.equal(summary.recordedInputsHash, RECORD_HASH);
      assert.deepEqual(
        [...scan.places].map(([r, i]) => [r, [...i]]),
        [
          [1, [1]],
          [2, [0]],
          [4, [2]],
        ],
      );
      assert.deepEqual(secrets.map((s) => s.value).sort(), [
        'last-secret-2',
        'mixed-secret-1',
        'module-secret-0',
        'output-secret-a',
        'output-secret-b',
      ]);
      assert.ok(
        secrets.every((s) => !s.label.includes('secret')),
        'labels never hold a value',
      );
    }
  });

  it("takes the runner's record's sensitive attributes from the summary's own build of it", async () => {
    const state = structuredClone(STATE);
    state.resources[3] = resource('captf_inputs_hash', [instance(RECORD_HASH, [INPUT_PATH])]);
    const { secrets } = await read(state);
    assert.ok(secrets.some((s) => s.value === RECORD_HASH));
  });

  it('reads the file no second time when nothing is sensitive', async () => {
    const scan = new StateSecretScan();
    await summarizeState(
      Readable.from([JSON.stringify({ ...STATE, outputs: {}, resources: STATE.resources.slice(0, 1) })]),
      {
        secrets: scan,
      },
    );
    assert.deepEqual(await stateSecrets('/nonexistent/state.json', scan), []);
  });
});
