// Bundles the CLI into one ESM file: the image runs it without node_modules.
import { build } from 'esbuild';
import { chmodSync, readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const outfile = new URL('../dist/captf-runner.mjs', import.meta.url).pathname;

await build({
  entryPoints: [new URL('../src/main.ts', import.meta.url).pathname],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  splitting: false,
  minify: false,
  sourcemap: false,
  legalComments: 'none',
  define: { __RUNNER_VERSION__: JSON.stringify(pkg.version) },
  // CJS dependencies (pino, tar-stream) call require(): give the ESM bundle one.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __captfCreateRequire } from 'node:module';\nconst require = __captfCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
chmodSync(outfile, 0o755);
