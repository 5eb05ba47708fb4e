// `npm run bench`'s options (bench/run.ts lists them, BENCHMARKS.md's commands use them): their defaults, and the
// values the parts would be handed a wrong size or count for, refused before anything is built or run.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { parseOptions } from '../../bench/lib/harness.ts';

test('the defaults: every part, the sizes and counts bench/run.ts lists, results in $TMPDIR', () => {
  const o = parseOptions([]);
  assert.deepEqual([...o.only], ['apply', 'start', 'memory', 'output', 'breakdown', 'policy', 'reader']);
  assert.deepEqual(o.sizes, [
    { resources: 20, instances: 25, pairs: 9 },
    { resources: 100, instances: 100, pairs: 5 },
  ]);
  assert.equal(o.startRounds, 20);
  assert.deepEqual(o.memoryMib, [100, 1024]);
  assert.equal(o.outputMib, 200);
  assert.deepEqual(o.breakdownSize, { resources: 20, instances: 25, pairs: 5 });
  assert.equal(o.breakdownRuns, 5);
  assert.equal(o.readerRounds, 15);
  assert.equal(o.node, process.execPath);
  assert.equal(o.runner, undefined);
  assert.equal(o.terraform, 'terraform');
  assert.equal(o.jsonOut, join(tmpdir(), 'captf-bench.json'));
  assert.equal(o.keep, false);
  assert.equal(o.snapshot, false);
  assert.equal(o.verifiedTerraform, false);
  assert.equal(o.noChangeOnly, false);
});

test('a small run as BENCHMARKS.md writes it: the parts named, sizes with and without pairs, --node made absolute', () => {
  const o = parseOptions([
    ...['--only', 'apply,reader', '--sizes', '2x2:1, 3x4', '--reader-rounds', '2', '--memory-mib', '5,10'],
    ...['--node', 'bin/node', '--json-out', '-', '--snapshot', '--keep', '--verified-terraform', '--no-change-only'],
  ]);
  assert.deepEqual([...o.only], ['apply', 'reader']);
  assert.deepEqual(o.sizes, [
    { resources: 2, instances: 2, pairs: 1 },
    { resources: 3, instances: 4, pairs: 5 },
  ]);
  assert.equal(o.readerRounds, 2);
  assert.deepEqual(o.memoryMib, [5, 10]);
  assert.equal(o.node, resolve('bin/node'));
  assert.equal(o.jsonOut, '-');
  assert.equal(o.snapshot, true);
  assert.equal(o.keep, true);
  assert.equal(o.verifiedTerraform, true);
  assert.equal(o.noChangeOnly, true);
});

test('refused, each with what is wrong: an unknown part or option, a size past 100 instances, pairs where none go, a count not a positive whole number', () => {
  const refusals: [string[], RegExp][] = [
    [['--only', 'apply,foo'], /--only: "foo" is not one of apply, start, memory, output, breakdown, policy, reader/],
    [['--sizes', '20x25:9,2x200'], /"2x200" is not RESOURCESxINSTANCES\[:PAIRS\] with INSTANCES ≤ 100/],
    [['--sizes', '20x25:0'], /PAIRS must be a positive whole number, not "0"/],
    [['--breakdown-size', '2x2:3'], /"2x2:3" is not RESOURCESxINSTANCES with INSTANCES ≤ 100/],
    [['--start-rounds', '0'], /--start-rounds must be a positive whole number, not "0"/],
    [['--memory-mib', '100,x'], /--memory-mib must be a positive whole number, not "x"/],
    [['--output-mib', '1.5'], /--output-mib must be a positive whole number, not "1.5"/],
    [['--breakdown-runs=-1'], /--breakdown-runs must be a positive whole number, not "-1"/],
    [['--reader-rounds', ''], /--reader-rounds must be a positive whole number, not ""/],
    [['--pairs', '3'], /Unknown option '--pairs'/],
  ];
  for (const [args, message] of refusals) assert.throws(() => parseOptions(args), message, args.join(' '));
});
