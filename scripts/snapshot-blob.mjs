// The runner's startup snapshot blob, made from its bundle (scripts/build-snapshot.mjs) by one node
// binary: it runs only on that one (node refuses another's, exit 14). The build makes one for the tests
// with its own node, the image build one with the image's node (Dockerfile, stage app), the bench one
// with the node it measures. No dependency: the image build runs it without node_modules.
// The same node makes the same bytes from the same bundle (BENCHMARKS.md, "The image stays reproducible"):
// `--predictable` fixes V8's hash seed and random numbers while it is built (a run rehashes with a seed
// of its own and needs no flag), the environment is fixed, the builder is PID 1 of its own namespace,
// and what pino reads of the process as it loads it reads at its first use (scripts/build-snapshot.mjs).
//
//   node scripts/snapshot-blob.mjs NODE ENTRY.cjs BLOB
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The build's environment: nothing of the caller's (the snapshot must not depend on it), a fixed time zone and locale. */
const BUILD_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin', TZ: 'UTC', LC_ALL: 'C' };

export function buildSnapshotBlob(node, entry, blob) {
  const temp = `${blob}.tmp`;
  rmSync(temp, { force: true });
  // --no-warnings: node warns of every built-in module it has not verified in a snapshot (child_process, tty, …).
  const args = ['--predictable', '--no-warnings', '--snapshot-blob', temp, '--build-snapshot', entry];
  const options = { env: BUILD_ENV, stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' };
  // node keeps its builder's PID in the blob: in a PID namespace of its own the builder is PID 1 in
  // every build. Creating one takes CAP_SYS_ADMIN (root here, buildah; not a default Docker RUN step).
  let built = spawnSync('unshare', ['--pid', '--fork', node, ...args], options);
  if (built.status !== 0 && !existsSync(temp)) {
    process.stderr.write(
      `snapshot-blob: no PID namespace (${(built.error?.message ?? built.stderr).trim()}): the blob holds this build's PID, and another build's blob differs in those bytes\n`,
    );
    built = spawnSync(node, args, options);
  }
  if (built.status !== 0)
    throw new Error(`${node} --build-snapshot ${entry} failed (exit ${built.status ?? built.signal}): ${built.stderr}`);
  renameSync(temp, blob);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [node, entry, blob] = process.argv.slice(2);
  if (!node || !entry || !blob) {
    process.stderr.write('usage: node scripts/snapshot-blob.mjs NODE ENTRY.cjs BLOB\n');
    process.exit(2);
  }
  buildSnapshotBlob(node, entry, blob);
}
