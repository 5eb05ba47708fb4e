// The runner's V8 startup snapshot (BENCHMARKS.md, start; ARCHITECTURE.md): its bundle and its blob.
//
// The bundle (dist/snapshot/captf-runner.cjs) is src/startup-snapshot.ts and everything it imports in
// one CommonJS script, as node builds a snapshot from (no ES module, no import() of a file). The blob
// node restores costs CPU at every start in proportion to its size, so the bundle is minified, in
// ASCII only (V8 keeps a script with one other character as two bytes a character), and leaves out
// the packages only some runs load: a store's client, the policy language, pretty logs. Those are
// bundles of their own in dist/snapshot/lib/, required when a run first uses them, from beside the
// runner the run was started with (process.argv[1]: the launcher passes the bundle's path, as node
// does for the bundle itself; made absolute at the start of a snapshot's run, src/main.ts, so a relative
// one works too).
//
// The blob: scripts/image/snapshot-blob.sh.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The packages the snapshot leaves out, by the file of their bundle in lib/: the specifiers the runner imports them by. */
const LAZY_PACKAGES = {
  // the SDK's retry strategy with it (the S3 store's tests give it their own delays): the classes the client uses
  'aws-sdk-client-s3': ['@aws-sdk/client-s3', '@smithy/core/retry'],
  pg: ['pg'],
  'pino-pretty': ['pino-pretty'],
  yaml: ['yaml'],
  // one bundle for both entry points: they share the package's classes
  cel: ['@bufbuild/cel', '@bufbuild/cel/ext', '@bufbuild/re2'],
};
const LIB_OF = new Map(Object.entries(LAZY_PACKAGES).flatMap(([lib, specs]) => specs.map((spec) => [spec, lib])));
const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** In the snapshot's bundle, a lazy package is its lib/ bundle, required at its first use in a run. */
const lazyPackagesFromLib = {
  name: 'lazy-packages-from-lib',
  setup(b) {
    const filter = new RegExp(`^(?:${[...LIB_OF.keys()].map(escapeRegExp).join('|')})$`);
    b.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'snapshot-lib' }));
    b.onLoad({ filter: /.*/, namespace: 'snapshot-lib' }, (args) => ({
      contents: `const { createRequire } = require('node:module');
const { dirname, join } = require('node:path');
module.exports = createRequire(join(dirname(process.argv[1]), 'snapshot', 'lib', 'x'))(${JSON.stringify(`./${LIB_OF.get(args.path)}.cjs`)})[${JSON.stringify(args.path)}];`,
      loader: 'js',
    }));
  },
};

/**
 * What a dependency reads of the process as it loads, and the snapshot would keep from the build's
 * (a clock, a pid, a host name, the stdio streams: bytes that differ build to build, values wrong in a
 * run), read at its first use instead. Each edit must find its text: a new version of the package
 * fails the build here.
 */
const READ_AT_FIRST_USE = [
  {
    // The build's stdio streams (a pipe, a file or a terminal as the builder's are; node closes them
    // before it saves the heap) in place of the run's, for execa's checks of a stream given as stdio.
    file: 'node_modules/execa/lib/utils/standard-stream.js',
    edits: [
      [
        'export const STANDARD_STREAMS = [process.stdin, process.stdout, process.stderr];\n',
        "export const STANDARD_STREAMS = Object.defineProperties([], Object.fromEntries(['stdin', 'stdout', 'stderr'].map((name, fd) => [fd, { get: () => process[name], enumerable: true }])));\n",
      ],
    ],
  },
  {
    file: 'node_modules/pino/pino.js',
    edits: [
      ['const { pid } = process\nconst hostname = os.hostname()\n', ''],
      ['  base: { pid, hostname },\n', '  get base () { return { pid: process.pid, hostname: os.hostname() } },\n'],
    ],
  },
  {
    file: 'node_modules/pino/lib/time.js',
    edits: [
      [
        'const startWallTimeNs = BigInt(Date.now()) * NS_PER_MS\nconst startHrTime = process.hrtime.bigint()\n',
        'let startWallTimeNs\nlet startHrTime\n',
      ],
      [
        '  const elapsedNs = process.hrtime.bigint() - startHrTime\n',
        '  if (startHrTime === undefined) {\n    startWallTimeNs = BigInt(Date.now()) * NS_PER_MS\n    startHrTime = process.hrtime.bigint()\n  }\n  const elapsedNs = process.hrtime.bigint() - startHrTime\n',
      ],
    ],
  },
];
const readAtFirstUse = {
  name: 'read-at-first-use',
  setup(b) {
    for (const { file, edits } of READ_AT_FIRST_USE) {
      const path = fileURLToPath(new URL(`../../${file}`, import.meta.url));
      b.onLoad({ filter: new RegExp(`^${escapeRegExp(path)}$`) }, () => {
        let contents = readFileSync(path, 'utf8');
        for (const [from, to] of edits) {
          if (!contents.includes(from))
            throw new Error(`${file} no longer holds ${JSON.stringify(from)}: review READ_AT_FIRST_USE`);
          contents = contents.replace(from, to);
        }
        return { contents, loader: 'js' };
      });
    }
  },
};

/** Every character outside ASCII as a \u escape: it is only in regular expressions and strings of the minified bundle. */
function asciiOnly(file) {
  const text = readFileSync(file, 'utf8');
  writeFileSync(
    file,
    text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  );
}

/**
 * Minified with keepNames, every named function is given its name back as a property of its own: V8 then keeps
 * the function's properties as a dictionary, ≈ 0.25 KB each in the heap the snapshot saves, for ≈ 1,700 functions.
 * Only a class's name is read by what the runner runs (an error's name and type: execa's, commander's, the
 * runner's own), so the classes keep theirs (esbuild names them in a static block) and the other functions keep
 * their minified names.
 */
function classNamesOnly(file) {
  const text = readFileSync(file, 'utf8');
  const helper = /var ([\w$]+)=\(([\w$]+),([\w$]+)\)=>([\w$]+)\(\2,"name",\{value:\3,configurable:!0\}\);/g;
  const found = [...text.matchAll(helper)];
  if (found.length !== 1)
    throw new Error(`${file}: esbuild's __name helper not found once (${found.length}): review classNamesOnly`);
  const [definition, name, , , defineProperty] = found[0];
  const classes = `static{${name}(this,`;
  if (!text.includes(classes)) throw new Error(`${file}: no class named by ${name}: review classNamesOnly`);
  writeFileSync(
    file,
    text
      .replace(
        definition,
        () => `var ${name}=e=>e,__captfClassName=(e,t)=>${defineProperty}(e,"name",{value:t,configurable:!0});`,
      )
      .replaceAll(classes, 'static{__captfClassName(this,'),
  );
}

/** The snapshot's bundle and its lib/ bundles, with the build options of the runner's own (`common`). */
export async function buildSnapshotBundle(common, entry, outDir) {
  rmSync(outDir, { recursive: true, force: true });
  const outfile = join(outDir, 'captf-runner.cjs');
  await build({
    ...common,
    entryPoints: [entry],
    outfile,
    format: 'cjs',
    minify: true,
    keepNames: true,
    plugins: [...common.plugins, lazyPackagesFromLib, readAtFirstUse],
  });
  classNamesOnly(outfile);
  asciiOnly(outfile);
  mkdirSync(join(outDir, 'lib'));
  for (const [lib, specs] of Object.entries(LAZY_PACKAGES))
    await build({
      ...common,
      stdin: {
        contents: `module.exports = {${specs.map((spec) => `${JSON.stringify(spec)}: require(${JSON.stringify(spec)})`).join(', ')}};`,
        resolveDir: fileURLToPath(new URL('../..', import.meta.url)),
        loader: 'js',
      },
      outfile: join(outDir, 'lib', `${lib}.cjs`),
      format: 'cjs',
    });
  return outfile;
}
