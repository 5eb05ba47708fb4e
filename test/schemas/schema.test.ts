import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execa } from 'execa';

it('the committed JSON Schemas are generated from the zod schemas (npm run schema)', async () => {
  const run = await execa(process.execPath, ['--import', 'tsx', 'scripts/gen-schema.ts', '--check'], { reject: false, cwd: new URL('../..', import.meta.url).pathname });
  assert.equal(run.exitCode, 0, run.stderr);
});
