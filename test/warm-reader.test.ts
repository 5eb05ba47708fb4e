// The reader's warm-up in the startup snapshot's build (src/startup-snapshot.ts): its documents are a
// state and a plan the runner's readers take, so a change to what they accept fails here, not the build.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { warmReader } from '../src/warm-reader.ts';

test('the warm-up reads its state and plan through the runner readers without an error', async () => {
  await assert.doesNotReject(warmReader());
});
