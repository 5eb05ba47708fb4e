// The module cannot make the runner write through a link or over a file of its own: the workdir
// copy holds files and directories only, a module that ships a file named like the runner's own or a
// link leading outside itself is refused before terraform runs, and destroy proceeds without them.
// The real terraform; every case checks the files a write could have hit.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lstat, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runChecked } from '../support/exec.ts';
import { writeInputsDir } from '../inputs/layout.support.ts';
import { modules, resourceIds } from '../support/tf-modules.ts';
import { applied, IMAGE } from './apply.support.ts';
import { explain, scenario, type RunnerRun, type Scenario } from '../support/runner.ts';

/** plan needs somewhere to put its artifact. */
const opArgs = (s: Scenario, op: string) => [
  '--image',
  IMAGE,
  ...(op === 'plan' ? ['--artifacts', join(s.dir, 'artifacts')] : []),
];

/**
 * Refused before terraform ran, every problem named: `problems` maps each module path to what the
 * message says of it. The scan reports every problem it finds, so one module can hold several.
 */
function assertRefused(run: RunnerRun, problems: Record<string, string>): void {
  assert.equal(run.exitCode, 4, explain(run));
  assert.equal(run.result!.reason, 'ImageInvalid');
  assert.equal(run.result!.error!.step, 'workspace');
  for (const [file, what] of Object.entries(problems))
    assert.ok(
      run.result!.message.includes(`${file} ${what}`),
      `the message says ${file} ${what}: ${run.result!.message}`,
    );
  assert.ok(!run.result!.steps.some((step) => step.name === 'init'), 'terraform never ran against the module');
}

const RUNNER_FILE = 'is named like a file the runner adds to its copy of the module';

/**
 * A FIFO, a directory, a broken link, a link to /dev/zero named *.tf and a name that is not valid
 * UTF-8 in the module; returns what
 * the message says of each path. Each would wedge or crash the scan of the module if it were read
 * like a file (a FIFO waits for a writer forever).
 */
async function plantNonFiles(s: Scenario): Promise<Record<string, string>> {
  const plant: Record<string, { make: (path: string) => Promise<unknown>; what: string }> = {
    'fifo.tf': {
      make: (path) => runChecked('mkfifo', [path]),
      what: 'is neither a file nor a directory (a special file)',
    },
    'directory.tf': { make: (path) => mkdir(path), what: 'is a directory named like a configuration file' },
    'broken-link.tf': {
      make: (path) => symlink('/nonexistent/captf', path),
      what: 'is a symbolic link that leads nowhere',
    },
    'dev-zero.tf': {
      make: (path) => symlink('/dev/zero', path),
      what: 'is neither a file nor a directory (a link to a special file, /dev/zero)',
    },
    // Named as the message names it: the byte 0xff, which no UTF-8 text holds, as \xff.
    'not-utf8-\\xff.tf': {
      make: (path) => writeFile(withByteFF(path), ''),
      what: 'has a name that is not valid UTF-8',
    },
  };
  const problems: Record<string, string> = {};
  for (const [name, { make, what }] of Object.entries(plant)) {
    await make(join(s.module, name));
    problems[join(s.module, name)] = what;
  }
  return problems;
}

/** The path with its `\\xff` made the byte 0xff. */
function withByteFF(path: string): Buffer {
  const [before, after] = path.split('\\xff') as [string, string];
  return Buffer.concat([Buffer.from(before), Buffer.from([0xff]), Buffer.from(after)]);
}

/** The module's extra.tf: a link to a configuration file outside it. */
async function plantOutsideLink(s: Scenario): Promise<void> {
  const outside = join(s.dir, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'extra.tf'), 'resource "terraform_data" "extra" {\n  input = "outside"\n}\n');
  await symlink(join(outside, 'extra.tf'), join(s.module, 'extra.tf'));
}

/** x/d0 … x/d17 in the module, 2 links per level to the next (a, b): copied as paths, 2^16 trees; copied once, 17 directories. */
async function plantFanOut(s: Scenario): Promise<void> {
  const depth = 16;
  await mkdir(join(s.module, 'x', `d${depth + 1}`), { recursive: true });
  await writeFile(join(s.module, 'x', `d${depth + 1}`, 'f.txt'), 'data');
  for (let i = 0; i <= depth; i++) {
    await mkdir(join(s.module, 'x', `d${i}`), { recursive: true });
    await symlink(`../d${i + 1}`, join(s.module, 'x', `d${i}`, 'a'));
    await symlink(`../d${i + 1}`, join(s.module, 'x', `d${i}`, 'b'));
  }
}

describe("files named like the runner's own", () => {
  const names = [
    'captf_runner_inputs_hash.tf',
    'captf_runner_backend_override.tf',
    'captf_runner_inputs_hash.tofu',
    'captf_runner_backend_override.tofu.json',
    'captf_runner_inputs_hash.tf.json',
  ];
  it(`${names.join(', ')}, each a link to the state file: each refused (exit 4, named) by apply, plan, refresh and drift; the state is byte-identical`, async (t) => {
    const s = await applied(t);
    const stateBefore = await readFile(s.state);
    for (const name of names) await symlink(s.state, join(s.module, name));
    for (const op of ['drift', 'apply', 'refresh', 'plan']) {
      const run = await s.run(op, opArgs(s, op));
      assertRefused(run, Object.fromEntries(names.map((name) => [join(s.module, name), RUNNER_FILE])));
      assert.deepEqual(await readFile(s.state), stateBefore, `${op} wrote through a link`);
    }
  });

  it('a regular file of that name, and a captf-inputs dir, are refused too', async (t) => {
    const s = await applied(t);
    await writeFile(join(s.module, 'captf_runner_inputs_hash.tf'), "# the module's own\n");
    await mkdir(join(s.module, 'captf-inputs'));
    await writeFile(join(s.module, 'captf-inputs', 'x.txt'), 'x');
    const run = await s.run('apply', ['--image', IMAGE]);
    assertRefused(run, {
      [join(s.module, 'captf-inputs')]: RUNNER_FILE,
      [join(s.module, 'captf_runner_inputs_hash.tf')]: RUNNER_FILE,
    });
  });
});

describe('variables files the module ships', () => {
  it('terraform.tfvars and *.auto.tfvars.json (terraform loads them outside the inputs hash): refused (exit 4, each named, with the fix) by apply and plan; the state is byte-identical', async (t) => {
    const s = await applied(t);
    const stateBefore = await readFile(s.state);
    await writeFile(join(s.module, 'terraform.tfvars'), 'cluster_name = "hijacked"\n');
    await writeFile(join(s.module, 'prod.auto.tfvars.json'), '{"cluster_name": "hijacked"}\n');
    for (const op of ['apply', 'plan']) {
      const run = await s.run(op, opArgs(s, op));
      assertRefused(run, {});
      assert.match(
        run.result!.message,
        /the module ships prod\.auto\.tfvars\.json, terraform\.tfvars: terraform loads them by itself.*move the values into the inputs \(terraform\.tfvars\.json of the inputs dir\)/,
      );
      assert.deepEqual(await readFile(s.state), stateBefore, `${op} changed the state`);
    }
  });
});

describe('symbolic links in the module', () => {
  it('inside the module: the copy holds the content, never the link', async (t) => {
    const s = await scenario(t, {});
    await s.useModule({
      'shared/main.tf': modules.base['main.tf']!,
      'variables.tf': modules.base['variables.tf']!,
      'outputs.tf': modules.base['outputs.tf']!,
      'modules/addon/main.tf': modules.base['modules/addon/main.tf']!,
    });
    await symlink('shared/main.tf', join(s.module, 'main.tf'));
    const workdir = join(s.dir, 'work');
    const run = await s.run('apply', ['--image', IMAGE, '--workdir', workdir]);
    assert.equal(run.exitCode, 0, explain(run));
    assert.ok(resourceIds(await s.readState())['terraform_data.cluster'], 'the linked configuration was applied');
    const copied = await lstat(join(workdir, 'root', 'main.tf'));
    assert.ok(copied.isFile() && !copied.isSymbolicLink(), 'the copy holds a file');
    assert.equal(await readFile(join(workdir, 'root', 'main.tf'), 'utf8'), modules.base['main.tf']);
  });

  it('leading outside the module: refused for apply, plan, refresh and drift (file named)', async (t) => {
    const s = await applied(t);
    await plantOutsideLink(s);
    const stateBefore = await readFile(s.state);
    for (const op of ['apply', 'plan', 'refresh', 'drift']) {
      const run = await s.run(op, opArgs(s, op));
      assertRefused(run, { [join(s.module, 'extra.tf')]: 'is a symbolic link that leads outside the module dir' });
      assert.deepEqual(await readFile(s.state), stateBefore, `${op} changed the state`);
    }
  });

  it('a link to a directory outside, and a link cycle, are refused too', async (t) => {
    const s = await applied(t);
    const outside = join(s.dir, 'outside-module');
    await mkdir(outside);
    await writeFile(join(outside, 'main.tf'), 'resource "terraform_data" "this" {\n  input = "addon"\n}\n');
    await symlink(outside, join(s.module, 'modules', 'elsewhere'));
    await symlink('..', join(s.module, 'modules', 'loop'));
    const run = await s.run('apply', ['--image', IMAGE]);
    assertRefused(run, {
      [join(s.module, 'modules', 'elsewhere')]: 'is a symbolic link that leads outside the module dir',
      [join(s.module, 'modules', 'loop')]: 'is a symbolic link to a directory that holds it (a cycle)',
    });
  });
});

describe('entries named like configuration that are no regular file', () => {
  it(`a FIFO, a directory, a broken link and a link to /dev/zero named *.tf, a name not in UTF-8: each refused (exit 4, named) by apply, plan, refresh and drift`, async (t) => {
    const s = await applied(t);
    const problems = await plantNonFiles(s);
    const stateBefore = await readFile(s.state);
    for (const op of ['apply', 'plan', 'refresh', 'drift']) {
      const run = await s.run(op, opArgs(s, op));
      assertRefused(run, problems);
      assert.deepEqual(await readFile(s.state), stateBefore, `${op} changed the state`);
    }
  });
});

describe('a module for both tools', () => {
  it('a .tofu file without a .tf twin (terraform never loads it) that declares a resource: refused before terraform plans (exit 4: every retry fails alike), nothing applied', async (t) => {
    const s = await applied(t);
    const stateBefore = await readFile(s.state);
    await writeFile(join(s.module, 'extra.tofu'), 'resource "terraform_data" "tofu_only" {\n  input = "x"\n}\n');
    const run = await s.run('apply', ['--image', 'registry.example/m:2']);
    assert.equal(run.exitCode, 4, explain(run));
    assert.equal(run.result!.reason, 'ImageInvalid');
    assert.equal(run.result!.error!.step, 'workspace');
    assert.ok(
      run.result!.message.includes(
        `${join(s.module, 'extra.tofu')} declares resources, module calls or variables (terraform reads only .tf and .tf.json files`,
      ),
      run.result!.message,
    );
    assert.deepEqual(await readFile(s.state), stateBefore);
  });

  it('a .tofu twin of a .tf file (a module for both tools): terraform runs the .tf file, as terraform itself does, and the record waits on what it declares', async (t) => {
    const s = await applied(t);
    await writeFile(join(s.module, 'main.tofu'), 'resource "terraform_data" "tofu_only" {\n  input = "x"\n}\n');
    const run = await s.run('apply', ['--image', 'registry.example/m:2']);
    assert.equal(run.exitCode, 0, explain(run));
    assert.ok(!(await s.readState()).resources.some((r) => r.name === 'tofu_only'), 'terraform never read main.tofu');
  });
});

describe('directory links that fan out', () => {
  it('each real directory is copied once: a second path to it is refused (named)', async (t) => {
    const s = await applied(t);
    await plantFanOut(s);
    const run = await s.run('drift', ['--image', IMAGE]);
    assertRefused(run, {
      [join(s.module, 'x', 'd0', 'b')]:
        `is the same directory as ${join(s.module, 'x', 'd0', 'a')} (through a symbolic link): the copy holds each directory once`,
    });
  });
});

describe('destroy over a module the planning ops refuse', () => {
  // A teardown never wedges. One module holds every kind the tests above plant (the scan names every
  // problem it finds), so one destroy checks the warning of each and that the object is torn down.
  it("files named like the runner's own, a terraform.tfvars, non-file entries and a second path to a directory are left out with a warning each, a link outside is copied with a warning, and the object's own state is torn down", async (t) => {
    const s = await applied(t);
    const decoy = join(s.dir, 'decoy.txt');
    await writeFile(decoy, 'untouched');
    await symlink(s.state, join(s.module, 'captf_runner_inputs_hash.tf'));
    await symlink(decoy, join(s.module, 'captf_runner_backend_override.tf'));
    const leftOut = [
      join(s.module, 'captf_runner_inputs_hash.tf'),
      join(s.module, 'captf_runner_backend_override.tf'),
      ...Object.keys(await plantNonFiles(s)),
    ];
    await plantOutsideLink(s);
    await plantFanOut(s);
    await writeFile(join(s.module, 'terraform.tfvars'), 'cluster_name = "hijacked"\n');
    const destroy = await s.run('destroy', ['--image', IMAGE]);
    assert.equal(destroy.exitCode, 0, explain(destroy));
    assert.equal(destroy.result!.reason, 'DestroySucceeded');
    const warnings = destroy.result!.warnings;
    for (const path of leftOut)
      assert.ok(
        warnings.some((w) => w.includes(path) && /leaves it out/.test(w)),
        `${path}: ${warnings.join('\n')}`,
      );
    assert.ok(
      warnings.some((w) => w.startsWith('the module ships terraform.tfvars: ') && /the destroy leaves it out/.test(w)),
      warnings.join('\n'),
    );
    // The link's content goes into the copy.
    assert.ok(
      warnings.some((w) => w.includes(join(s.module, 'extra.tf')) && /copies what it leads to/.test(w)),
      warnings.join('\n'),
    );
    // The fan-out's own warnings: one per second path (34), not one per copied tree (2^16).
    const fanOut = warnings.filter((w) => w.includes(join(s.module, 'x') + '/'));
    assert.ok(
      fanOut.some((w) => w.startsWith(`${join(s.module, 'x', 'd0', 'b')} `) && /leaves it out/.test(w)),
      warnings.join('\n'),
    );
    assert.ok(fanOut.length < 40, `one warning per second path, not per copied tree: ${fanOut.length}`);
    assert.deepEqual((await s.readState()).resources, [], 'the state was destroyed, not overwritten');
    assert.equal(await readFile(decoy, 'utf8'), 'untouched');
  });
});

describe('the inputs dir of a Kubernetes volume', () => {
  it('(..data links) keeps working exactly as before', async (t) => {
    const s = await scenario(t, {
      'main.tf':
        'variable "cluster_name" {\n  type = string\n}\n\nresource "terraform_data" "cluster" {\n  input = { name = var.cluster_name, config = file("${path.root}/captf-inputs/config.txt") }\n}\n',
    });
    await writeInputsDir(
      s.inputs,
      new Map([
        ['terraform.tfvars.json', Buffer.from(JSON.stringify({ cluster_name: 'from-a-secret' }))],
        ['config.txt', Buffer.from('key=value\n')],
      ]),
      'kubernetes-mount',
    );
    const run = await s.run('apply', ['--image', IMAGE]);
    assert.equal(run.exitCode, 0, explain(run));
    const cluster = (await s.readState()).resources.find((r) => r.name === 'cluster')!;
    assert.deepEqual((cluster.instances[0]!.attributes.input as { value: unknown }).value, {
      name: 'from-a-secret',
      config: 'key=value\n',
    });
  });
});
