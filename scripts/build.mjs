// Bundles the CLI into one ESM file: the image runs it without node_modules.
import { build } from 'esbuild';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { sourcesHash } from './sources-hash.mjs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const outdir = new URL('../dist/', import.meta.url).pathname;
const outfile = join(outdir, 'captf-runner.mjs');
const require = createRequire(import.meta.url);

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

// Code splitting: the entry holds what every command needs (commander, the CLI); each op, pino,
// zod, execa, tar and Kubernetes code are chunks in dist/chunks/, loaded by the commands that use
// them. The image copies dist/captf-runner.mjs and dist/chunks/ into one dir.
rmSync(join(outdir, 'chunks'), { recursive: true, force: true });

const stamp = sourcesHash();
await build({
  entryPoints: { 'captf-runner': new URL('../src/main.ts', import.meta.url).pathname },
  outdir,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  splitting: true,
  minify: false,
  sourcemap: false,
  legalComments: 'none',
  define: { __RUNNER_VERSION__: JSON.stringify(pkg.version) },
  // CJS dependencies (pino, tar-stream) call require(): give every output file (entry and chunks) one.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __captfCreateRequire } from 'node:module';\nconst require = __captfCreateRequire(import.meta.url);",
  },
  // ESM builds first: jsonc-parser's `main` is a UMD build whose require() calls esbuild cannot follow.
  mainFields: ['module', 'main'],
  plugins: [zodEnglishOnly],
  logLevel: 'warning',
});
chmodSync(outfile, 0o755);
// What the bundle was built from: the e2e tests refuse a bundle whose sources changed since (test/support/bundle.ts).
writeFileSync(join(outdir, 'sources.sha256'), `${stamp}\n`);
