// Resolution inside a tree laid out like an image (contract check --root): links resolve as they
// would in the image, never on this machine.
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { inTree } from '../../src/workspace/path-resolution.ts';
import { tempDir } from '../support/tf-modules.ts';

describe('inTree', () => {
  const temp = (t: TestContext) => tempDir(t, 'captf-in-tree-');

  it("an absolute link starts again at the tree's root, and `..` never climbs above it", async (t) => {
    const root = await temp(t);
    await mkdir(join(root, 'srv/module'), { recursive: true });
    await writeFile(join(root, 'srv/module/main.tf'), '');
    await mkdir(join(root, 'captf'));
    await symlink('/srv/module', join(root, 'captf/module'));
    await symlink('../../../../../../../srv/module/main.tf', join(root, 'srv/up.tf'));
    const { resolve, display } = await inTree(root);
    assert.equal(await resolve(join(root, 'captf/module')), join(root, 'srv/module'));
    assert.equal(await resolve(join(root, 'captf/module/main.tf')), join(root, 'srv/module/main.tf'));
    assert.equal(await resolve(join(root, 'srv/up.tf')), join(root, 'srv/module/main.tf'));
    assert.equal(display(join(root, 'srv/module/main.tf')), '/srv/module/main.tf');
    assert.equal(display(root), '/');
  });

  it('a link to a path of this machine the tree lacks leads nowhere; a cycle is ELOOP; a file is no directory', async (t) => {
    const root = await temp(t);
    const elsewhere = await temp(t);
    await writeFile(join(elsewhere, 'main.tf'), '');
    await symlink(join(elsewhere, 'main.tf'), join(root, 'host.tf'));
    await symlink('/b', join(root, 'a'));
    await symlink('/a', join(root, 'b'));
    await writeFile(join(root, 'file'), '');
    const { resolve } = await inTree(root);
    await assert.rejects(resolve(join(root, 'host.tf')), { code: 'ENOENT' });
    await assert.rejects(resolve(join(root, 'a')), { code: 'ELOOP' });
    await assert.rejects(resolve(join(root, 'file/x')), { code: 'ENOTDIR' });
    await assert.rejects(
      resolve(join(elsewhere, 'main.tf')),
      { code: 'EXDEV' },
      'a path outside the tree is never resolved',
    );
  });
});
