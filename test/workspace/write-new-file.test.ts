// The runner's own files are created new: a file or a link planted at the path (a module's file, a
// link to the state in a --workdir someone prepared) is never written over or through.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, symlink, writeFile, lstat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeNewFile } from '../../src/workspace/workspace.ts';

describe('writeNewFile', () => {
  it('creates a 0600 file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'captf-wx-'));
    await writeNewFile(join(dir, 'new.tf'), 'x');
    assert.equal((await lstat(join(dir, 'new.tf'))).mode & 0o777, 0o600);
  });

  it('never writes through a link planted at its path, even one to a missing file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'captf-wx-'));
    const victim = join(dir, 'terraform.tfstate');
    await writeFile(victim, 'the state');
    await symlink(victim, join(dir, 'link.tf'));
    await symlink(join(dir, 'not-yet'), join(dir, 'dangling.tf'));
    await assert.rejects(writeNewFile(join(dir, 'link.tf'), 'injected'), { code: 'EEXIST' });
    await assert.rejects(writeNewFile(join(dir, 'dangling.tf'), 'injected'), { code: 'EEXIST' });
    assert.equal(await readFile(victim, 'utf8'), 'the state');
    await assert.rejects(lstat(join(dir, 'not-yet')), { code: 'ENOENT' });
  });

  it('never writes over an existing file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'captf-wx-'));
    await writeFile(join(dir, 'f'), 'before');
    await assert.rejects(writeNewFile(join(dir, 'f'), 'after'), { code: 'EEXIST' });
    assert.equal(await readFile(join(dir, 'f'), 'utf8'), 'before');
  });
});
