// The lineage and serial of the state a saved plan was made against, read from the plan file's zip
// (`tfstate`, not `tfstate-prev`, whose header terraform leaves empty), and `tfstate-prev` copied out
// whole (the state as the backend held it: src/steps/state-planned.ts); a zip or an entry it cannot read is
// a PlanFileUnreadable, a file it cannot write is not. The zips are built here
// entry by entry, stored or deflated as terraform's archive/zip writes them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  copyPlanEntry,
  PlanFileUnreadable,
  planPriorState,
  PREVIOUS_STATE_ENTRY,
  type PositionalFile,
} from '../../src/workspace/plan-prior-state.ts';
import { tempDir } from '../support/tf-modules.ts';

interface ZipEntry {
  name: string;
  data: Buffer;
  deflate?: boolean;
}

function zip(entries: ZipEntry[], comment = ''): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data, deflate = true } of entries) {
    const stored = deflate ? deflateRawSync(data) : data;
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(deflate ? 8 : 0, 8);
    local.writeUInt32LE(stored.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(deflate ? 8 : 0, 10);
    central.writeUInt32LE(stored.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, stored);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + stored.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(Buffer.byteLength(comment), 20);
  return Buffer.concat([...locals, directory, end, Buffer.from(comment)]);
}

const inMemory = (bytes: Buffer): PositionalFile => ({
  size: async () => bytes.length,
  read: async (position, length) => bytes.subarray(position, position + length),
});

/** A state document as terraform's statefile writer lays it out. */
const state = (serial: number, lineage: string, resources = '[]') =>
  Buffer.from(
    `{\n  "version": 4,\n  "terraform_version": "1.11.4",\n  "serial": ${serial},\n  "lineage": "${lineage}",\n  "outputs": {},\n  "resources": ${resources},\n  "check_results": null\n}\n`,
  );

const LINEAGE = 'eb653eb0-7aca-54ee-3d93-e530738f0bb1';
const big = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ mode: 'managed', name: `r${i}` })));

describe('planPriorState', () => {
  it("reads tfstate's lineage and serial, never tfstate-prev's stub header", async () => {
    const plan = zip([
      { name: 'tfplan', data: Buffer.from('protobuf') },
      { name: 'tfstate-prev', data: state(0, '') },
      { name: 'tfstate', data: state(7, LINEAGE, big) },
      { name: 'tfconfig/m-/main.tf', data: Buffer.from('resource "terraform_data" "a" {}') },
    ]);
    assert.deepEqual(await planPriorState(inMemory(plan)), { serial: 7, lineage: LINEAGE });
  });

  it('a stored entry, and a zip comment after the directory', async () => {
    const plan = zip([{ name: 'tfstate', data: state(3, LINEAGE), deflate: false }], 'a comment');
    assert.deepEqual(await planPriorState(inMemory(plan)), { serial: 3, lineage: LINEAGE });
  });

  it('a plan made against no state: lineage "" and serial 0', async () => {
    const plan = zip([{ name: 'tfstate', data: state(0, '') }]);
    assert.deepEqual(await planPriorState(inMemory(plan)), { serial: 0, lineage: '' });
  });

  it('a file that is no zip (an encrypted plan) says nothing', async () => {
    assert.equal(await planPriorState(inMemory(Buffer.from('{"format_version":"1.2"}'))), 'notZip');
    assert.equal(await planPriorState(inMemory(Buffer.alloc(0))), 'notZip');
  });

  it('refuses a zip without tfstate, or whose tfstate does not start as a state of version 4', async () => {
    await assert.rejects(planPriorState(inMemory(zip([{ name: 'tfstate-prev', data: state(1, LINEAGE) }]))), {
      name: 'PlanFileUnreadable',
      message: /no tfstate entry/,
    });
    await assert.rejects(
      planPriorState(inMemory(zip([{ name: 'tfstate', data: Buffer.from('{"version": 5, "serial": 1}') }]))),
      { name: 'PlanFileUnreadable', message: /does not start as a state of version 4/ },
    );
  });

  it('refuses an entry compressed by a method terraform does not write, read or copied (PlanFileUnreadable)', async (t) => {
    const plan = zip([
      { name: 'tfstate', data: state(1, LINEAGE) },
      { name: PREVIOUS_STATE_ENTRY, data: state(0, '') },
    ]);
    // Method 12 (bzip2) in both entries' local and central headers.
    for (
      let at = plan.indexOf(Buffer.from([0x50, 0x4b, 3, 4]));
      at !== -1;
      at = plan.indexOf(Buffer.from([0x50, 0x4b, 3, 4]), at + 4)
    )
      plan.writeUInt16LE(12, at + 8);
    for (
      let at = plan.indexOf(Buffer.from([0x50, 0x4b, 1, 2]));
      at !== -1;
      at = plan.indexOf(Buffer.from([0x50, 0x4b, 1, 2]), at + 4)
    )
      plan.writeUInt16LE(12, at + 10);
    await assert.rejects(planPriorState(inMemory(plan)), {
      name: 'PlanFileUnreadable',
      message: 'its tfstate entry is compressed by method 12, not deflate',
    });
    const dir = await tempDir(t);
    await assert.rejects(copyPlanEntry(inMemory(plan), PREVIOUS_STATE_ENTRY, join(dir, 'prev')), {
      name: 'PlanFileUnreadable',
      message: 'its tfstate-prev entry is compressed by method 12, not deflate',
    });
  });

  it("refuses a tfstate that does not inflate, as the file's fault (PlanFileUnreadable), not as a bug", async () => {
    const plan = zip([{ name: 'tfstate', data: state(1, LINEAGE) }]);
    const data = plan.indexOf(Buffer.from('tfstate')) + 'tfstate'.length;
    plan.fill(0xff, data, data + 8); // a deflate block of reserved type
    await assert.rejects(planPriorState(inMemory(plan)), (error: Error) => {
      assert.ok(error instanceof PlanFileUnreadable, String(error));
      assert.match(error.message, /its tfstate entry does not inflate/);
      return true;
    });
  });
});

describe('copyPlanEntry', () => {
  const previous = state(0, '', '[{"mode":"managed","type":"terraform_data","name":"a","instances":[]}]');

  it('writes tfstate-prev inflated, or stored, to a new private file, in pieces: an entry of several MiB', async (t) => {
    const dir = await tempDir(t);
    // Random text compresses little: the deflated entry too is read in more than one piece.
    const large = state(
      0,
      '',
      `[{"mode":"managed","type":"terraform_data","name":"${randomBytes(1_600_000).toString('hex')}","instances":[]}]`,
    );
    for (const data of [previous, large])
      for (const deflate of [true, false]) {
        const into = join(dir, `prev-${data.length}-${deflate}.json`);
        const plan = zip([
          { name: 'tfplan', data: Buffer.from('plan') },
          { name: PREVIOUS_STATE_ENTRY, data, deflate },
        ]);
        let reads = 0;
        const file: PositionalFile = {
          ...inMemory(plan),
          read: async (position, length) => (reads++, plan.subarray(position, position + length)),
        };
        assert.equal(await copyPlanEntry(file, PREVIOUS_STATE_ENTRY, into), 'written');
        assert.ok((await readFile(into)).equals(data), `${data.length} bytes, deflate ${deflate}`);
        assert.equal((await stat(into)).mode & 0o777, 0o600);
        // The directory's three reads (its tail, the directory, the local header), then the entry in 1 MiB pieces.
        if (data === large) assert.ok(reads >= 3 + 2, `${reads} reads`);
      }
  });

  it('says what it could not copy, and never writes through a file that exists', async (t) => {
    const dir = await tempDir(t);
    assert.equal(
      await copyPlanEntry(inMemory(Buffer.from('no zip at all')), PREVIOUS_STATE_ENTRY, join(dir, 'a')),
      'notZip',
    );
    const withoutPrevious = zip([{ name: 'tfstate', data: state(1, 'l') }]);
    assert.equal(await copyPlanEntry(inMemory(withoutPrevious), PREVIOUS_STATE_ENTRY, join(dir, 'b')), 'missing');
    const plan = zip([{ name: PREVIOUS_STATE_ENTRY, data: previous }]);
    await writeFile(join(dir, 'taken'), 'x');
    await assert.rejects(copyPlanEntry(inMemory(plan), PREVIOUS_STATE_ENTRY, join(dir, 'taken')), /EEXIST/);
    // An entry whose size runs past the end of the file is refused, not read short.
    const cut = plan.subarray(0, plan.length);
    cut.writeUInt32LE(plan.length * 4, plan.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])) + 20);
    await assert.rejects(copyPlanEntry(inMemory(cut), PREVIOUS_STATE_ENTRY, join(dir, 'c')), {
      name: 'PlanFileUnreadable',
      message: /runs past the end/,
    });
  });

  it("an entry that does not inflate is the file's fault (PlanFileUnreadable); a file it cannot write is not", async (t) => {
    const dir = await tempDir(t);
    const plan = zip([{ name: PREVIOUS_STATE_ENTRY, data: previous }]);
    const data = plan.indexOf(Buffer.from(PREVIOUS_STATE_ENTRY)) + PREVIOUS_STATE_ENTRY.length;
    const damaged = Buffer.from(plan);
    damaged.fill(0xff, data, data + 8);
    await assert.rejects(copyPlanEntry(inMemory(damaged), PREVIOUS_STATE_ENTRY, join(dir, 'd')), (error: Error) => {
      assert.ok(error instanceof PlanFileUnreadable, String(error));
      assert.match(error.message, /its tfstate-prev entry does not inflate \(/);
      return true;
    });
    await assert.rejects(
      copyPlanEntry(inMemory(plan), PREVIOUS_STATE_ENTRY, join(dir, 'no-dir', 'e')),
      (error: Error) => {
        assert.ok(!(error instanceof PlanFileUnreadable), 'a write that fails is thrown as it is');
        assert.equal((error as NodeJS.ErrnoException).code, 'ENOENT');
        return true;
      },
    );
  });
});
