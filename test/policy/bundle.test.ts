// The policy module in the image's bundle: esbuild splits a dynamic import of it into a chunk
// (CEL, protobuf, RE2 and yaml with it), the entry holds none of it, and the chunk runs on this
// Node without node_modules. The runner reaches it only by dynamic imports (steps/policy.ts, contract
// check); this builds a small entry with the options of scripts/build/build.mjs that decide splitting and
// loading, so that what is checked is the chunk alone.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { ISSUE_EXAMPLE } from './policies.support.ts';

const root = mkdtempSync(join(tmpdir(), 'captf-policy-bundle-'));
after(() => rmSync(root, { recursive: true, force: true }));

it('the bundle loads the policy module lazily, and it runs there on this Node', async () => {
  const index = new URL('../../src/policy/index.ts', import.meta.url).pathname;
  const entry = join(root, 'entry.ts');
  writeFileSync(
    entry,
    `if (process.argv[2] === 'no-policy') { console.log('started'); process.exit(0); }
const { loadPolicy, PolicyEvaluator } = await import(${JSON.stringify(index)});
const evaluator = new PolicyEvaluator(await loadPolicy(process.argv[2]));
evaluator.change({ address: 'terraform_data.db1', type: 'terraform_data', name: 'db1', kind: 'replace', actions: ['delete', 'create'] });
console.log(JSON.stringify(evaluator.plan({ counts: { create: 1, update: 0, delete: 0, replace: 1, read: 0, noop: 0, forget: 0, import: 0, move: 0, unknown: 0 }, tool: 'terraform', version: '1.11.4' })));
`,
  );
  const outdir = join(root, 'dist');
  const { metafile } = await build({
    entryPoints: { smoke: entry },
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    splitting: true,
    mainFields: ['module', 'main'],
    banner: {
      js: "import { createRequire as __captfCreateRequire } from 'node:module';\nconst require = __captfCreateRequire(import.meta.url);",
    },
    metafile: true,
    logLevel: 'warning',
  });
  const packagesIn = (output: string) =>
    new Set(
      Object.keys(metafile.outputs[output]!.inputs).flatMap(
        (input) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? [],
      ),
    );
  const outputs = Object.keys(metafile.outputs);
  const entryOutput = outputs.find((o) => o.endsWith('/smoke.mjs'))!;
  assert.deepEqual(
    [...packagesIn(entryOutput)],
    [],
    'the entry holds no dependency: the policy chunk loads only when imported',
  );
  const chunked = new Set(outputs.filter((o) => o !== entryOutput).flatMap((o) => [...packagesIn(o)]));
  for (const name of ['@bufbuild/cel', '@bufbuild/protobuf', '@bufbuild/re2', 'yaml'])
    assert.ok(chunked.has(name), `${name} in a chunk`);

  const policyDir = join(root, 'policy');
  mkdirSync(policyDir);
  writeFileSync(join(policyDir, 'example.yaml'), ISSUE_EXAMPLE);
  const run = (arg: string) =>
    execFileSync(process.execPath, [join(outdir, 'smoke.mjs'), arg], { cwd: root, encoding: 'utf8' });
  const outcome = JSON.parse(run(policyDir)) as { denied: { rule: string; message: string }[] };
  assert.deepEqual(outcome.denied, [
    {
      rule: 'protect-databases',
      address: 'terraform_data.db1',
      message: 'databases are never deleted by the runner: terraform_data.db1',
    },
  ]);

  // Without a policy the entry starts even with every chunk gone: nothing of them is loaded.
  rmSync(join(outdir, 'chunks'), { recursive: true });
  assert.equal(run('no-policy'), 'started\n');
});
