import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { RunnerError } from '../../src/errors.ts';
import { readInputs, TFVARS_FILE } from '../../src/inputs/index.ts';
import { switchGeneration, writeGeneration, writeInputsDir } from './layout.support.ts';
import { tempDir } from '../support/tf-modules.ts';

let root: string;
let count = 0;
before(async () => {
  root = await tempDir();
});
after(() => rm(root, { recursive: true, force: true }));

/** A fresh plain inputs dir holding these files. */
async function inputsDir(entries: Record<string, string> = {}): Promise<string> {
  const dir = join(root, `dir-${count++}`);
  await writeInputsDir(dir, new Map(Object.entries(entries).map(([name, text]) => [name, Buffer.from(text)])), 'plain');
  return dir;
}

async function readError(dir: string): Promise<RunnerError> {
  const error = await readInputs(dir).then(
    () => assert.fail(`read ${dir}`),
    (error: unknown) => error,
  );
  assert.ok(error instanceof RunnerError, String(error));
  return error;
}

async function assertRefused(dir: string, message: RegExp): Promise<void> {
  const error = await readError(dir);
  assert.equal(error.kind, 'usage');
  assert.equal(error.reason, 'InputsInvalid');
  assert.match(error.message, message);
}

test('a missing dir, or a file in its place, is a usage error that says how to fix it', async () => {
  const missing = join(root, 'missing');
  await assertRefused(
    missing,
    new RegExp(
      `^the inputs dir ${missing} does not exist: mount the inputs Secret or ConfigMap there, or pass --inputs DIR`,
    ),
  );
  const file = join(await inputsDir({ x: '' }), 'x');
  await assertRefused(file, /is not a directory: mount the inputs/);
});

test('an unreadable dir is a usage error', { skip: process.getuid?.() === 0 && 'root reads everything' }, async () => {
  const dir = await inputsDir({ [TFVARS_FILE]: '{}' });
  await chmod(dir, 0o000);
  try {
    await assertRefused(dir, /cannot read the inputs dir .* \(EACCES\): make it readable/);
  } finally {
    await chmod(dir, 0o755);
  }
});

test('a subdirectory is refused, also behind a key symlink', async () => {
  const plain = await inputsDir({ [TFVARS_FILE]: '{}' });
  await mkdir(join(plain, 'nested'));
  await assertRefused(
    plain,
    /^input "nested" in .* is a directory: inputs are flat files, one per Secret or ConfigMap key/,
  );

  // A Secret volume with items[].path "conf/a" shows a key symlink to a directory.
  const mount = join(root, `dir-${count++}`);
  await writeInputsDir(mount, new Map([[TFVARS_FILE, Buffer.from('{}')]]), 'kubernetes-mount');
  await mkdir(join(mount, '..data', 'conf'));
  await symlink('..data/conf', join(mount, 'conf'));
  await assertRefused(mount, /^input "conf" in .* is a directory/);
});

test('a symlink is followed only inside the inputs dir', async () => {
  const dir = await inputsDir({ real: 'content' });
  await symlink('real', join(dir, 'alias'));
  const snapshot = await readInputs(dir);
  assert.equal(Buffer.from(snapshot.files.get('alias')!).toString(), 'content');

  await symlink('/etc/hostname', join(dir, 'outside'));
  await assertRefused(
    dir,
    /^input "outside" in .* is a symlink to \/etc\/hostname, outside the inputs dir: copy the file into the inputs dir instead/,
  );

  const escaping = await inputsDir({});
  await writeFile(join(root, 'neighbour'), 'x');
  await symlink('../neighbour', join(escaping, 'up'));
  await assertRefused(escaping, /is a symlink to .*neighbour, outside the inputs dir/);

  const dangling = await inputsDir({});
  await symlink('nowhere', join(dangling, 'broken'));
  await assertRefused(dangling, /^input "broken" in .* is a symlink to a missing file: fix or remove the link/);
});

test('the inputs dir may itself be a symlink', async () => {
  const dir = await inputsDir({ [TFVARS_FILE]: '{"a": 1}', file: 'x' });
  const link = join(root, `link-${count++}`);
  await symlink(dir, link);
  const snapshot = await readInputs(link);
  assert.deepEqual([...snapshot.variables.keys()], ['a']);
  assert.deepEqual([...snapshot.files.keys()], ['file']);
});

test('a special file is refused', async () => {
  const dir = await inputsDir({});
  execFileSync('mkfifo', [join(dir, 'pipe')]);
  await assertRefused(dir, /^input "pipe" in .* is not a regular file: replace it with a regular file or remove it/);
});

test('names starting with ".." and reserved names are skipped without being read', async () => {
  const dir = await inputsDir({ '..hidden-by-mount': 'x', [TFVARS_FILE]: '{}' });
  await mkdir(join(dir, 'captf.io-records'));
  await symlink('/etc/hostname', join(dir, 'captf-outside'));
  const snapshot = await readInputs(dir);
  assert.equal(snapshot.files.size, 0);
});

test('a mount is read from the generation ..data points at, whatever the key symlinks say', async () => {
  // The moment of an update after ..data moved: removed key "gone" still dangles, new key "new" has no link yet.
  const dir = join(root, `dir-${count++}`);
  await writeInputsDir(
    dir,
    new Map([
      ['kept', Buffer.from('old')],
      ['gone', Buffer.from('old')],
    ]),
    'kubernetes-mount',
  );
  await writeGeneration(
    dir,
    '..2026_12_01_00_00_00.1',
    new Map([
      ['kept', Buffer.from('new')],
      ['new', Buffer.from('new')],
    ]),
  );
  await switchGeneration(dir, '..2026_12_01_00_00_00.1');
  const { files } = await readInputs(dir);
  assert.deepEqual(
    [...files].map(([name, bytes]) => [name, Buffer.from(bytes).toString()]),
    [
      ['kept', 'new'],
      ['new', 'new'],
    ],
  );
});

test('a ..data link that leaves the inputs dir is refused', async () => {
  const elsewhere = await inputsDir({ [TFVARS_FILE]: '{}' });
  const dir = await inputsDir({});
  await symlink(elsewhere, join(dir, '..data'));
  await assertRefused(dir, /\.\.data points to .*, outside the inputs dir: mount the inputs there instead/);
});

test('a Secret update while reading never yields a mix of two generations', async () => {
  // Every generation holds a and b with its index; even ones also hold c, so keys come and go.
  const dir = join(root, `dir-${count++}`);
  const generation = (index: number) =>
    new Map(['a', 'b', ...(index % 2 === 0 ? ['c'] : [])].map((name) => [name, Buffer.from(String(index))]));
  await writeInputsDir(dir, generation(0), 'kubernetes-mount');

  let updating = true;
  const updates = (async () => {
    for (let index = 1; updating; index++) {
      await writeGeneration(dir, `..gen-${index}`, generation(index));
      await switchGeneration(dir, `..gen-${index}`);
      if (index % 2 === 0) await symlink('..data/c', join(dir, 'c'));
      else await rm(join(dir, 'c'));
    }
  })();
  let changedErrors = 0;
  try {
    for (let attempt = 0; attempt < 300; attempt++) {
      try {
        const { files } = await readInputs(dir);
        const texts = new Set([...files.values()].map((bytes) => Buffer.from(bytes).toString()));
        assert.equal(texts.size, 1, 'a mixed snapshot');
        assert.equal(files.has('c'), Number([...texts][0]) % 2 === 0, 'c in its generations only');
      } catch (error) {
        if (!(error instanceof RunnerError) || error.reason !== 'InputsChangedDuringRead') throw error;
        assert.equal(error.kind, 'io');
        changedErrors++;
      }
    }
  } finally {
    updating = false;
    await updates;
  }
  assert.ok(changedErrors > 0, 'the updates overlapped some reads');
});
