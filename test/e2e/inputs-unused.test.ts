// Inputs that silently do nothing are named (result.warnings, result.notices, the summary): a
// variable the module does not declare, a file named like a variables file the runner does not
// read. Real terraform: the apply runs as before, with the module's default.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { explain, scenario } from '../support/runner.ts';

const IMAGE = 'registry.example/captf-module:1.0.0';
const MODULE = {
  'main.tf':
    'variable "node_count" {\n  type    = number\n  default = 1\n}\n\nresource "terraform_data" "nodes" {\n  input = var.node_count\n}\n',
};

describe('inputs that do nothing', () => {
  it('a typo of a declared variable and a terraform.tfvars: named with the fix, the default applied', async (t) => {
    const s = await scenario(t, MODULE, {});
    await s.setInputs({
      'terraform.tfvars.json': { nodecount: 3 },
      'terraform.tfvars': 'node_count = 5\n',
      'prod.auto.tfvars.json': { node_count: 7 },
      'prod.tfvars.json': { node_count: 9 },
    });
    const run = await s.run('apply', ['--image', IMAGE], { TF_VAR_node_count: '11' });
    assert.equal(run.exitCode, 0, explain(run));
    const notices = run.result!.notices!;
    assert.deepEqual(notices.map((n) => n.code).sort(), [
      'TfVarIgnored',
      'UndeclaredVariable',
      'VariablesFileNotRead',
      'VariablesFileNotRead',
      'VariablesFileNotRead',
    ]);
    assert.ok(notices.some((n) => n.message.startsWith('inputs file "prod.tfvars.json" is not read as variables')));
    assert.ok(
      notices.some((n) =>
        n.message.startsWith("TF_VAR_node_count is set in the runner's environment and is not passed to terraform"),
      ),
    );
    const undeclared = notices.find((n) => n.code === 'UndeclaredVariable')!;
    assert.match(
      undeclared.message,
      /variable "nodecount" in terraform\.tfvars\.json is not declared by the module.*rename it to "node_count"/,
    );
    for (const notice of notices) {
      assert.ok(run.result!.warnings.includes(notice.message));
      assert.ok(run.stdout.includes(`warning: ${notice.message}`), run.stdout);
    }
    assert.ok(notices.some((n) => n.message.startsWith('inputs file "terraform.tfvars" is not read as variables')));
    assert.ok(
      notices.some((n) => n.message.startsWith('inputs file "prod.auto.tfvars.json" is not read as variables')),
    );
    const state = await s.readState();
    const nodes = state.resources.find((r) => r.type === 'terraform_data' && r.name === 'nodes')!;
    assert.deepEqual(
      nodes.instances[0]!.attributes.input,
      { value: 1, type: 'number' },
      'neither value reached terraform: the default',
    );
  });

  it('a required variable set only as TF_VAR_ in the environment: exit 2, the notice says where its value belongs, and no advice to use -var', async (t) => {
    const s = await scenario(
      t,
      {
        'main.tf':
          'variable "replicas" {\n  type = number\n}\n\nresource "terraform_data" "nodes" {\n  input = var.replicas\n}\n',
      },
      {},
    );
    const run = await s.run('apply', ['--image', IMAGE], { TF_VAR_replicas: '3' });
    assert.equal(run.exitCode, 2, explain(run));
    assert.equal(run.result!.reason, 'InputsInvalid');
    assert.deepEqual(
      run.result!.notices!.map((n) => n.code),
      ['TfVarIgnored'],
    );
    assert.match(
      run.stdout,
      /^warning: TF_VAR_replicas is set in the runner's environment and is not passed to terraform .*put "replicas" in terraform\.tfvars\.json of the inputs/m,
    );
    assert.doesNotMatch(run.result!.message, /-var/, "terraform's advice to use -var does not apply");
    assert.match(
      run.result!.message,
      /No value for required variable: The root module input variable "replicas" is not set, and has no default value\. Give the variable a value/,
    );
  });

  it('-var and -var-file on the command line point to terraform.tfvars.json', async (t) => {
    const s = await scenario(t, MODULE, {});
    for (const args of [['-var', 'node_count=3'], ['-var-file=prod.tfvars'], ['--var-file', 'prod.tfvars']]) {
      const run = await s.run('apply', ['--image', IMAGE, ...args]);
      assert.equal(run.exitCode, 2, explain(run));
      assert.equal(run.result!.reason, 'UsageInvalid');
      assert.match(
        run.result!.message,
        /takes no -var or -var-file: put the variables in terraform\.tfvars\.json of the --inputs dir \(sensitive\.tfvars\.json for a secret\)/,
        args.join(' '),
      );
    }
  });

  it('inputs the module declares: no notice', async (t) => {
    const s = await scenario(t, MODULE, { node_count: 2 });
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.deepEqual(run.result!.notices, []);
  });
});
