// Inputs that silently do nothing are named (result.warnings, result.notices, the summary): a
// variable the module does not declare, a file named like a variables file the runner does not
// read. Real terraform: the apply runs as before, with the module's default.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { explain, scenario } from './runner.ts';

const IMAGE = 'registry.example/captf-module:1.0.0';
const MODULE = {
  'main.tf': 'variable "node_count" {\n  type    = number\n  default = 1\n}\n\nresource "terraform_data" "nodes" {\n  input = var.node_count\n}\n',
};

describe('inputs that do nothing', () => {
  it('a typo of a declared variable and a terraform.tfvars: named with the fix, the default applied', async (t) => {
    const s = await scenario(t, MODULE, {});
    await s.setInputs({ 'terraform.tfvars.json': { nodecount: 3 }, 'terraform.tfvars': 'node_count = 5\n', 'prod.auto.tfvars.json': { node_count: 7 } });
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const notices = run.result!.notices!;
    assert.deepEqual(notices.map((n) => n.code).sort(), ['UndeclaredVariable', 'VariablesFileNotRead', 'VariablesFileNotRead']);
    const undeclared = notices.find((n) => n.code === 'UndeclaredVariable')!;
    assert.match(undeclared.message, /variable "nodecount" in terraform\.tfvars\.json is not declared by the module.*rename it to "node_count"/);
    for (const notice of notices) {
      assert.ok(run.result!.warnings.includes(notice.message));
      assert.ok(run.stdout.includes(`warning: ${notice.message}`), run.stdout);
    }
    assert.ok(notices.some((n) => n.message.startsWith('inputs file "terraform.tfvars" is not read as variables')));
    assert.ok(notices.some((n) => n.message.startsWith('inputs file "prod.auto.tfvars.json" is not read as variables')));
    const state = await s.readState();
    const nodes = state.resources.find((r) => r.type === 'terraform_data' && r.name === 'nodes')!;
    assert.deepEqual(nodes.instances[0]!.attributes.input, { value: 1, type: 'number' }, 'neither value reached terraform: the default');
  });

  it('inputs the module declares: no notice', async (t) => {
    const s = await scenario(t, MODULE, { node_count: 2 });
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.deepEqual(run.result!.notices, []);
  });
});
