// The image's command (runner/captf-runner.sh) starts node through the runner's startup snapshot when
// the blob is there and no NODE_OPTIONS are set, and the plain bundle otherwise; node refuses a blob
// it did not make, and says so. Here the command runs a copy of the built runner (dist/: the bundle,
// its chunks, the snapshot's blob and lib/ bundles) with this node in place of the image's. `local` starts
// its ops' runners with the node arguments it was started with (src/local/runner-process.ts): through the
// blob when it was. Every other e2e run through runRunner goes through the snapshot too (test/support/README.md).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, cp, mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProcess } from '../support/exec.ts';
import { modules, readLocalState, tempDir, testTerraformEnv, writeTree } from '../support/tf-modules.ts';
import { RUNNER } from '../support/runner.ts';

const COMMAND = join(dirname(fileURLToPath(import.meta.url)), '../../runner/captf-runner.sh');
const SNAPSHOT_BLOB = join(dirname(fileURLToPath(import.meta.url)), '../../scripts/image/snapshot-blob.sh');

let root: string;
/** The image's command for the copy of the runner in `lib`. */
let command: string;
let lib: string;

before(async () => {
  root = await tempDir(undefined, 'captf-snapshot-');
  lib = join(root, 'lib');
  await cp(dirname(RUNNER), lib, { recursive: true });
  command = join(root, 'captf-runner');
  const text = await readFile(COMMAND, 'utf8');
  assert.match(text, /^lib=\/usr\/local\/lib\/captf-runner$/m);
  assert.match(text, /^node=\/usr\/local\/bin\/node$/m);
  await writeFile(
    command,
    text.replace(/^lib=.*$/m, `lib='${lib}'`).replace(/^node=.*$/m, `node='${process.execPath}'`),
  );
  await chmod(command, 0o755);
});
after(() => rm(root, { recursive: true, force: true }));

/** The runner's flags for a run in `dir`: its module (the base module), inputs, state and out dir. */
async function runIn(dir: string): Promise<string[]> {
  await writeTree(join(dir, 'module'), modules.base);
  await mkdir(join(dir, 'inputs'));
  return [
    '--module',
    join(dir, 'module'),
    '--inputs',
    join(dir, 'inputs'),
    '--state',
    join(dir, 'state/terraform.tfstate'),
    '--new-state',
    '--out',
    join(dir, 'out'),
  ];
}

/** The image's command (its copy, naming this node), this node first on PATH for the stand-ins. */
const launch = (args: string[], dir: string, env: Record<string, string> = {}) =>
  runProcess(command, args, {
    env: testTerraformEnv({ PATH: `${dirname(process.execPath)}:${process.env.PATH}`, ...env }),
    cwd: dir,
  });

/** The command: an op whose terraform is a stand-in that records its parent's (the runner's) command line, then fails. */
async function startedWith(env: Record<string, string> = {}) {
  const dir = await tempDir(undefined, 'captf-snapshot-run-');
  const seen = join(dir, 'cmdline');
  const standin = join(dir, 'terraform');
  await writeFile(standin, `#!/bin/sh\ntr '\\0' ' ' < /proc/$PPID/cmdline > '${seen}'\nexit 1\n`, { mode: 0o755 });
  const run = await launch(['apply', ...(await runIn(dir)), '--terraform', standin], dir, env);
  const cmdline = await readFile(seen, 'utf8').catch(() => '');
  await rm(dir, { recursive: true, force: true });
  return { run, cmdline };
}

/**
 * The blob scripts/image/snapshot-blob.sh makes with this node from the copy's bundle, always at one path
 * (node keeps its command line), run in `cwd` with its output to a pipe or a file.
 */
async function madeBlob(cwd: string, output: 'pipe' | 'file'): Promise<Buffer> {
  const blob = join(root, 'made.blob');
  const file = output === 'file' ? await open(join(root, 'made.out'), 'w') : undefined;
  try {
    const child = spawn('sh', [SNAPSHOT_BLOB, process.execPath, join(lib, 'snapshot/captf-runner.cjs'), blob], {
      cwd,
      stdio: ['ignore', file?.fd ?? 'pipe', file?.fd ?? 'pipe'],
    });
    child.stdout?.resume();
    child.stderr?.resume();
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, 'scripts/image/snapshot-blob.sh made the blob');
  } finally {
    await file?.close();
  }
  return readFile(blob);
}

/**
 * The 8-byte words in which two blobs differ (a value, V8's checksum: one byte of either may happen
 * to be the same in two builds whose values differ). Both are one size when they differ only in values.
 */
function differingWords(a: Buffer, b: Buffer): number[] {
  assert.equal(a.length, b.length, 'the blobs are one size');
  const words = new Set<number>();
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) words.add(Math.floor(i / 8));
  return [...words];
}

describe("the image's command and the startup snapshot", () => {
  it('starts node through the blob, under the V8 flag the blob was built with: the same bundle and command line, the heap restored', async () => {
    const { run, cmdline } = await startedWith();
    // Node 20 refuses a blob under other V8 flags than its build's (exit 14): the stand-in ran, so they agree.
    assert.match(
      cmdline,
      new RegExp(
        `--single-threaded --max-semi-space-size=8 --snapshot-blob ${lib}/snapshot/captf-runner\\.blob ${lib}/captf-runner\\.mjs apply `,
      ),
    );
    assert.equal(run.exitCode, 4, 'the stand-in terraform fails its version: an image problem');
  });

  it('starts the plain bundle under NODE_OPTIONS (V8 flags the snapshot was not built with) or without the blob', async () => {
    const withOptions = await startedWith({ NODE_OPTIONS: '--max-old-space-size=512' });
    assert.doesNotMatch(withOptions.cmdline, /--snapshot-blob/);
    assert.match(
      withOptions.cmdline,
      new RegExp(`--single-threaded --max-semi-space-size=8 ${lib}/captf-runner\\.mjs apply `),
    );
    assert.equal(withOptions.run.exitCode, 4, withOptions.run.stderr);

    await cp(join(lib, 'snapshot'), join(root, 'snapshot-kept'), { recursive: true });
    await rm(join(lib, 'snapshot/captf-runner.blob'));
    try {
      const withoutBlob = await startedWith();
      assert.doesNotMatch(withoutBlob.cmdline, /--snapshot-blob/);
      assert.equal(withoutBlob.run.exitCode, 4);
    } finally {
      await cp(join(root, 'snapshot-kept'), join(lib, 'snapshot'), { recursive: true });
    }
  });

  it('a blob node did not make is refused by node before any of the runner runs: exit 14, naming the snapshot', async () => {
    // A blob made under other V8 flags, which Node 20 (the tests' node) refuses by the check a blob of another node version fails.
    const foreign = join(root, 'foreign.blob');
    const entry = join(root, 'foreign.cjs');
    await writeFile(entry, "require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {});\n");
    const made = await runProcess(process.execPath, [
      '--no-opt',
      '--snapshot-blob',
      foreign,
      '--build-snapshot',
      entry,
    ]);
    assert.equal(made.exitCode, 0, made.stderr);
    await cp(join(lib, 'snapshot/captf-runner.blob'), join(root, 'kept.blob'));
    await cp(foreign, join(lib, 'snapshot/captf-runner.blob'));
    try {
      const { run, cmdline } = await startedWith();
      assert.equal(cmdline, '', 'no terraform started');
      assert.equal(run.exitCode, 14);
      assert.match(run.stderr, /Failed to load the startup snapshot because it was built with/);
    } finally {
      await cp(join(root, 'kept.blob'), join(lib, 'snapshot/captf-runner.blob'));
    }
  });

  it('makes the same blob whatever stdio, working directory and PID its builder has', async () => {
    const first = await madeBlob(root, 'file');
    const other = await madeBlob(lib, 'pipe');
    const again = await madeBlob(root, 'file');
    const third = await madeBlob(root, 'file');
    // Node 20 writes values of its own into a blob, which differ in any two builds (the image's Node 24
    // does not): only those may differ between builds in other conditions. Each holds a few random bits,
    // so one of them can come out the same in two builds (a CI run saw it): the words any two of three
    // builds in the same conditions differ in are node's own.
    const own = new Set([...differingWords(first, again), ...differingWords(first, third)]);
    assert.deepEqual(
      differingWords(first, other).filter((word) => !own.has(word)),
      [],
      'a pipe for a file, another working directory and PID change no byte of the blob',
    );
  });

  it("`local` starts each op's runner as it was started itself (node's own arguments passed on): through the blob, or the plain bundle under NODE_OPTIONS", async (t) => {
    for (const env of [{}, { NODE_OPTIONS: '--max-old-space-size=512' }] as Record<string, string>[]) {
      const dir = await tempDir(t, 'captf-snapshot-local-');
      await writeTree(join(dir, 'module'), modules.base);
      const seen = join(dir, 'cmdline');
      const standin = join(dir, 'terraform');
      await writeFile(standin, `#!/bin/sh\ntr '\\0' ' ' < /proc/$PPID/cmdline >> '${seen}'\nexit 1\n`, { mode: 0o755 });
      const withStandin = { ...env, CAPTF_TERRAFORM: standin };
      const init = await launch(
        ['local', 'init', '--module', './module', '--image', 'example/demo:1.0.0'],
        dir,
        withStandin,
      );
      assert.equal(init.exitCode, 0, init.stderr);
      const reconcile = await launch(['local', 'reconcile'], dir, withStandin);
      assert.equal(reconcile.exitCode, 4, 'the stand-in terraform fails its version: an image problem');
      // The op's runner is the stand-in's parent: its command line names the op.
      const child = new RegExp(`${lib}/captf-runner\\.mjs apply --module `);
      const cmdline = await readFile(seen, 'utf8');
      assert.match(cmdline, child);
      if ('NODE_OPTIONS' in env) assert.doesNotMatch(cmdline, /--snapshot-blob/);
      else assert.match(cmdline, new RegExp(`--snapshot-blob ${lib}/snapshot/captf-runner\\.blob ${child.source}`));
    }
  });

  it('runs through the blob named by relative paths, the bundle too: what lies beside the bundle (a lib/ bundle: the policy language) is found', async () => {
    const policy = join(root, 'policy');
    await mkdir(policy, { recursive: true });
    await writeFile(
      join(policy, 'policy.yaml'),
      'apiVersion: policy.captf.io/v1\nrules:\n- name: no-creates\n  on: change\n  match: change.kind == "create"\n  effect: deny\n  message: \'"no creates: " + change.address\'\n',
    );
    const plan = fileURLToPath(new URL('../fixtures/plans/terraform-json/basic__plan.json', import.meta.url));
    const run = await runProcess(
      process.execPath,
      [
        '--single-threaded',
        '--max-semi-space-size=8',
        '--snapshot-blob',
        'lib/snapshot/captf-runner.blob',
        'lib/captf-runner.mjs',
        'classify',
        plan,
        '--policy',
        policy,
        '--json',
      ],
      { cwd: root },
    );
    assert.equal(run.exitCode, 0, run.stderr);
    const classified = JSON.parse(run.stdout) as { policy?: { denied: { rule: string }[] } };
    assert.ok(
      classified.policy?.denied.some((d) => d.rule === 'no-creates'),
      run.stdout.slice(0, 2000),
    );
  });

  it('applies through the snapshot without its lib/ bundles: the store clients, policy language and pretty logs load only when used', async (t) => {
    await rm(join(lib, 'snapshot/lib'), { recursive: true });
    const dir = await tempDir(t, 'captf-snapshot-apply-');
    const run = await launch(['apply', ...(await runIn(dir))], dir);
    assert.equal(run.exitCode, 0, run.stderr.slice(-2000));
    const state = await readLocalState(join(dir, 'state/terraform.tfstate'));
    assert.ok(state.resources.length > 0, 'the apply left its resources in the state');
  });
});
