// The module tree the runner copies: each path it cannot copy faithfully has one problem, saying why.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readModuleTree } from '../../src/workspace/module-tree.ts';
import { inTree } from '../../src/workspace/path-resolution.ts';

const options = { notCopied: new Set<string>(), runnerFiles: new Set<string>() };

describe('readModuleTree: links leading outside the module', () => {
  const made: string[] = [];
  after(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));
  const temp = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'captf-module-tree-'));
    made.push(dir);
    return dir;
  };

  it('a link to a file or a directory outside: one outsideLink problem each, and the copy holds what it leads to', async () => {
    const outside = await temp();
    await writeFile(join(outside, 'shared.tf'), '# shared\n');
    await mkdir(join(outside, 'mods'));
    await writeFile(join(outside, 'mods', 'm.tf'), '# module\n');
    const module = await temp();
    await symlink(join(outside, 'shared.tf'), join(module, 'shared.tf'));
    await symlink(join(outside, 'mods'), join(module, 'mods'));
    const tree = await readModuleTree(module, options);
    assert.deepEqual(
      tree.problems.map((p) => [p.kind, p.file]),
      [
        ['outsideLink', join(module, 'mods')],
        ['outsideLink', join(module, 'shared.tf')],
      ],
    );
    assert.deepEqual(
      tree.entries.map((e) => [e.path, e.kind]),
      [
        ['mods', 'dir'],
        [join('mods', 'm.tf'), 'file'],
        ['shared.tf', 'file'],
      ],
    );
  });

  it('a link to a special file outside (/dev/zero): only the problem that leaves it out, never "copied" as well', async () => {
    const module = await temp();
    await symlink('/dev/zero', join(module, 'dev-zero.tf'));
    const tree = await readModuleTree(module, options);
    assert.deepEqual(tree.problems, [
      {
        kind: 'unusable',
        file: join(module, 'dev-zero.tf'),
        what: 'is neither a file nor a directory (a link to a special file, /dev/zero)',
      },
    ]);
    assert.deepEqual(tree.entries, []);
  });

  it('a link to the directory outside that holds the module: copied (outsideLink), but for the module itself inside it (a cycle, left out)', async () => {
    const parent = await temp();
    const module = join(parent, 'module');
    await mkdir(module);
    await symlink(parent, join(module, 'up'));
    const tree = await readModuleTree(module, options);
    assert.deepEqual(
      tree.problems.map((p) => [p.kind, p.file, p.what]),
      [
        ['outsideLink', join(module, 'up'), `is a symbolic link that leads outside the module dir (to ${parent})`],
        ['unusable', join(module, 'up', 'module'), 'is a symbolic link to a directory that holds it (a cycle)'],
      ],
    );
    assert.deepEqual(
      tree.entries.map((e) => e.path),
      ['up'],
    );
  });

  it('a name that is not valid UTF-8: named as such, its bytes escaped; the other files are read', async () => {
    const module = await temp();
    await writeFile(join(module, 'main.tf'), '# main\n');
    await mkdir(join(module, 'sub'));
    await writeFile(
      Buffer.concat([Buffer.from(join(module, 'sub', 'bad-')), Buffer.from([0xff, 0xe2, 0x82]), Buffer.from('-€.tf')]),
      '',
    );
    const tree = await readModuleTree(module, options);
    assert.deepEqual(tree.problems, [
      {
        kind: 'unusable',
        file: join(module, 'sub', 'bad-\\xff\\xe2\\x82-€.tf'),
        what: 'has a name that is not valid UTF-8',
      },
    ]);
    assert.deepEqual(
      tree.entries.map((e) => e.path),
      ['main.tf', 'sub'],
    );
  });

  it('in a tree laid out like an image, an absolute link resolves inside the tree', async () => {
    const root = await temp();
    const module = join(root, 'captf/module');
    await mkdir(join(module, 'real'), { recursive: true });
    await writeFile(join(module, 'real', 'main.tf'), '# main\n');
    await mkdir(join(root, 'etc'));
    await writeFile(join(root, 'etc', 'shared.tf'), "# the tree's\n");
    await symlink('/captf/module/real/main.tf', join(module, 'main.tf'));
    await symlink('/etc/shared.tf', join(module, 'shared.tf'));
    const tree = await readModuleTree(module, { ...options, resolution: await inTree(root) });
    assert.deepEqual(
      tree.problems.map((p) => [p.kind, p.file, p.what]),
      [
        [
          'outsideLink',
          join(module, 'shared.tf'),
          'is a symbolic link that leads outside the module dir (to /etc/shared.tf)',
        ],
      ],
    );
    assert.deepEqual(
      tree.entries.map((e) => [e.path, e.source]),
      [
        ['main.tf', join(module, 'real', 'main.tf')],
        ['real', join(module, 'real')],
        [join('real', 'main.tf'), join(module, 'real', 'main.tf')],
        ['shared.tf', join(root, 'etc', 'shared.tf')],
      ],
    );
  });
});
