// contract check on a module holding what every op refuses (a FIFO, a device link named *.tf): the
// check ends, names each file in the files row, and does not try to copy the module for init.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { runChecked } from '../../support/exec.ts';
import { runContractCheck } from '../../../src/commands/contract-check/check.ts';
import { imageTree, POOL_MODULE } from './image-trees.support.ts';

test('a FIFO and a link to /dev/zero named *.tf: files fails naming both, init and validate are skipped, no internal error', {
  timeout: 60_000,
}, async (t) => {
  const tree = await imageTree(t, POOL_MODULE);
  await runChecked('mkfifo', [join(tree.module, 'extra.tf')]);
  await symlink('/dev/zero', join(tree.module, 'zero.tf'));
  // The module source tree: the link leads to this machine's /dev/zero.
  const report = await runContractCheck({ moduleDir: tree.module, sourceTree: true, kind: 'pool', env: tree.env });
  const rows = Object.fromEntries(report.checks.map((c) => [c.name, c]));
  assert.equal(rows.module!.status, 'pass');
  assert.equal(rows.files!.status, 'fail');
  assert.match(rows.files!.message, /extra\.tf is neither a file nor a directory \(a special file\)/);
  assert.match(
    rows.files!.message,
    /zero\.tf is neither a file nor a directory \(a link to a special file, \/dev\/zero\)/,
  );
  for (const name of ['init', 'validate'] as const)
    assert.match(rows[name]!.message, /not run: the module's files cannot be copied/);

  // The same module in a tree laid out like an image: the link leads to the tree's /dev/zero, which it lacks.
  const inTree = Object.fromEntries(
    (await runContractCheck({ root: tree.root, kind: 'pool', env: tree.env })).checks.map((c) => [c.name, c]),
  );
  assert.match(inTree.files!.message, /zero\.tf is a symbolic link that leads nowhere \(ENOENT\)/);
  assert.match(inTree.files!.message, /extra\.tf is neither a file nor a directory \(a special file\)/);
});
