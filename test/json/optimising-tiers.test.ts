// When the reads hold off V8's optimising compilers: only armed (the runner restored from its startup
// snapshot with node's own flags), only while a read is under way and the first MiB is not read, and
// always back on when the budget is spent or the last read ends, however it ended.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FIRST_BYTES, FirstReads, firstReads, noV8FlagsGiven } from '../../src/json/optimising-tiers.ts';
import { KEEP, readSelected } from '../../src/json/select-json.ts';

/** A FirstReads whose flags are recorded instead of set. */
function recorded(): { reads: FirstReads; flags: string[] } {
  const flags: string[] = [];
  return { reads: new FirstReads((flag) => flags.push(flag)), flags };
}

const OFF = ['--no-maglev', '--no-turbofan'];
const ON = ['--maglev', '--turbofan'];

describe('FirstReads', () => {
  test('does nothing until armed', () => {
    const { reads, flags } = recorded();
    reads.start();
    reads.read(10);
    reads.end();
    assert.deepEqual(flags, []);
  });

  test('off while the first MiB is read, on again as it is spent, not off for a later read', () => {
    const { reads, flags } = recorded();
    reads.arm('13.6.233.17-node.63', 'x64');
    reads.start();
    assert.deepEqual(flags, OFF);
    reads.read(FIRST_BYTES - 1);
    assert.deepEqual(flags, OFF);
    reads.read(1);
    assert.deepEqual(flags, [...OFF, ...ON]);
    reads.end();
    reads.start();
    reads.read(5);
    reads.end();
    assert.deepEqual(flags, [...OFF, ...ON]);
  });

  test('on again when a read ends before the budget is spent, off again for the next', () => {
    const { reads, flags } = recorded();
    reads.arm('13.6.233.17-node.63', 'arm64');
    reads.start();
    reads.read(1000);
    reads.end();
    assert.deepEqual(flags, [...OFF, ...ON]);
    reads.start();
    assert.deepEqual(flags, [...OFF, ...ON, ...OFF]);
    reads.end();
    assert.deepEqual(flags, [...OFF, ...ON, ...OFF, ...ON]);
  });

  test('overlapping reads: off once, on when the last one ends', () => {
    const { reads, flags } = recorded();
    reads.arm('13.6.233.17-node.63', 'x64');
    reads.start();
    reads.start();
    reads.end();
    assert.deepEqual(flags, OFF);
    reads.end();
    assert.deepEqual(flags, [...OFF, ...ON]);
  });

  test('TurboFan alone where Maglev is not on by default (V8 before 12, other architectures)', () => {
    for (const [v8, arch] of [
      ['11.3.244.8-node.38', 'x64'],
      ['13.6.233.17-node.63', 's390x'],
    ] as const) {
      const { reads, flags } = recorded();
      reads.arm(v8, arch);
      reads.start();
      reads.end();
      assert.deepEqual(flags, ['--no-turbofan', '--turbofan'], `${v8} ${arch}`);
    }
  });
});

test("the reader's own reads: off while one is under way, on again after it, also when the document is malformed", async () => {
  // The process's FirstReads, armed here as main.ts arms it: this test process's V8 flags go off and back on.
  firstReads.arm(process.versions.v8, process.arch);
  const seen: boolean[] = [];
  const source = (...chunks: string[]) =>
    (async function* () {
      for (const chunk of chunks) {
        seen.push(firstReads.off);
        yield Buffer.from(chunk);
      }
    })();
  await assert.rejects(readSelected(source('{"a": [1, 2', '}'), KEEP), /unexpected "\}"/);
  assert.deepEqual(seen, [true, true]);
  assert.equal(firstReads.off, false);
  assert.equal(await readSelected(source('{"a": ', '[1, 2]}'), KEEP), true);
  assert.deepEqual(seen, [true, true, true, true]);
  assert.equal(firstReads.off, false);
});

test('node is given no V8 flag: only the snapshot blob on its command line', () => {
  assert.equal(noV8FlagsGiven(['--snapshot-blob', '/b']), true);
  assert.equal(noV8FlagsGiven(['--snapshot-blob=/b']), true);
  assert.equal(noV8FlagsGiven([]), false);
  assert.equal(noV8FlagsGiven(['--snapshot-blob', '/b', '--no-turbofan']), false);
  assert.equal(noV8FlagsGiven(['--no-maglev', '--snapshot-blob=/b']), false);
});
