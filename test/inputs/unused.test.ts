// Inputs that silently do nothing: undeclared variables and files named like variables files the runner does not read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { inputsFromFiles } from '../../src/inputs/snapshot.ts';
import { undeclaredVariables, unreadVariablesFiles } from '../../src/inputs/unused.ts';

const files = (entries: Record<string, string>) => new Map(Object.entries(entries).map(([name, text]) => [name, new TextEncoder().encode(text)]));

describe('undeclaredVariables', () => {
  const snapshot = inputsFromFiles(files({ 'terraform.tfvars.json': '{"nodecount": 3, "region": "eu", "zz_extra": 1}', 'sensitive.tfvars.json': '{"Admin-Token": "s3cr3t-value"}' }));

  it('names each variable the module does not declare, its file and the fix, never TF_VAR as the fix', () => {
    const notices = undeclaredVariables(snapshot, ['node_count', 'region', 'admin_token']);
    assert.deepEqual(notices.map((n) => n.code), ['UndeclaredVariable', 'UndeclaredVariable', 'UndeclaredVariable']);
    const [admin, nodes, extra] = notices.map((n) => n.message);
    assert.match(admin!, /^variable "Admin-Token" in sensitive\.tfvars\.json is not declared by the module.*rename it to "admin_token"/);
    assert.match(nodes!, /^variable "nodecount" in terraform\.tfvars\.json .*rename it to "node_count", which the module declares/);
    assert.match(extra!, /"zz_extra" .*fix its name, or remove it from the inputs, or declare it in the module/);
    for (const message of notices.map((n) => n.message)) {
      assert.match(message, /advice to set TF_VAR_\S+ does not apply/);
      assert.ok(!message.includes('s3cr3t-value'), 'never a value');
    }
  });

  it('nothing when the module declares every one', () => {
    assert.deepEqual(undeclaredVariables(snapshot, ['nodecount', 'region', 'zz_extra', 'Admin-Token']), []);
  });
});

describe('unreadVariablesFiles', () => {
  it('names the file the runner reads instead', () => {
    const names = ['terraform.tfvars', 'terraform.tfvars.yaml', 'terraform.tfvars.yml', 'sensitive.tfvars', 'sensitive.tfvars.yml', 'prod.auto.tfvars', 'prod.auto.tfvars.json', 'ca.pem', 'tfvars.json', 'terraform.tfvars.json.bak'];
    const notices = unreadVariablesFiles(names);
    const named = new Map(notices.map((n) => [/"([^"]+)"/.exec(n.message)![1], n.message]));
    assert.deepEqual([...named.keys()], ['prod.auto.tfvars', 'prod.auto.tfvars.json', 'sensitive.tfvars', 'sensitive.tfvars.yml', 'terraform.tfvars', 'terraform.tfvars.yaml', 'terraform.tfvars.yml']);
    assert.ok(notices.every((n) => n.code === 'VariablesFileNotRead'));
    assert.match(named.get('sensitive.tfvars')!, /put its variables in sensitive\.tfvars\.json/);
    assert.match(named.get('terraform.tfvars.yaml')!, /module sees it only as captf-inputs\/terraform\.tfvars\.yaml\): put its variables in terraform\.tfvars\.json/);
    assert.match(named.get('prod.auto.tfvars.json')!, /put its variables in terraform\.tfvars\.json/);
  });
});
