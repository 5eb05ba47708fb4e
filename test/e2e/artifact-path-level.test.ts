// --plan-artifact and --backup name one stored object's directory. One level too high (the store's
// directory) or too low (a file inside the object) is a usage error (exit 2) saying what it found and
// the path that would work, never "missing" or "has free space"; nothing is applied or restored.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Result } from '../../src/schemas/result.ts';
import { modules } from '../support/tf-modules.ts';
import { applied, IMAGE } from './apply.support.ts';
import { explain, type RunnerRun } from '../support/runner.ts';

function wrongLevel(run: RunnerRun, found: string, use: string, said: RegExp) {
  assert.equal(run.exitCode, 2, explain(run));
  const result = Result.parse(run.result);
  assert.equal(result.outcome, 'invalid');
  assert.equal(result.reason, 'ArtifactPathWrongLevel');
  assert.match(result.message, said);
  assert.ok(result.message.includes(use), result.message);
  assert.equal(result.error!.detail!.found, found);
  assert.equal(result.error!.detail!.use, use);
  assert.equal(result.applied, false);
}

describe('an artifact or backup path one directory level off', () => {
  it('apply --plan-artifact: the artifacts dir, or the manifest inside the artifact', async (t) => {
    const s = await applied(t);
    await s.useModule(modules.update);
    const plan = await s.run('plan', ['--image', IMAGE, '--artifacts', join(s.dir, 'artifacts')]);
    assert.equal(plan.exitCode, 0, explain(plan));
    const artifact = join(plan.result!.planArtifact!.location, plan.result!.planArtifact!.object);
    const before = await readFile(s.state);
    const apply = (ref: string) =>
      s.run('apply', ['--image', IMAGE, '--plan-artifact', ref, '--approved-plan-hash', plan.result!.planHash!]);
    wrongLevel(
      await apply(dirname(artifact)),
      'storeDirectory',
      artifact,
      /is a directory of stored objects, not one object: it holds plan-/,
    );
    wrongLevel(
      await apply(join(artifact, 'manifest.json')),
      'objectFile',
      artifact,
      /is the manifest\.json of a stored object, not the object/,
    );
    wrongLevel(
      await apply(join(artifact, 'chunk-00000')),
      'objectFile',
      artifact,
      /is the chunk-00000 of a stored object/,
    );
    assert.deepEqual(await readFile(s.state), before, 'nothing was applied');
    // The object's own directory still applies: the refusals were the path.
    assert.equal((await apply(artifact)).exitCode, 0);
  });

  it('restore --backup: the backups dir', async (t) => {
    const s = await applied(t);
    const backups = join(s.dir, 'backups');
    await s.useModule(modules.update);
    const second = await s.run('apply', ['--image', IMAGE, '--backups', backups]);
    assert.equal(second.exitCode, 0, explain(second));
    const backup = join(second.result!.backup!.location, second.result!.backup!.object);
    const before = await readFile(s.state);
    wrongLevel(
      await s.run('restore', ['--backup', backups, '--backups', backups]),
      'storeDirectory',
      backup,
      /is a directory of stored objects/,
    );
    assert.deepEqual(await readFile(s.state), before, 'nothing was restored');
  });
});
