// Inputs that silently do nothing: undeclared variables and files named like variables files the runner does not read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { inputsFromFiles } from '../../src/inputs/snapshot.ts';
import { ignoredTfVars, undeclaredVariables, unreadVariablesFiles } from '../../src/inputs/unused.ts';

const files = (entries: Record<string, string>) =>
  new Map(Object.entries(entries).map(([name, text]) => [name, new TextEncoder().encode(text)]));

describe('undeclaredVariables', () => {
  const snapshot = inputsFromFiles(
    files({
      'terraform.tfvars.json': '{"nodecount": 3, "region": "eu", "zz_extra": 1}',
      'sensitive.tfvars.json': '{"Admin-Token": "s3cr3t-value"}',
    }),
  );

  it('names each variable the module does not declare, its file and the fix, never TF_VAR as the fix', () => {
    const notices = undeclaredVariables(snapshot, ['node_count', 'region', 'admin_token']);
    assert.deepEqual(
      notices.map((n) => n.code),
      ['UndeclaredVariable', 'UndeclaredVariable', 'UndeclaredVariable'],
    );
    const [admin, nodes, extra] = notices.map((n) => n.message);
    assert.match(
      admin!,
      /^variable "Admin-Token" in sensitive\.tfvars\.json is not declared by the module.*rename it to "admin_token"/,
    );
    assert.match(
      nodes!,
      /^variable "nodecount" in terraform\.tfvars\.json .*rename it to "node_count", which the module declares/,
    );
    assert.match(extra!, /"zz_extra" .*fix its name, or remove it from the inputs, or declare it in the module/);
    for (const message of notices.map((n) => n.message)) {
      assert.match(message, /advice to set TF_VAR_\S+ does not apply/);
      assert.ok(!message.includes('s3cr3t-value'), 'never a value');
    }
  });

  it('a name a few edits from a declared one (replica for replicas): the nearest is suggested; none when two are as near', () => {
    const typo = inputsFromFiles(files({ 'terraform.tfvars.json': '{"replica": 3, "zone": "a", "flavour": "x"}' }));
    const [flavour, replica, zone] = undeclaredVariables(typo, ['replicas', 'region', 'flavor', 'size', 'type']).map(
      (n) => n.message,
    );
    assert.match(
      replica!,
      /^variable "replica" in terraform\.tfvars\.json .*did you mean "replicas", which the module declares\?/,
    );
    assert.match(flavour!, /did you mean "flavor", which the module declares\?/);
    assert.match(
      zone!,
      /fix its name, or remove it from the inputs/,
      'size and type are both 3 edits from zone: no guess',
    );
  });

  it('nothing when the module declares every one', () => {
    assert.deepEqual(undeclaredVariables(snapshot, ['nodecount', 'region', 'zz_extra', 'Admin-Token']), []);
  });
});

describe('unreadVariablesFiles', () => {
  it('names the file the runner reads instead', () => {
    const names = [
      'terraform.tfvars',
      'terraform.tfvars.yaml',
      'terraform.tfvars.yml',
      'sensitive.tfvars',
      'sensitive.tfvars.yml',
      'prod.auto.tfvars',
      'prod.auto.tfvars.json',
      'prod.tfvars.json',
      'prod.tfvars',
      'sensitive-prod.tfvars.json',
      'ca.pem',
      'tfvars.json',
      'terraform.tfvars.json.bak',
      'terraform.tfvars.json',
      'sensitive.tfvars.json',
    ];
    const notices = unreadVariablesFiles(names);
    const named = new Map(notices.map((n) => [/"([^"]+)"/.exec(n.message)![1], n.message]));
    assert.deepEqual(
      [...named.keys()],
      [
        'prod.auto.tfvars',
        'prod.auto.tfvars.json',
        'prod.tfvars',
        'prod.tfvars.json',
        'sensitive-prod.tfvars.json',
        'sensitive.tfvars',
        'sensitive.tfvars.yml',
        'terraform.tfvars',
        'terraform.tfvars.yaml',
        'terraform.tfvars.yml',
      ],
    );
    assert.match(named.get('prod.tfvars.json')!, /put its variables in terraform\.tfvars\.json/);
    assert.match(named.get('sensitive-prod.tfvars.json')!, /put its variables in sensitive\.tfvars\.json/);
    assert.ok(notices.every((n) => n.code === 'VariablesFileNotRead'));
    assert.match(named.get('sensitive.tfvars')!, /put its variables in sensitive\.tfvars\.json/);
    assert.match(
      named.get('terraform.tfvars.yaml')!,
      /module sees it only as captf-inputs\/terraform\.tfvars\.yaml\): put its variables in terraform\.tfvars\.json/,
    );
    assert.match(named.get('prod.auto.tfvars.json')!, /put its variables in terraform\.tfvars\.json/);
  });
});

describe('ignoredTfVars', () => {
  it('names each TF_VAR_ in the environment and where its value belongs, never the value', () => {
    const notices = ignoredTfVars({
      TF_VAR_replicas: '3',
      TF_VAR_admin_token: 'hunter2-secret',
      TF_VAR_: 'x',
      PATH: '/bin',
      TF_LOG: 'trace',
    });
    assert.deepEqual(
      notices.map((n) => n.code),
      ['TfVarIgnored', 'TfVarIgnored'],
    );
    assert.match(
      notices[0]!.message,
      /^TF_VAR_admin_token is set in the runner's environment and is not passed to terraform .*: put "admin_token" in terraform\.tfvars\.json of the inputs \(sensitive\.tfvars\.json for a secret\)$/,
    );
    assert.match(notices[1]!.message, /^TF_VAR_replicas /);
    assert.ok(!JSON.stringify(notices).includes('hunter2'));
  });
});
