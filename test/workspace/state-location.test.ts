import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isWithin, localStateFile, stateFileSource, stateInWorkdir } from '../../src/workspace/state-location.ts';

describe('workspace: where a local backend keeps the state', () => {
  it('resolves path (default terraform.tfstate) in the default workspace, workspace_dir in any other, relative to the dir terraform runs in', () => {
    const cwd = '/w/root';
    assert.equal(localStateFile({ path: null, workspaceDir: null }, 'default', cwd), '/w/root/terraform.tfstate');
    assert.equal(
      localStateFile({ path: 'sub/s.tfstate', workspaceDir: 'ignored' }, 'default', cwd),
      '/w/root/sub/s.tfstate',
    );
    assert.equal(localStateFile({ path: '../up.tfstate', workspaceDir: null }, 'default', cwd), '/w/up.tfstate');
    assert.equal(
      localStateFile({ path: '/var/lib/s.tfstate', workspaceDir: null }, 'default', cwd),
      '/var/lib/s.tfstate',
    );
    assert.equal(
      localStateFile({ path: '/var/lib/s.tfstate', workspaceDir: null }, 'blue', cwd),
      '/w/root/terraform.tfstate.d/blue/terraform.tfstate',
    );
    assert.equal(
      localStateFile({ path: null, workspaceDir: '/states' }, 'blue', cwd),
      '/states/blue/terraform.tfstate',
    );
    assert.equal(
      stateFileSource({ path: null, workspaceDir: null }, 'default'),
      "no path: terraform's default terraform.tfstate in the module dir",
    );
    assert.equal(stateFileSource({ path: 'a', workspaceDir: null }, 'default'), 'path = "a"');
    assert.equal(
      stateFileSource({ path: null, workspaceDir: 'd' }, 'blue'),
      'workspace "blue" under workspace_dir = "d"',
    );
  });

  it('isWithin: the dir itself and what lies below it, never a sibling that shares a prefix', () => {
    assert.equal(isWithin('/w', '/w'), true);
    assert.equal(isWithin('/w/root/x', '/w'), true);
    assert.equal(isWithin('/w2/x', '/w'), false);
    assert.equal(isWithin('/x', '/w'), false);
  });

  it('stateInWorkdir follows symbolic links of the part that exists, and takes a file not created yet', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'captf-state-location-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const workdir = join(dir, 'work');
    await mkdir(join(workdir, 'root'), { recursive: true });
    await mkdir(join(dir, 'volume'));
    await symlink(workdir, join(dir, 'into-work'));
    await symlink(join(dir, 'volume'), join(workdir, 'root', 'out'));
    assert.equal(await stateInWorkdir(join(workdir, 'root', 'new', 'terraform.tfstate'), workdir), true);
    assert.equal(
      await stateInWorkdir(join(dir, 'into-work', 'root', 'terraform.tfstate'), workdir),
      true,
      'a link into the workdir',
    );
    assert.equal(
      await stateInWorkdir(join(workdir, 'root', 'out', 'terraform.tfstate'), workdir),
      false,
      'a link out of it, to a volume',
    );
    assert.equal(await stateInWorkdir(join(dir, 'volume', 'terraform.tfstate'), workdir), false);
    assert.equal(
      await stateInWorkdir(join(dir, 'into-work', 'root', 'terraform.tfstate'), join(dir, 'into-work')),
      true,
      'a workdir given through a link',
    );
  });
});
