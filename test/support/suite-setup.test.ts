// The shared setup helper: made once for the suite's tests, its cleanups run when the suite ends.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { sharedSetup } from './suite-setup.ts';
import { tempDir } from './tf-modules.ts';

let made = 0;
let madeDir: string | undefined;

describe('a setup shared by a suite', () => {
  const setup = sharedSetup(async (suite) => {
    made++;
    madeDir = await tempDir(suite);
    return madeDir;
  });

  test('is made on first use', async () => {
    assert.equal(made, 0);
    assert.ok(existsSync(await setup()));
    assert.equal(made, 1);
  });

  test('is the same for the next test, and its temp dir outlives the test that made it', async () => {
    assert.equal(await setup(), madeDir);
    assert.ok(existsSync(madeDir!));
    assert.equal(made, 1);
  });
});

test('is undone when its suite ends', () => {
  assert.equal(made, 1);
  assert.equal(existsSync(madeDir!), false);
});
