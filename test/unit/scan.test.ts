import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { scanHcl, scanJson } from '../../src/workspace/scan.ts';
import { inputsHashConfig, missedDeclarations } from '../../src/workspace/workspace.ts';

describe('workspace: scanning top-level blocks', () => {
  it('finds resources, module calls, variables and the backend, not what nests or hides in strings', () => {
    const scan = scanHcl(`
# resource "terraform_data" "in_comment" {}
/* module "in_block_comment" {} */
variable "name" { type = string }
variable "token" {
  type      = string
  sensitive = true
}
resource "terraform_data" "a" {
  input = "resource \\"x\\" \\"y\\" { } \${ {a = "}"}["a"] }"
  provisioner "local-exec" {
    command = <<-EOT
      resource "terraform_data" "in_heredoc" {}
    EOT
  }
}
resource terraform_data b {
  count = 2
}
module "net" {
  source = "./net"
}
data "terraform_remote_state" "x" { backend = "local" }
locals { m = { resource = 1 } }
terraform {
  required_version = ">= 1.5"
  backend "pg" {}
}
`);
    assert.deepEqual(scan.resources, ['terraform_data.a', 'terraform_data.b']);
    assert.deepEqual(scan.moduleCalls, ['module.net']);
    assert.deepEqual(scan.variables, ['name', 'token']);
    assert.deepEqual(scan.sensitiveVariables, ['token']);
    assert.equal(scan.backend, 'pg');
  });

  it('reads the JSON syntax', () => {
    const scan = scanJson(JSON.stringify({ resource: { terraform_data: { a: {}, b: {} } }, module: { m: { source: './m' } }, variable: { v: {} }, terraform: { backend: { s3: {} } } }));
    assert.deepEqual(scan.resources, ['terraform_data.a', 'terraform_data.b']);
    assert.deepEqual(scan.moduleCalls, ['module.m']);
    assert.equal(scan.backend, 's3');
  });

  it('the injected resource depends on every resource and module call', () => {
    const text = inputsHashConfig({ resources: ['terraform_data.b', 'terraform_data.a'], moduleCalls: ['module.m'], variables: [], sensitiveVariables: [], backend: undefined });
    assert.match(text, /depends_on = \[module\.m, terraform_data\.a, terraform_data\.b\]/);
    assert.match(text, /input\s+= var\.captf_inputs_hash/);
  });
});

describe('workspace: what the scan must not miss', () => {
  it('treats $${ and %%{ as literal text', () => {
    const scan = scanHcl('resource "terraform_data" "a" {\n  input = "$${literal} and %%{ also }"\n}\nresource "terraform_data" "b" {}\n');
    assert.deepEqual(scan.resources, ['terraform_data.a', 'terraform_data.b']);
  });

  it('names what terraform declares and the scan did not find', () => {
    const scan = { resources: ['terraform_data.a'], moduleCalls: ['module.m'], variables: [], sensitiveVariables: [], backend: undefined };
    assert.deepEqual(missedDeclarations(['terraform_data.a', 'module.m', 'terraform_data.captf_inputs_hash'], scan), []);
    assert.deepEqual(missedDeclarations(['terraform_data.a', 'terraform_data.hidden', 'module.n'], scan), ['terraform_data.hidden', 'module.n']);
  });
});

describe('plan: both readers report the root declarations', () => {
  it('streams configuration.root_module resources (managed) and module calls', async () => {
    const { classifyPlanStream } = await import('../../src/plan/stream.ts');
    const { classifyPlan } = await import('../../src/plan/classify.ts');
    const doc = {
      format_version: '1.2',
      configuration: { root_module: { resources: [{ address: 'terraform_data.a', mode: 'managed' }, { address: 'data.terraform_remote_state.s', mode: 'data' }], module_calls: { net: { source: './net' } } } },
    };
    const streamed: string[] = [];
    await classifyPlanStream(Readable.from([Buffer.from(JSON.stringify(doc))]), { onRootDeclaration: (a) => streamed.push(a) });
    const referenced: string[] = [];
    classifyPlan(doc, { onRootDeclaration: (a) => referenced.push(a) });
    assert.deepEqual(streamed, ['terraform_data.a', 'module.net']);
    assert.deepEqual(referenced, streamed);
  });
});
