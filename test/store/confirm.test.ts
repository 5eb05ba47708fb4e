// confirmArtifact: after its commit and the retention that follows, an object a result is about to
// name is still complete, with the manifest that was written. Two plans of one object at once
// (each keeps one plan) and a store that replaces a manifest are caught before a result names it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DirStore } from '../../src/store/dir-store.ts';
import { confirmArtifact, writeArtifact } from '../../src/store/artifact-write.ts';
import { pruneObjects } from '../../src/store/retention.ts';
import { tempDir } from '../support/tf-modules.ts';
import { planMeta, rejectsWith } from './stores.support.ts';

const GONE = 'a newer plan deleted it';

async function writePlan(store: DirStore, object: string, content = `plan of ${object}`) {
  const data = Buffer.from(content);
  return writeArtifact(store, object, [{ name: 'plan.tfplan', data }], planMeta(data));
}

describe('confirmArtifact', () => {
  it("two plans at once: the one whose artifact the other's retention deleted is refused, the other confirmed", async (t) => {
    const store = new DirStore(await tempDir(t));
    const first = await writePlan(store, 'plan-1');
    const second = await writePlan(store, 'plan-2');
    // The second plan's retention runs first: it keeps one plan, its own.
    await pruneObjects(store, { keep: 1, prefix: 'plan-', protect: ['plan-2'] });
    await confirmArtifact(store, second, GONE);
    await pruneObjects(store, { keep: 1, prefix: 'plan-', protect: ['plan-1'] });
    const refused = await rejectsWith(
      confirmArtifact(store, first, GONE),
      'io',
      'ArtifactWriteUnverified',
      /after its commit the store no longer holds it: a newer plan deleted it/,
    );
    assert.deepEqual(refused.detail, { location: store.location, object: 'plan-1' });
  });

  it('refuses an object whose manifest was replaced after the commit', async (t) => {
    const store = new DirStore(await tempDir(t));
    const written = await writePlan(store, 'plan-1');
    await store.deleteObject('plan-1');
    const again = await writePlan(store, 'plan-1', 'another plan');
    await confirmArtifact(store, again, GONE);
    await rejectsWith(
      confirmArtifact(store, written, GONE),
      'io',
      'ArtifactWriteUnverified',
      /holds another manifest under its name/,
    );
  });
});
