// Bundles test files for scripts/test.sh: node scripts/build/build-tests.mjs OUTDIR FILE...
// Each test file becomes OUTDIR/<its path>.mjs with the sources it imports; packages stay imports
// (node loads them itself, OUTDIR lies inside the repository so they resolve). Running plain JS
// saves each test process ≈ 0.7 s of CPU that tsx's loader hooks cost it (BENCHMARKS.md, "Test suite").
// What a test sees is unchanged: import.meta.url, .dirname and .filename are those of the source
// file that wrote them, and the source maps point stack traces at the .ts lines.
import { build, transform } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';

const [outdir, ...files] = process.argv.slice(2);
if (!outdir || files.length === 0) {
  console.error('usage: node scripts/build/build-tests.mjs OUTDIR FILE...');
  process.exit(2);
}

// esbuild's define replaces expressions only (never text in a string or a comment); each marker then
// becomes the source file's own value.
const META = {
  'import.meta.url': '__captf_meta_url__',
  'import.meta.dirname': '__captf_meta_dirname__',
  'import.meta.filename': '__captf_meta_filename__',
};

const ownImportMeta = {
  name: 'own-import-meta',
  setup(b) {
    b.onLoad({ filter: /\.(ts|mjs|js)$/ }, async ({ path }) => {
      const { code } = await transform(await readFile(path, 'utf8'), {
        loader: path.endsWith('.ts') ? 'ts' : 'js',
        format: 'esm',
        define: META,
        sourcefile: path,
        sourcemap: 'inline',
      });
      const values = {
        __captf_meta_url__: pathToFileURL(path).href,
        __captf_meta_dirname__: dirname(path),
        __captf_meta_filename__: path,
      };
      return {
        contents: code.replace(/__captf_meta_(url|dirname|filename)__/g, (marker) => JSON.stringify(values[marker])),
        loader: 'js',
      };
    });
  },
};

await build({
  entryPoints: files,
  outdir,
  outbase: '.',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  packages: 'external',
  platform: 'node',
  target: 'node20',
  format: 'esm',
  sourcemap: 'inline',
  // The maps point stack traces at the .ts lines; the sources themselves are on disk, and carried in
  // every bundle they made it 2.5 times its size for each test process to read and scan.
  sourcesContent: false,
  plugins: [ownImportMeta],
  logLevel: 'warning',
});
