// Bundles the CLI into one ESM file: the image runs it without node_modules.
import { build } from 'esbuild';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { sourcesHash } from './sources-hash.mjs';
import { buildSnapshotBundle } from './build-snapshot.mjs';
import { buildSnapshotBlob } from '../image/snapshot-blob.mjs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const outdir = new URL('../../dist/', import.meta.url).pathname;
const outfile = join(outdir, 'captf-runner.mjs');
const require = createRequire(import.meta.url);
const snapshotDir = join(outdir, 'snapshot');

/**
 * zod's classic API re-exports all of its ~50 locales through `z.locales` (390 KiB, a fifth of the
 * bundle) and the runner uses English only: the locales index becomes English alone.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    const localesDir = dirname(require.resolve('zod/v4/locales/en.js'));
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      args.importer.includes('/node_modules/zod/')
        ? { path: join(localesDir, 'index.js'), namespace: 'zod-locales' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, () => ({
      contents: `export { default as en } from ${JSON.stringify(join(localesDir, 'en.js'))};`,
      loader: 'js',
      resolveDir: localesDir,
    }));
  },
};

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  minify: false,
  sourcemap: false,
  legalComments: 'none',
  define: { __RUNNER_VERSION__: JSON.stringify(pkg.version) },
  // ESM builds first: jsonc-parser's `main` is a UMD build whose require() calls esbuild cannot follow.
  mainFields: ['module', 'main'],
  plugins: [zodEnglishOnly],
  logLevel: 'warning',
};

// Code splitting: the entry holds what every command needs (commander, the CLI); each op, pino,
// zod, execa, tar and Kubernetes code are chunks in dist/chunks/, loaded by the commands that use
// them. The image copies dist/captf-runner.mjs and dist/chunks/ into one dir.
rmSync(join(outdir, 'chunks'), { recursive: true, force: true });

const stamp = sourcesHash();
await build({
  ...common,
  entryPoints: { 'captf-runner': new URL('../../src/main.ts', import.meta.url).pathname },
  outdir,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  splitting: true,
  // CJS dependencies (pino, tar-stream) call require(): give every output file (entry and chunks) one.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __captfCreateRequire } from 'node:module';\nconst require = __captfCreateRequire(import.meta.url);",
  },
});
chmodSync(outfile, 0o755);

// The startup snapshot (scripts/build/build-snapshot.mjs): its bundle, and a blob made by the node that runs
// this build for the tests (a blob runs only on the node that made it: the image makes its own).
// dist/snapshot/node-version names that node (test/support/bundle.ts).
const snapshotEntry = await buildSnapshotBundle(
  common,
  new URL('../../src/startup-snapshot.ts', import.meta.url).pathname,
  snapshotDir,
);
buildSnapshotBlob(process.execPath, snapshotEntry, join(snapshotDir, 'captf-runner.blob'));
writeFileSync(join(snapshotDir, 'node-version'), `${process.version}\n`);
// What the bundle was built from: the e2e tests refuse a bundle whose sources changed since (test/support/bundle.ts).
writeFileSync(join(outdir, 'sources.sha256'), `${stamp}\n`);
