import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunnerError } from '../../src/errors.ts';
import { emptyScan } from '../../src/workspace/scan.ts';
import { scanHcl } from '../../src/workspace/scan-hcl.ts';
import { scanJson } from '../../src/workspace/scan-tf-json.ts';
import { skippedConfigFile } from '../../src/workspace/terraform-files.ts';
import {
  inputsHashConfig,
  missedDeclarations,
  prepareWorkspace,
  skippedFilesProblem,
} from '../../src/workspace/workspace.ts';
import { scanConfigFiles, scanModule } from '../../src/workspace/config-files.ts';

describe('workspace: scanning top-level blocks', () => {
  it('lists every backend and cloud block with its file and line, in HCL and JSON', () => {
    const hcl = scanHcl(
      'terraform {\n  required_version = ">= 1.5"\n  backend "local" {\n    path = "x"\n  }\n}\n\nterraform {\n  cloud {}\n}\n',
      emptyScan(),
      'zz_override.tf',
    );
    assert.deepEqual(hcl.backendBlocks, [
      { file: 'zz_override.tf', line: 3, type: 'local', path: 'x' },
      { file: 'zz_override.tf', line: 9, type: 'cloud' },
    ]);
    assert.equal(hcl.backend, 'local');
    const json = scanJson(
      '{\n  "terraform": [\n    {"backend": {\n      "s3": {}}},\n    {"cloud": {}}\n  ]\n}\n',
      emptyScan(),
      'override.tf.json',
    );
    assert.deepEqual(json.backendBlocks, [
      { file: 'override.tf.json', line: 4, type: 's3' },
      { file: 'override.tf.json', line: 5, type: 'cloud' },
    ]);
  });

  it("reads a local backend's path when it is a plain string (where contract check says the state would be)", () => {
    const path = (text: string) => scanHcl(text).backendBlocks[0]!.path;
    assert.equal(
      path('terraform {\n  backend "local" {\n    workspace_dir = "w"\n    path = "sub/s.tfstate" # kept\n  }\n}\n'),
      'sub/s.tfstate',
    );
    assert.equal(path('terraform {\n  backend "local" {\n    path = "a\\"b"\n  }\n}\n'), 'a"b');
    assert.equal(path('terraform {\n  backend "local" {}\n}\n'), undefined);
    assert.equal(
      path('terraform {\n  backend "local" {\n    path = "${var.x}"\n  }\n}\n'),
      undefined,
      'not a literal: terraform refuses it anyway',
    );
    assert.equal(
      path('terraform {\n  backend "pg" {\n    path = "x"\n  }\n}\n'),
      undefined,
      'only a local backend has a path',
    );
    assert.equal(
      scanJson('{"terraform": {"backend": {"local": {"path": "/var/s.tfstate"}}}}').backendBlocks[0]!.path,
      '/var/s.tfstate',
    );
  });

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

  it('finds the variables declared ephemeral (terraform 1.10+), in both syntaxes', () => {
    const hcl = scanHcl(
      'variable "token" {\n  type      = string\n  ephemeral = true\n}\nvariable "name" {\n  ephemeral = false\n}\n',
    );
    assert.deepEqual(
      [hcl.variables, hcl.ephemeralVariables, hcl.sensitiveVariables],
      [['token', 'name'], ['token'], []],
    );
    const json = scanJson(
      JSON.stringify({ variable: { token: { ephemeral: true, sensitive: true }, name: { ephemeral: 'true' } } }),
    );
    assert.deepEqual(
      [json.variables, json.ephemeralVariables, json.sensitiveVariables],
      [['token', 'name'], ['token'], ['token']],
    );
  });

  it('reads the JSON syntax', () => {
    const scan = scanJson(
      JSON.stringify({
        resource: { terraform_data: { a: {}, b: {} } },
        module: { m: { source: './m' } },
        variable: { v: {} },
        terraform: { backend: { s3: {} } },
      }),
    );
    assert.deepEqual(scan.resources, ['terraform_data.a', 'terraform_data.b']);
    assert.deepEqual(scan.moduleCalls, ['module.m']);
    assert.equal(scan.backend, 's3');
  });

  it('the injected resource depends on every resource and module call', () => {
    const text = inputsHashConfig({
      ...emptyScan(),
      resources: ['terraform_data.b', 'terraform_data.a'],
      moduleCalls: ['module.m'],
    });
    assert.match(text, /depends_on = \[module\.m, terraform_data\.a, terraform_data\.b\]/);
    assert.match(text, /input\s+= var\.captf_inputs_hash/);
  });
});

describe('workspace: what the scan must not miss', () => {
  it('treats $${ and %%{ as literal text', () => {
    const scan = scanHcl(
      'resource "terraform_data" "a" {\n  input = "$${literal} and %%{ also }"\n}\nresource "terraform_data" "b" {}\n',
    );
    assert.deepEqual(scan.resources, ['terraform_data.a', 'terraform_data.b']);
  });

  it('names what terraform declares and the scan did not find', () => {
    const scan = { ...emptyScan(), resources: ['terraform_data.a'], moduleCalls: ['module.m'] };
    assert.deepEqual(
      missedDeclarations(['terraform_data.a', 'module.m', 'terraform_data.captf_inputs_hash'], scan),
      [],
    );
    assert.deepEqual(missedDeclarations(['terraform_data.a', 'terraform_data.hidden', 'module.n'], scan), [
      'terraform_data.hidden',
      'module.n',
    ]);
  });
});

describe('workspace: names the runner reserves', () => {
  const R = 'terraform_data.captf_inputs_hash';
  const found = (scan: { reserved: { line: number; what: string }[] }) =>
    scan.reserved.map(({ line, what }) => [line, what]);

  it('moved, removed and import blocks naming the record, with or without an index, at the line of the attribute', () => {
    const scan = scanHcl(
      [
        'moved {', //                                                    1
        '  from = terraform_data.cluster # the object that would be replaced',
        '  to   = terraform_data.captf_inputs_hash', //                  3
        '}',
        'moved {',
        '  from = terraform_data . captf_inputs_hash /* spaced */ [ 0 ]', // 6
        '  to   = terraform_data.other',
        '}',
        'removed { from = resource.terraform_data.captf_inputs_hash }', // 9
        'import {',
        '  for_each = toset(["a"])',
        '  to       = terraform_data.captf_inputs_hash[each.key]', //    12
        '  id       = "x"',
        '}',
        'import {',
        '  to = terraform_data.captf_inputs_hash["a"]', //              16
        '  id = "y"',
        '}',
      ].join('\n'),
      undefined,
      'moves.tf',
    );
    assert.deepEqual(found(scan), [
      [3, `moved { to = ${R} }`],
      [6, `moved { from = ${R}[0] }`],
      [9, `removed { from = resource.${R} }`],
      [12, `import { to = ${R}[each.key] }`],
      [16, `import { to = ${R}["a"] }`],
    ]);
    assert.ok(scan.reserved.every((use) => use.file === 'moves.tf'));
  });

  it('the resource and the variable, in both syntaxes', () => {
    const hcl = scanHcl('variable "captf_inputs_hash" {}\n\nresource terraform_data captf_inputs_hash {\n}\n');
    assert.deepEqual(found(hcl), [
      [1, 'variable "captf_inputs_hash"'],
      [3, `resource "terraform_data" "captf_inputs_hash"`],
    ]);
    const json = scanJson(
      '{\n  "variable": {"captf_inputs_hash": {}},\n  "resource": [{"terraform_data": [{\n    "captf_inputs_hash": {}}]}]\n}\n',
    );
    assert.deepEqual(found(json), [
      [2, 'variable "captf_inputs_hash"'],
      [4, `resource "terraform_data" "captf_inputs_hash"`],
    ]);
  });

  it('not what only looks like it: other modules, other names, nested blocks, strings, comments and heredocs', () => {
    const scan = scanHcl(`
moved {
  from = module.old.terraform_data.captf_inputs_hash
  to   = module.new.terraform_data.captf_inputs_hash
}
moved {
  from = terraform_data.captf_inputs_hash_old
  to   = terraform_data.captf_inputs_hashes
}
removed {
  from = terraform_data.gone
  lifecycle {
    destroy = false
  }
  provisioner "local-exec" {
    when    = destroy
    command = "echo to = terraform_data.captf_inputs_hash"
  }
}
# moved { to = terraform_data.captf_inputs_hash }
/* import { to = terraform_data.captf_inputs_hash } */
resource "terraform_data" "a" {
  input = <<-EOT
    moved {
      to = terraform_data.captf_inputs_hash
    }
  EOT
}
locals { to = "terraform_data.captf_inputs_hash" }
variable "captf_inputs_hash_suffix" {}
module "captf_inputs_hash" { source = "./m" }
`);
    assert.deepEqual(scan.reserved, []);
  });

  it('a trailing comment ends its line only: the next attribute is still read', () => {
    const scan = scanHcl(
      'terraform {\n  required_version = ">= 1.5" # comment\n  backend "pg" {}\n}\nmoved {\n  from = terraform_data.a // comment\n  to   = terraform_data.captf_inputs_hash\n}\n',
    );
    assert.equal(scan.backend, 'pg');
    assert.deepEqual(found(scan), [[7, `moved { to = ${R} }`]]);
  });

  // terraform 1.11 plans each of these moves (checked by hand with `terraform plan`); a scanner that
  // reads heredocs, comments or headers less closely than HCL does loses the block.
  const MOVE = 'moved {\n  from = terraform_data.cluster\n  to   = terraform_data.captf_inputs_hash\n}\n';
  for (const [what, text, line] of [
    [
      'after a heredoc whose template holds a heredoc with the outer marker',
      `resource "terraform_data" "a" {\n  input = <<EOT\n\${ upper(<<X\nEOT\n"\nX\n) }\nEOT\n}\n${MOVE}# "\n`,
      12,
    ],
    [
      'after a heredoc with a Unicode marker',
      `resource "terraform_data" "a" {\n  input = <<É\n"\nÉ\n}\n${MOVE}# "\n`,
      8,
    ],
    [
      'after a heredoc closed by an indented marker with trailing spaces',
      `resource "terraform_data" "a" {\n  input = <<EOT\n"\n   EOT  \n}\n${MOVE}# "\n`,
      8,
    ],
    [
      'with block comments in its header and before the =',
      'moved /* a\n */ {\n  from = terraform_data.cluster\n  to /* b */ = terraform_data.captf_inputs_hash\n}\n',
      4,
    ],
    [
      'after a trailing comment on the line before',
      'moved {\n  from = terraform_data.cluster # c\n  to   = terraform_data.captf_inputs_hash\n}\n',
      3,
    ],
    [
      'with a block comment spanning lines inside the address',
      'moved {\n  from = terraform_data.cluster\n  to   = terraform_data /* a\n b */ .captf_inputs_hash\n}\n',
      3,
    ],
    ['after a byte order mark', `\uFEFF${MOVE}`, 3],
  ] as const) {
    it(`a moved block ${what}`, () => {
      assert.deepEqual(found(scanHcl(text)), [[line, `moved { to = ${R} }`]]);
    });
  }

  it('the JSON syntax: block objects or lists, spaced traversals, and every occurrence of a duplicate key', () => {
    const text = [
      '{',
      '  "moved": [{"from": "terraform_data.cluster", "to": "terraform_data.captf_inputs_hash"}],',
      '  "moved": {"from": "terraform_data.a", "to": "terraform_data.b"},',
      '  "removed": {',
      '    "from": "terraform_data . captf_inputs_hash"',
      '  },',
      '  "import": [{"to": "terraform_data.x", "id": "1"}, {"to": "terraform_data.captf_inputs_hash[\\"a\\"]", "id": "2"}],',
      '  "resource": {"terraform_data": {"a": {}}},',
      '  "resource": {"terraform_data": {"captf_inputs_hash": {}}}',
      '}',
    ].join('\n');
    const scan = scanJson(text, undefined, 'main.tf.json');
    assert.deepEqual(found(scan), [
      [2, `moved { to = ${R} }`],
      [5, `removed { from = ${R} }`],
      [7, `import { to = ${R}["a"] }`],
      [9, `resource "terraform_data" "captf_inputs_hash"`],
    ]);
    assert.deepEqual(scan.resources, ['terraform_data.a', R], 'a duplicate key hides nothing');
  });

  it('the JSON syntax: an array of arrays of blocks, which terraform accepts for unlabelled blocks', () => {
    const text =
      '{"moved": [[{"from": "terraform_data.cluster",\n "to": "terraform_data.captf_inputs_hash"}]],\n "import": [[[{"to": "terraform_data.captf_inputs_hash", "id": "x"}]]]}';
    assert.deepEqual(found(scanJson(text, undefined, 'refactor.tf.json')), [
      [2, `moved { to = ${R} }`],
      [3, `import { to = ${R} }`],
    ]);
  });

  it('labels as terraform decodes them: escapes name the reserved variable and resource too', () => {
    const text =
      'variable "captf\\u005finputs_hash" {\n  sensitive = true\n}\nresource "terraform_data" "captf_inputs\\U0000005fhash" {}\nvariable "bad\\UFFFFFFFF" {}\n';
    assert.deepEqual(found(scanHcl(text, undefined, 'zz_override.tf')), [
      [1, 'variable "captf_inputs_hash"'],
      [4, `resource "terraform_data" "captf_inputs_hash"`],
    ]);
  });

  it('invalid JSON is an error naming the line', () => {
    assert.throws(() => scanJson('{\n  "moved": [\n    {"to": terraform_data.x}\n  ]\n}'), /invalid JSON on line 3/);
    assert.throws(() => scanJson('{"a": 1} {}'), /invalid JSON on line 1: EndOfFileExpected/);
    assert.throws(
      () => scanJson('{"a": 1, /* no comments in terraform JSON */ "b": 2}'),
      /invalid JSON on line 1: InvalidCommentToken/,
    );
    assert.throws(() => scanJson('[]'), /top level is an array/);
  });

  it('the JSON reader agrees with JSON.parse on the facts of a document without duplicate keys', () => {
    const doc = {
      resource: [{ terraform_data: { a: { input: ['x', { y: [1, -2.5e3, true, false, null] }] } } }],
      variable: { v: { sensitive: true, default: 'q\\"\u00e9\n' }, w: { sensitive: false } },
      terraform: [{ backend: { s3: {} } }],
    };
    for (const text of [JSON.stringify(doc), JSON.stringify(doc, null, 2)]) {
      const scan = scanJson(text);
      assert.deepEqual(scan.resources, ['terraform_data.a']);
      assert.deepEqual(scan.variables, ['v', 'w']);
      assert.deepEqual(scan.sensitiveVariables, ['v']);
      assert.equal(scan.backend, 's3');
    }
  });
});

describe('workspace: scanModule and prepareWorkspace refuse a module that names the reserved record', () => {
  it('names every file and line and the fix; nothing is prepared', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'captf-scan-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const moduleDir = join(dir, 'module');
    const workdir = join(dir, 'work');
    await mkdir(moduleDir);
    await writeFile(join(moduleDir, 'main.tf'), 'resource "terraform_data" "cluster" {\n  input = "c"\n}\n');
    await writeFile(
      join(moduleDir, 'moves.tf'),
      '\nmoved {\n  from = terraform_data.cluster\n  to   = terraform_data.captf_inputs_hash\n}\n',
    );
    await writeFile(join(moduleDir, 'vars.tf.json'), '{"variable": {\n"captf_inputs_hash": {}}}');
    const scan = await scanModule(moduleDir);
    await assert.rejects(
      prepareWorkspace({
        moduleDir,
        scan,
        workdir,
        statePath: join(dir, 'state.tfstate'),
        inputs: { varFiles: [], files: [], sensitiveVariables: [], varFileOf: () => undefined },
      }),
      (error: unknown) => {
        assert.ok(error instanceof RunnerError);
        assert.equal(error.kind, 'image');
        assert.equal(error.reason, 'ImageInvalid');
        assert.equal(
          error.message,
          `the module names what the runner reserves for its inputs-hash record (terraform_data.captf_inputs_hash, var.captf_inputs_hash): ` +
            `${join(moduleDir, 'moves.tf')}:4: moved { to = terraform_data.captf_inputs_hash }; ${join(moduleDir, 'vars.tf.json')}:2: variable "captf_inputs_hash". ` +
            'Nothing was planned or applied; rename or remove those blocks: no resource or variable may take these names, and no moved, removed or import block may name terraform_data.captf_inputs_hash, with or without an index',
        );
        assert.deepEqual(error.detail, { reserved: scan.reserved });
        return true;
      },
    );
    assert.deepEqual(await readdir(dir), ['module'], 'no workdir was made');
  });
});

describe('workspace: OpenTofu state encryption (terraform { encryption })', () => {
  it('finds the block in .tf, with its line, and not where it only looks like one', () => {
    const scan = scanHcl(
      `# terraform { encryption {} }
locals { encryption = "x" }
resource "terraform_data" "encryption" {}
terraform {
  required_version = ">= 1.7"

  encryption {
    key_provider "pbkdf2" "k" { passphrase = var.passphrase }
    state { method = method.aes_gcm.m }
  }
}
`,
      undefined,
      'encryption.tf',
    );
    assert.deepEqual(scan.encryption, [{ file: 'encryption.tf', line: 7 }]);
    assert.deepEqual(scanHcl('terraform {\n  backend "pg" {}\n}\n').encryption, []);
  });

  it('finds it in .tf.json, as an object or in an array of terraform blocks', () => {
    const object = scanJson(
      '{\n  "terraform": {\n    "encryption": { "state": {} }\n  }\n}\n',
      undefined,
      'enc.tf.json',
    );
    assert.deepEqual(object.encryption, [{ file: 'enc.tf.json', line: 3 }]);
    const array = scanJson(
      JSON.stringify({ terraform: [{ required_version: '>= 1.7' }, { encryption: {} }] }),
      undefined,
      'x.tf.json',
    );
    assert.equal(array.encryption.length, 1);
    assert.deepEqual(
      scanJson(JSON.stringify({ terraform: { backend: { pg: {} } }, locals: { encryption: 1 } })).encryption,
      [],
    );
  });
});

describe('workspace: the files the tool in use reads', () => {
  const file = (name: string, text: string) => ({ name, path: `/m/${name}`, text });
  const backendPg = 'terraform {\n  backend "pg" {}\n}\n';
  const resource = (name: string) => `resource "terraform_data" "${name}" {}\n`;

  it('skippedConfigFile: terraform skips every .tofu file (naming its .tf twin); OpenTofu skips foo.tf and foo.tf.json beside foo.tofu and foo.tofu.json', () => {
    const names = new Set([
      'main.tf',
      'main.tofu',
      'extra.tofu',
      'data.tf.json',
      'data.tofu.json',
      'mixed.tf.json',
      'mixed.tofu',
    ]);
    assert.equal(skippedConfigFile('terraform', 'main.tf', names), undefined);
    assert.equal(skippedConfigFile('terraform', 'main.tofu', names)?.twin, 'main.tf');
    assert.equal(skippedConfigFile('terraform', 'data.tofu.json', names)?.twin, 'data.tf.json');
    assert.deepEqual(skippedConfigFile('terraform', 'extra.tofu', names), {
      why: 'terraform reads only .tf and .tf.json files; .tofu files are for OpenTofu',
    });
    assert.deepEqual(skippedConfigFile('opentofu', 'main.tf', names), {
      twin: 'main.tofu',
      why: 'OpenTofu reads main.tofu instead',
    });
    assert.equal(skippedConfigFile('opentofu', 'data.tf.json', names)?.twin, 'data.tofu.json');
    assert.equal(
      skippedConfigFile('opentofu', 'mixed.tf.json', names),
      undefined,
      'a .tofu file does not shadow a .tf.json',
    );
    assert.equal(skippedConfigFile('opentofu', 'main.tofu', names), undefined);
  });

  it('counts only what the tool reads: a backend in backend.tofu is no backend for terraform, and is refused with the fix', () => {
    const files = [file('backend.tofu', backendPg), file('main.tf', resource('a'))];
    const forTerraform = scanConfigFiles(files, 'terraform');
    assert.equal(forTerraform.backend, undefined);
    assert.deepEqual(forTerraform.resources, ['terraform_data.a']);
    const problem = skippedFilesProblem(forTerraform)!;
    assert.match(
      problem.message,
      /does not read the backend block in \/m\/backend\.tofu:2: backend "pg" \(terraform reads only \.tf and \.tf\.json files; \.tofu files are for OpenTofu\): it would run with no backend of the module's own/,
    );
    assert.match(problem.fix, /alone in backend\.tf, which terraform and OpenTofu both read/);
    assert.deepEqual(
      problem.files.map((f) => f.file),
      ['/m/backend.tofu'],
    );
    assert.equal(scanConfigFiles(files, 'opentofu').backend, 'pg');
    assert.equal(skippedFilesProblem(scanConfigFiles(files, 'opentofu')), undefined);
    assert.equal(scanConfigFiles(files).backend, 'pg', 'without a tool: every file');
  });

  it('a module for both tools (twins) reads as each tool reads it; a .tofu file without a twin that declares something is refused for terraform', () => {
    const twins = [
      file('backend.tf', backendPg),
      file('main.tf', resource('a')),
      file('main.tofu', resource('b')),
      file('encryption.tofu', 'terraform {\n  encryption {}\n}\n'),
    ];
    assert.deepEqual(scanConfigFiles(twins, 'terraform').resources, ['terraform_data.a']);
    assert.deepEqual(
      scanConfigFiles(twins, 'terraform').encryption,
      [],
      "terraform does not encrypt: OpenTofu's settings are not its",
    );
    assert.equal(
      skippedFilesProblem(scanConfigFiles(twins, 'terraform')),
      undefined,
      'a twin and a file that declares nothing',
    );
    assert.deepEqual(scanConfigFiles(twins, 'opentofu').resources, ['terraform_data.b']);
    assert.equal(scanConfigFiles(twins, 'opentofu').encryption.length, 1);
    const lone = skippedFilesProblem(
      scanConfigFiles([file('backend.tf', backendPg), file('extra.tofu', resource('c'))], 'terraform'),
    )!;
    assert.match(
      lone.message,
      /does not read \/m\/extra\.tofu declares resources, module calls or variables .*: what it declares would be left out of the run/,
    );
    assert.match(lone.fix, /rename the file to \.tf/);
    const broken = scanConfigFiles(
      [file('backend.tf', backendPg), file('main.tf', resource('a')), file('main.tofu.json', '{not json')],
      'terraform',
    );
    assert.equal(broken.skipped.length, 1, 'a file the tool skips need not parse');
  });
});

describe('workspace: the calls of nonsensitive() (what the module declassifies)', () => {
  const lines = (text: string) => scanHcl(text, emptyScan(), 'm.tf').nonsensitive.map((call) => call.line);

  it('HCL: every call in an expression, in a template of a string or a heredoc, with core:: and spaces before its `(`', () => {
    assert.deepEqual(
      lines(
        [
          'output "x" { value = nonsensitive(var.pw) }', // 1
          'output "y" {',
          '  value = "dsn: ${nonsensitive(var.pw)}@db"', // 3
          '}',
          'locals {',
          '  a = <<-EOT',
          '    plain text',
          '    ${ core::nonsensitive (var.q) }', // 8
          '    EOT',
          '  b = [for s in var.list : nonsensitive(', // 10
          '    s)]',
          '  c = "%{ if nonsensitive(var.flag) }on%{ endif }"', // 12
          '  d = jsonencode({ k = "${nonsensitive(var.a)}", l = nonsensitive(var.b) })', // 13, twice
          '}',
        ].join('\n'),
      ),
      [1, 3, 8, 10, 12, 13, 13],
    );
  });

  it('HCL: not in comments, in literal text of strings and heredocs, behind $${, nor another name or namespace', () => {
    assert.deepEqual(
      lines(
        [
          '# nonsensitive(var.a)',
          '// nonsensitive(var.a)',
          '/* nonsensitive(var.a)',
          '   nonsensitive(var.a) */',
          'output "x" {',
          '  description = "nonsensitive(var.pw) is not called"',
          '  value = "$${nonsensitive(var.pw)} \\" nonsensitive(x)" # nonsensitive(y)',
          '}',
          'locals {',
          '  a = <<EOT',
          'nonsensitive(var.a)',
          'EOT',
          '  b = my_nonsensitive(var.a)',
          '  c = var.nonsensitive',
          '  d = provider::util::nonsensitive(var.a)',
          '  nonsensitive = 1',
          '}',
          'output "z" { value = nonsensitive(var.pw) }', // 18
        ].join('\n'),
      ),
      [18],
    );
  });

  it('.tf.json: in the templates of string values, at the line of the string; not in "//" comments or a variable\'s default and description', () => {
    const text = JSON.stringify(
      {
        '//': '${nonsensitive(var.a)}',
        output: { dsn: { value: 'postgres://app:${nonsensitive(var.pw)}@db' } },
        locals: {
          plain: 'nonsensitive(var.pw)',
          escaped: '$${nonsensitive(var.pw)}',
          list: ['${nonsensitive(var.b)}'],
        },
        variable: {
          v: {
            default: '${nonsensitive(var.c)}',
            description: 'call ${nonsensitive(var.c)}',
            validation: { condition: '${nonsensitive(var.v) != ""}', error_message: 'no' },
          },
        },
      },
      null,
      2,
    );
    const calls = scanJson(text, emptyScan(), 'main.tf.json').nonsensitive;
    const lineOf = (needle: string) => text.split('\n').findIndex((line) => line.includes(needle)) + 1;
    assert.deepEqual(calls, [
      { file: 'main.tf.json', line: lineOf('postgres://') },
      { file: 'main.tf.json', line: lineOf('${nonsensitive(var.b)}') },
      { file: 'main.tf.json', line: lineOf('"condition"') },
    ]);
  });

  it('scanModule: the root files and every subdirectory (child modules, at any depth), each file by its path; not what local runs leave (.terraform)', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'captf-nonsensitive-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, 'modules', 'db', 'inner'), { recursive: true });
    await mkdir(join(dir, '.terraform', 'modules', 'x'), { recursive: true });
    await writeFile(join(dir, 'main.tf'), 'module "db" {\n  source = "./modules/db"\n}\n');
    await writeFile(join(dir, 'out.tf.json'), '{\n  "output": {"a": {"value": "${nonsensitive(var.a)}"}}\n}\n');
    await writeFile(
      join(dir, 'modules', 'db', 'main.tf'),
      'variable "pw" {}\n\noutput "x" { value = nonsensitive(var.pw) }\n',
    );
    await writeFile(join(dir, 'modules', 'db', 'inner', 'b.tf'), '\n\n\n\nlocals { b = nonsensitive(var.b) }\n');
    await writeFile(join(dir, 'modules', 'db', 'inner', 'c.tofu'), 'locals { c = nonsensitive(var.c) }\n');
    await writeFile(join(dir, 'modules', 'db', 'broken.tf.json'), '{not json');
    await writeFile(join(dir, '.terraform', 'modules', 'x', 'x.tf'), 'locals { x = nonsensitive(var.x) }\n');
    assert.deepEqual((await scanModule(dir, { tool: 'terraform' })).nonsensitive, [
      { file: join(dir, 'out.tf.json'), line: 2 },
      { file: join(dir, 'modules', 'db', 'main.tf'), line: 3 },
      { file: join(dir, 'modules', 'db', 'inner', 'b.tf'), line: 5 },
    ]);
    assert.equal(
      (await scanModule(dir, { tool: 'opentofu' })).nonsensitive.length,
      4,
      'OpenTofu reads the .tofu file too',
    );
  });
});
