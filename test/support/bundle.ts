// The built runner the e2e tests run (dist/captf-runner.mjs, what the image ships), only when it
// was built from the sources of this tree: a bundle left from before an edit would test old code
// and pass. scripts/build/build.mjs writes the hash of the sources it bundled to dist/sources.sha256.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
// @ts-expect-error -- a plain ESM script shared with the build, no type declarations
import { sourcesHash } from '../../scripts/build/sources-hash.mjs';

const DIST = resolve(import.meta.dirname, '../../dist');

/** Why the bundle in `dist` may not be tested, or undefined when it is the build of `currentHash`. */
export function staleBundle(currentHash: string, dist = DIST): string | undefined {
  let built: string;
  try {
    built = readFileSync(resolve(dist, 'sources.sha256'), 'utf8').trim();
  } catch {
    return `${dist}/captf-runner.mjs has no record of the sources it was built from (dist/sources.sha256): run \`npm run build\``;
  }
  if (built !== currentHash)
    return `${dist}/captf-runner.mjs was built from other sources than this tree's (src/, the build script or the locked dependencies changed since): run \`npm run build\``;
  return undefined;
}

/**
 * The startup snapshot's blob the build made beside the bundle (dist/snapshot/), when the node that
 * made it is the one running the tests (node refuses another's blob); else why not, with the fix.
 */
export function snapshotBlob(dist = DIST): { blob: string } | { why: string } {
  let madeBy: string;
  try {
    madeBy = readFileSync(resolve(dist, 'snapshot/node-version'), 'utf8').trim();
  } catch {
    return { why: `${dist}/snapshot has no startup snapshot (dist/snapshot/node-version): run \`npm run build\`` };
  }
  if (madeBy !== process.version)
    return {
      why: `${dist}/snapshot/captf-runner.blob was made by node ${madeBy} and these tests run node ${process.version}: run \`npm run build\` with this node`,
    };
  return { blob: resolve(dist, 'snapshot/captf-runner.blob') };
}

/** The blob of the built runner's startup snapshot; throws with the fix when the test's node did not make it. */
export function builtSnapshotBlob(): string {
  const found = snapshotBlob();
  if ('why' in found) throw new Error(`the e2e tests refuse to run: ${found.why}`);
  return found.blob;
}

/** The path of the built runner; throws with the fix when the bundle is stale or missing. */
export function builtRunner(): string {
  const why = staleBundle(sourcesHash() as string);
  if (why) throw new Error(`the e2e tests refuse to run: ${why}`);
  return resolve(DIST, 'captf-runner.mjs');
}
