// readRegularFile judges the file it opened: a FIFO is refused without waiting for a writer, a
// device without reading it, a link without following it; a regular file is read up to the bound.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runChecked } from '../support/exec.ts';
import { NotRegularFileError, readRegularFile } from '../../src/util/regular-file.ts';

const dir = await mkdtemp(join(tmpdir(), 'captf-regular-'));

describe('readRegularFile', () => {
  it('reads a regular file whole, or its first `most` bytes', async () => {
    await writeFile(join(dir, 'f'), 'abcdef');
    assert.equal((await readRegularFile(join(dir, 'f'), 100)).toString(), 'abcdef');
    assert.equal((await readRegularFile(join(dir, 'f'), 4)).toString(), 'abcd');
  });

  const refused: [string, () => Promise<string>, RegExp][] = [
    [
      'a FIFO (no writer: the open must not wait)',
      async () => (await runChecked('mkfifo', [join(dir, 'fifo')]), join(dir, 'fifo')),
      /a special file/,
    ],
    ['a device', async () => '/dev/zero', /a special file/],
    ['a directory', async () => (await mkdir(join(dir, 'd')), join(dir, 'd')), /a directory/],
    [
      'a link to a regular file',
      async () => (await symlink(join(dir, 'f'), join(dir, 'link')), join(dir, 'link')),
      /a symbolic link/,
    ],
  ];
  for (const [what, make, message] of refused) {
    it(`refuses ${what}`, async () => {
      const path = await make();
      await assert.rejects(
        readRegularFile(path, 1024),
        (error: unknown) => error instanceof NotRegularFileError && message.test(error.message),
      );
    });
  }

  it('throws ENOENT for a missing file, as open does', async () => {
    await assert.rejects(readRegularFile(join(dir, 'missing'), 10), { code: 'ENOENT' });
  });
});
