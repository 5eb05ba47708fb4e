// One sha256 over everything the bundle is built from: src/, the build script and the locked
// dependencies. scripts/build/build.mjs writes it beside the bundle (dist/sources.sha256); the e2e tests
// compare it with the tree they run in (test/support/bundle.ts).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INPUTS = [
  'src',
  'scripts/build/build.mjs',
  'scripts/build/build-snapshot.mjs',
  'scripts/image/snapshot-blob.mjs',
  'scripts/image/snapshot-blob.sh',
  'scripts/build/sources-hash.mjs',
  'package.json',
  'package-lock.json',
];

function files(path) {
  const full = join(ROOT, path);
  try {
    return readdirSync(full, { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .flatMap((entry) => files(join(path, entry.name)));
  } catch (error) {
    if (error.code === 'ENOTDIR') return [path];
    throw error;
  }
}

export function sourcesHash() {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap(files)) {
    hash.update(`${relative(ROOT, join(ROOT, file))}\0`);
    hash.update(readFileSync(join(ROOT, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}
