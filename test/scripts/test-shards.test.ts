// The unit group's shards (scripts/build/test-shards.mjs, test/support/shard.ts): which files share a process and
// in which order, and what a shard does with its files: each a suite of its own, loaded when the one before it
// has ended, a file that leaves the process changed failed by name, a test that escapes its file's suite failed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProcess } from '../support/exec.ts';
import { tempDir } from '../support/tf-modules.ts';
// @ts-expect-error -- a plain ESM script shared with the build, no type declarations
import { planShards } from '../../scripts/build/test-shards.mjs';

const BUILD_TESTS = fileURLToPath(new URL('../../scripts/build/build-tests.mjs', import.meta.url));

const plan = (files: string[], count: number, seed: number, weights: Record<string, number> = {}): string[][] =>
  planShards(files, { count, seed, weights });
const many = Array.from({ length: 24 }, (_, i) => `test/f${i}.test.ts`);

describe('the shards of the unit group', () => {
  it('hold every file once, in at most the shards asked for; a seed deals and orders them the same every time', () => {
    const shards = plan(many, 4, 7);
    assert.equal(shards.length, 4);
    assert.deepEqual(shards.flat().sort(), [...many].sort());
    assert.ok(shards.every((shard) => shard.length > 0));
    assert.deepEqual(plan(many, 4, 7), shards);
    assert.notDeepEqual(plan(many, 4, 8), shards, 'another seed, another order');
    assert.deepEqual(plan(['test/a.test.ts', 'test/b.test.ts'], 4, 1).flat().sort(), [
      'test/a.test.ts',
      'test/b.test.ts',
    ]);
    assert.equal(plan(['test/a.test.ts', 'test/b.test.ts'], 4, 1).length, 2, 'no shard without a file');
  });

  it('are even: the heavy files dealt first, each to the lightest shard, whatever the seed', () => {
    const heavy = ['test/h1.test.ts', 'test/h2.test.ts', 'test/h3.test.ts', 'test/h4.test.ts'];
    const weights = {
      ...Object.fromEntries(many.map((f) => [f, 0.1])),
      ...Object.fromEntries(heavy.map((f) => [f, 5])),
    };
    for (const seed of [1, 2, 3, 99]) {
      const shards = plan([...many, ...heavy], 4, seed, weights);
      assert.deepEqual(
        shards.map((shard) => shard.filter((f) => heavy.includes(f)).length),
        [1, 1, 1, 1],
        `seed ${seed}`,
      );
      const loads = shards.map((shard) => shard.reduce((sum, f) => sum + (weights as Record<string, number>)[f]!, 0));
      assert.ok(Math.max(...loads) - Math.min(...loads) <= 0.1 + 1e-9, `seed ${seed}: ${loads}`);
    }
    // A file the weights do not name (a new one) counts as the median file, not as nothing.
    const unnamed = plan(['test/new.test.ts', 'test/h1.test.ts', 'test/f1.test.ts', 'test/f2.test.ts'], 2, 1, {
      'test/h1.test.ts': 5,
      'test/f1.test.ts': 0.1,
      'test/f2.test.ts': 0.1,
    });
    assert.deepEqual(
      unnamed.find((shard) => shard.includes('test/h1.test.ts')),
      ['test/h1.test.ts'],
    );
  });

  it('run each file as a suite of its own, after the one before it has ended; a file that leaves the process changed, or a test outside its suite, fails by name', async (t) => {
    const dir = await tempDir(t, 'captf-shards-');
    const log = join(dir, 'log');
    const files: Record<string, string> = {
      'helper.ts': 'export const ready = Promise.resolve();\n',
      'first.test.ts': [
        "import { after, beforeEach, test } from 'node:test';",
        "import { appendFileSync } from 'node:fs';",
        "import { ready } from './helper.ts';",
        'const log = (line: string) => appendFileSync(process.env.SHARD_LOG!, `${line}\\n`);',
        "log('first loaded');",
        "beforeEach(() => log('first beforeEach'));",
        "after(async () => { await ready; await new Promise((r) => setTimeout(r, 50)); log('first after'); });",
        "test('first test', () => log('first test'));",
      ].join('\n'),
      'second.test.ts': [
        "import { test } from 'node:test';",
        "import { appendFileSync } from 'node:fs';",
        'const log = (line: string) => appendFileSync(process.env.SHARD_LOG!, `${line}\\n`);',
        "log('second loaded');",
        "test('second test', () => log('second test'));",
        "test('second fails', () => { throw new Error('the failure of second'); });",
      ].join('\n'),
      'leaks.test.ts': [
        "import { test } from 'node:test';",
        "test('sets a variable', () => { process.env.SHARD_LEAKED = 'secret value'; });",
        "test('adds a listener', () => { process.on('SIGUSR2', () => {}); });",
      ].join('\n'),
      // Its test registered from a promise the helper made as the first file loaded: outside this file's suite.
      'escapes.test.ts': [
        "import { test } from 'node:test';",
        "import { ready } from './helper.ts';",
        'await ready;',
        "test('escaped', () => {});",
      ].join('\n'),
    };
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    const tests = Object.keys(files).filter((name) => name.endsWith('.test.ts'));
    // A seed that runs first before escapes (so the helper's promise is made before escapes loads).
    const seed = [1, 2, 3, 4, 5, 6, 7, 8].find((s) => {
      const [order] = plan(tests, 1, s);
      return order!.indexOf('first.test.ts') < order!.indexOf('escapes.test.ts');
    })!;
    const env = { PATH: process.env.PATH ?? '', SHARD_LOG: log };
    const build = await runProcess(
      process.execPath,
      [BUILD_TESTS, 'out', '--shards', '1', '--seed', String(seed), ...tests],
      {
        cwd: dir,
        env,
      },
    );
    assert.equal(build.exitCode, 0, build.stderr);
    assert.deepEqual(build.stdout.split('\n'), ['out/shard-1.mjs']);
    const run = await runProcess(process.execPath, ['--test', '--test-reporter=spec', 'out/shard-1.mjs'], {
      cwd: dir,
      env,
    });
    assert.equal(run.exitCode, 1, run.stdout);
    const [order] = plan(tests, 1, seed);
    const report = run.stdout.split('✖ failing tests:')[0]!;

    // Each file a suite named by its path, in the seed's order; its failure under its name.
    const suites = [...report.matchAll(/^[✔✖] (\S+\.test\.ts) \(/gm)].map((m) => m[1]);
    assert.deepEqual(suites, order);
    assert.match(report, /^▶ second\.test\.ts\n(?:.*\n)*?\s+✖ second fails[^]*?the failure of second/m);
    assert.match(report, /^✔ first\.test\.ts/m);

    // Loaded in turn: a file's lines together, its `after` hook before the next file loads; its beforeEach its own.
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    const logged = order!.filter((f) => f === 'first.test.ts' || f === 'second.test.ts').map((f) => f.split('.')[0]);
    const expected = logged.flatMap((name) =>
      name === 'first'
        ? ['first loaded', 'first beforeEach', 'first test', 'first after']
        : ['second loaded', 'second test'],
    );
    assert.deepEqual(lines, expected);

    // What a file left changed, named (the variable, never its value), and the files after it run on.
    assert.match(
      report,
      /✖ leaks\.test\.ts[^]*?leaks\.test\.ts left the process changed for the files after it: process\.env\.SHARD_LEAKED set \(restore it in an after hook\); process has 1 'SIGUSR2' listeners, had 0/,
    );
    assert.doesNotMatch(run.stdout, /secret value/);
    assert.equal(run.exitCode, 1, 'a file that left the process changed fails the run, even with all its tests passed');
    // Registered in the first file's suite, which had ended (had it landed at the top, the shard's own check).
    assert.match(
      report,
      /^✖ escaped\n\s+(?:'test could not be started because its parent finished'|[^]*?the test "escaped" ran outside its file's suite)/m,
    );
  });
});
