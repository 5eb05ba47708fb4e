// The runner's startup snapshot blob, made by scripts/image/snapshot-blob.sh (which says how, and why its bytes
// are the same build after build) for the build's tests and the bench: written whole or not at all.
import { spawnSync } from 'node:child_process';
import { renameSync, rmSync } from 'node:fs';

const SCRIPT = new URL('./snapshot-blob.sh', import.meta.url).pathname;

export function buildSnapshotBlob(node, entry, blob) {
  const temp = `${blob}.tmp`;
  rmSync(temp, { force: true });
  const built = spawnSync('sh', [SCRIPT, node, entry, temp], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.status !== 0) throw new Error(`${SCRIPT} ${node} ${entry} failed (exit ${built.status ?? built.signal})`);
  renameSync(temp, blob);
}
