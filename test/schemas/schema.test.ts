import { it } from 'node:test';
import assert from 'node:assert/strict';
import { runProcess } from '../support/exec.ts';

it('the committed JSON Schemas are generated from the zod schemas (npm run schema)', async () => {
  const run = await runProcess(process.execPath, ['--import', 'tsx', 'scripts/generators/gen-schema.ts', '--check'], {
    cwd: new URL('../..', import.meta.url).pathname,
  });
  assert.equal(run.exitCode, 0, run.stderr);
});
