// Bundles test files for scripts/test.sh: node scripts/build/build-tests.mjs OUTDIR [--shards N --seed S] FILE...
// Each test file becomes OUTDIR/<its path>.mjs with the sources it imports; packages stay imports
// (node loads them itself, OUTDIR lies inside the repository so they resolve). Running plain JS
// saves each test process ≈ 0.7 s of CPU that tsx's loader hooks cost it (BENCHMARKS.md, "Test suite").
// With --shards N (the unit group), N entries OUTDIR/shard-K.mjs each run a share of the files in one process
// (scripts/build/test-shards.mjs, test/support/shard.ts; their paths are printed, one a line), and the files
// share their sources through chunks (OUTDIR/chunks/, esbuild's code splitting): a source or a package is
// loaded once in a process.
// What a test sees is unchanged: import.meta.url, .dirname and .filename are those of the source
// file that wrote them, and the source maps point stack traces at the .ts lines.
import { build, transform } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { planShards, readWeights, shardEntry } from './test-shards.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { shards: { type: 'string' }, seed: { type: 'string', default: '1' } },
});
const [outdir, ...files] = positionals;
const shards = values.shards === undefined ? undefined : Number(values.shards);
const seed = Number(values.seed);
if (!outdir || files.length === 0 || (shards !== undefined && !(shards >= 1)) || !Number.isSafeInteger(seed)) {
  console.error('usage: node scripts/build/build-tests.mjs OUTDIR [--shards N --seed S] FILE...');
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

const options = {
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
};

if (shards === undefined) await build({ ...options, entryPoints: files });
else {
  // Each shard's entry is made here (test-shards.mjs); the test files are its dynamic imports, so each is a
  // chunk, and what two of them import is a chunk they share.
  const planned = planShards(files, { count: shards, seed, weights: readWeights() });
  const entry = (i) => `shard-${i + 1}`;
  const shardEntries = {
    name: 'shard-entries',
    setup(b) {
      b.onResolve({ filter: /^shard-\d+$/ }, ({ path }) => ({ path, namespace: 'shard' }));
      b.onLoad({ filter: /.*/, namespace: 'shard' }, ({ path }) => {
        const i = Number(path.slice('shard-'.length)) - 1;
        const source = shardEntry(planned[i], { index: i + 1, count: planned.length, seed });
        return { contents: source, loader: 'js', resolveDir: process.cwd() };
      });
    },
  };
  await build({
    ...options,
    entryPoints: planned.map((_, i) => ({ in: entry(i), out: entry(i) })),
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [shardEntries, ownImportMeta],
  });
  for (const i of planned.keys()) console.log(join(outdir, `${entry(i)}.mjs`));
}
