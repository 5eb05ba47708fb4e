import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  canonicalJson,
  computeHashes,
  inputsFromFiles,
  secretValues,
  SENSITIVE_TFVARS_FILE,
  terraformVarFiles,
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
    [
      { [TFVARS_FILE]: '{"a": 1,\n"a": 2}' },
      /^\/in\/terraform\.tfvars\.json is not valid JSON: line 2 column 1: duplicate key "a" .*; fix it so the file is one JSON object/,
    ],
    [{ [TFVARS_FILE]: '[]' }, /^\/in\/terraform\.tfvars\.json holds an array at the top, not an object; fix it/],
    [{ [SENSITIVE_TFVARS_FILE]: 'null' }, /^\/in\/sensitive\.tfvars\.json holds null at the top/],
    [{ [SENSITIVE_TFVARS_FILE]: '"s"' }, /holds a string at the top/],
    [
      { [TFVARS_FILE]: '{"pw": 1}', [SENSITIVE_TFVARS_FILE]: '{"pw": 2}' },
      /^variable "pw" is set in both \/in\/terraform\.tfvars\.json and \/in\/sensitive\.tfvars\.json: keep it in/,
    ],
    [{ 'my file': '' }, /^input "my file" in \/in is not a valid Secret or ConfigMap key: rename it/],
    [{ '..data': '' }, /not starting with "\.\."/],
    [{ ['a'.repeat(254)]: '' }, /at most 253/],
  ];
  for (const [entries, message] of cases) {
    assert.throws(() => inputsFromFiles(files(entries), '/in'), {
      name: 'RunnerError',
      kind: 'usage',
      reason: 'InputsInvalid',
      message,
    });
  }
});

test('a negative zero is refused: the file, the JSON path and the position named', () => {
  assert.throws(
    () => inputsFromFiles(files({ [TFVARS_FILE]: '{"nodes": [{"gen": 1}, {"gen": 2},\n  {"gen": -0.0}]}' }), '/in'),
    {
      name: 'RunnerError',
      kind: 'usage',
      reason: 'InputsInvalid',
      message:
        '/in/terraform.tfvars.json: $.nodes[2].gen is a negative zero (-0.0) at line 2 column 11: ' +
        'terraform keeps its sign, so it would render differently from 0; write 0',
      detail: { file: TFVARS_FILE, line: 2, column: 11, path: '$.nodes[2].gen' },
    },
  );
  assert.throws(() => inputsFromFiles(files({ [TFVARS_FILE]: '{"a b": {"\\u00e9": [-0]}}' })), {
    message: /^terraform\.tfvars\.json: \$\["a b"\]\["é"\]\[0\] is a negative zero \(-0\) at line 1 column 21:/,
  });
});

test('in sensitive.tfvars.json a negative zero names the variable only, never a key inside it or a value', () => {
  const sensitive = '{"db": {"user": "admin-5ecret", "key-5ecret": {"port": -0e5}}}';
  assert.throws(
    () => inputsFromFiles(files({ [SENSITIVE_TFVARS_FILE]: sensitive }), '/in'),
    (error: unknown) => {
      const { message, detail } = error as { message: string; detail: unknown };
      assert.equal(
        message,
        '/in/sensitive.tfvars.json: a number inside $.db is a negative zero at line 1 column 56 ' +
          '(keys inside a sensitive variable are not named): terraform keeps its sign, so it would render differently from 0; write 0',
      );
      assert.deepEqual(detail, { file: SENSITIVE_TFVARS_FILE, line: 1, column: 56, path: '$.db' });
      assert.doesNotMatch(JSON.stringify(detail) + message, /5ecret|port|-0e5/);
      return true;
    },
  );
  assert.throws(() => inputsFromFiles(files({ [SENSITIVE_TFVARS_FILE]: '{"gen": -0}' })), {
    message: /^sensitive\.tfvars\.json: \$\.gen is a negative zero at line 1 column 9: terraform keeps its sign/,
  });
});

test('terraform reads each variables file in canonical JSON, one variable per line', () => {
  const snapshot = inputsFromFiles(
    files({
      [TFVARS_FILE]: '{ "region" : "eu-\\u0077est-1", "nodes": [1.0, 10e-1], "big": 12345678901234567890.10 }',
      [SENSITIVE_TFVARS_FILE]: '{"token": "t\\/k", "api": {"z": 1, "a": "\\u00e9"}}',
      'user-data': 'x',
    }),
  );
  assert.deepEqual(terraformVarFiles(snapshot), [
    { name: TFVARS_FILE, content: '{\n"big":12345678901234567890.1,\n"nodes":[1,1],\n"region":"eu-west-1"\n}\n' },
    { name: SENSITIVE_TFVARS_FILE, content: '{\n"api":{"a":"é","z":1},\n"token":"t/k"\n}\n' },
  ]);
  assert.deepEqual(terraformVarFiles(inputsFromFiles(files({ [TFVARS_FILE]: ' {} ' }))), [
    { name: TFVARS_FILE, content: '{}\n' },
  ]);
  assert.deepEqual(terraformVarFiles(inputsFromFiles(files({}))), []);
});

test('a JSON error carries the file and position as detail', () => {
  assert.throws(() => inputsFromFiles(files({ [TFVARS_FILE]: '{\n  "a" 1}' })), {
    message: /^terraform\.tfvars\.json is not valid JSON: line 2 column 7/,
    detail: { file: TFVARS_FILE, line: 2, column: 7 },
  });
});

test('secret values: every non-empty string and every object key of 4+ characters inside a sensitive variable, longest first', () => {
  const snapshot = inputsFromFiles(
    files({
      [TFVARS_FILE]: '{"region": "eu-west-1"}',
      [SENSITIVE_TFVARS_FILE]:
        '{"password": "hunter2", "creds": {"user": "admin", "keys": ["k-1", "k-10", "", "k-1"], "port": 5432, "on": true}}',
    }),
  );
  assert.deepEqual(
    secretValues(snapshot).map(({ value }) => value),
    ['hunter2', 'admin', 'k-10', 'keys', 'port', 'user', 'k-1'],
  );
  // each names the variable it is in (a warning names the variable, never the value)
  assert.deepEqual(
    secretValues(snapshot).map(({ variable }) => variable),
    ['password', 'creds', 'creds', 'creds', 'creds', 'creds', 'creds'],
  );
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
  const base = inputsFromFiles(files({ [TFVARS_FILE]: '{"a": 1}', f: 'x' }));
  const hash = (image: string, tfvars: string, file: string) => {
    const snapshot = inputsFromFiles(files({ [TFVARS_FILE]: tfvars, f: file }));
    return computeHashes({ image, kind: 'cluster', variables: snapshot.variables, files: snapshot.files }).inputsHash;
  };
  const reference = computeHashes({
    image: 'img:1',
    kind: 'cluster',
    variables: base.variables,
    files: base.files,
  }).inputsHash;
  assert.equal(hash('img:1', '{"a": 1.0}', 'x'), reference);
  assert.notEqual(hash('img:2', '{"a": 1}', 'x'), reference);
  assert.notEqual(hash('img:1', '{"a": 2}', 'x'), reference);
  assert.notEqual(hash('img:1', '{"a": "1"}', 'x'), reference);
  assert.notEqual(hash('img:1', '{"a": 1}', 'x '), reference);
});
