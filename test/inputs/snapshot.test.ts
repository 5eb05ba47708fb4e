import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  canonicalJson,
  computeHashes,
  inputsFromFiles,
  secretValues,
  SENSITIVE_TFVARS_FILE,
  TFVARS_FILE,
} from '../../src/inputs/index.ts';

const files = (entries: Record<string, string>) =>
  new Map(Object.entries(entries).map(([name, text]) => [name, Buffer.from(text, 'utf8')]));

test('keeps the tfvars bytes as written and the other files by name, without reserved names', () => {
  const tfvars = '{ "big": 12345678901234567890.10 }';
  const snapshot = inputsFromFiles(
    files({ [TFVARS_FILE]: tfvars, 'user-data': 'x', 'captf.io-record': 'r', 'captf-pending': 'p' }),
  );
  assert.equal(Buffer.from(snapshot.tfvarsJson!).toString(), tfvars);
  assert.equal(snapshot.sensitiveTfvarsJson, undefined);
  assert.equal(canonicalJson(snapshot.variables), '{"big":12345678901234567890.1}');
  assert.deepEqual([...snapshot.files.keys()], ['user-data']);
  assert.deepEqual(snapshot.sensitiveVariableNames, new Set());
});

test('merges sensitive.tfvars.json and remembers which variables are secret', () => {
  const snapshot = inputsFromFiles(
    files({ [TFVARS_FILE]: '{"region": "eu"}', [SENSITIVE_TFVARS_FILE]: '{"password": "p", "key": {"id": 1}}' }),
  );
  assert.equal(canonicalJson(snapshot.variables), '{"key":{"id":1},"password":"p","region":"eu"}');
  assert.deepEqual(snapshot.sensitiveVariableNames, new Set(['password', 'key']));
  assert.equal(Buffer.from(snapshot.sensitiveTfvarsJson!).toString(), '{"password": "p", "key": {"id": 1}}');
  assert.equal(snapshot.files.size, 0);
});

test('bad inputs are usage errors that name the file and say how to fix it', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ [TFVARS_FILE]: '{"a": 1,\n"a": 2}' }, /^\/in\/terraform\.tfvars\.json is not valid JSON: line 2 column 1: duplicate key "a" .*; fix it so the file is one JSON object/],
    [{ [TFVARS_FILE]: '[]' }, /^\/in\/terraform\.tfvars\.json holds an array at the top, not an object; fix it/],
    [{ [SENSITIVE_TFVARS_FILE]: 'null' }, /^\/in\/sensitive\.tfvars\.json holds null at the top/],
    [{ [SENSITIVE_TFVARS_FILE]: '"s"' }, /holds a string at the top/],
    [{ [TFVARS_FILE]: '{"pw": 1}', [SENSITIVE_TFVARS_FILE]: '{"pw": 2}' }, /^variable "pw" is set in both \/in\/terraform\.tfvars\.json and \/in\/sensitive\.tfvars\.json: keep it in/],
    [{ 'my file': '' }, /^input "my file" in \/in is not a valid Secret or ConfigMap key: rename it/],
    [{ '..data': '' }, /not starting with "\.\."/],
    [{ ['a'.repeat(254)]: '' }, /at most 253/],
  ];
  for (const [entries, message] of cases) {
    assert.throws(() => inputsFromFiles(files(entries), '/in'), { name: 'RunnerError', kind: 'usage', reason: 'InputsInvalid', message });
  }
});

test('a JSON error carries the file and position as detail', () => {
  assert.throws(() => inputsFromFiles(files({ [TFVARS_FILE]: '{\n  "a" 1}' })), {
    message: /^terraform\.tfvars\.json is not valid JSON: line 2 column 7/,
    detail: { file: TFVARS_FILE, line: 2, column: 7 },
  });
});

test('secret values: every non-empty string inside a sensitive variable, longest first', () => {
  const snapshot = inputsFromFiles(
    files({
      [TFVARS_FILE]: '{"region": "eu-west-1"}',
      [SENSITIVE_TFVARS_FILE]: '{"password": "hunter2", "creds": {"user": "admin", "keys": ["k-1", "k-10", "", "k-1"], "port": 5432, "on": true}}',
    }),
  );
  assert.deepEqual(secretValues(snapshot), ['hunter2', 'admin', 'k-10', 'k-1']);
});

test('the approval hash leaves out bootstrap_data for a pool only', () => {
  const withBootstrap = inputsFromFiles(files({ [TFVARS_FILE]: '{"replicas": 2, "bootstrap_data": "a"}' }));
  const rotated = inputsFromFiles(files({ [TFVARS_FILE]: '{"replicas": 2, "bootstrap_data": "b"}' }));
  const hash = (snapshot: typeof rotated, kind: 'cluster' | 'machine' | 'pool') =>
    computeHashes({ image: 'img:1', kind, variables: snapshot.variables, files: snapshot.files });

  const pool = hash(withBootstrap, 'pool');
  assert.match(pool.inputsHash, /^[0-9a-f]{64}$/);
  assert.notEqual(pool.approvalHash, pool.inputsHash);
  assert.equal(hash(rotated, 'pool').approvalHash, pool.approvalHash);
  assert.notEqual(hash(rotated, 'pool').inputsHash, pool.inputsHash);
  for (const kind of ['cluster', 'machine'] as const) {
    assert.deepEqual(hash(withBootstrap, kind), { inputsHash: pool.inputsHash, approvalHash: pool.inputsHash });
  }
});

test('the inputs hash changes with the image, any variable and any file byte', () => {
  const base = inputsFromFiles(files({ [TFVARS_FILE]: '{"a": 1}', 'f': 'x' }));
  const hash = (image: string, tfvars: string, file: string) => {
    const snapshot = inputsFromFiles(files({ [TFVARS_FILE]: tfvars, 'f': file }));
    return computeHashes({ image, kind: 'cluster', variables: snapshot.variables, files: snapshot.files }).inputsHash;
  };
  const reference = computeHashes({ image: 'img:1', kind: 'cluster', variables: base.variables, files: base.files }).inputsHash;
  assert.equal(hash('img:1', '{"a": 1.0}', 'x'), reference);
  assert.notEqual(hash('img:2', '{"a": 1}', 'x'), reference);
  assert.notEqual(hash('img:1', '{"a": 2}', 'x'), reference);
  assert.notEqual(hash('img:1', '{"a": "1"}', 'x'), reference);
  assert.notEqual(hash('img:1', '{"a": 1}', 'x '), reference);
});
