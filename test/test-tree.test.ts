// The test tree's own rules (test/support/README.md, "Kinds of file"): every TypeScript file under test/ is a
// test, a helper or a table of cases, told by its name; and no helper exports a name src/ or another helper
// exports, so a reader never wonders which `terraformEnv` or `tempDir` a test called.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : tsFiles(path);
    return entry.name.endsWith('.ts') ? [relative(ROOT, path)] : [];
  });
}

/** The names a module exports: declarations and `export { … }` lists (comments removed first). */
function exportedNames(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1');
  const declared = [
    ...text.matchAll(
      /^export\s+(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|const|let|var|class|interface|type|enum)\s+([\w$]+)/gm,
    ),
  ].map((m) => m[1]!);
  const listed = [...text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}/gm)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((part) =>
        part
          .trim()
          .split(/\s+as\s+/)
          .pop()!
          .replace(/^type\s+/, ''),
      )
      .filter(Boolean),
  );
  return [...declared, ...listed];
}

const testTree = tsFiles(join(ROOT, 'test'));
const helpers = testTree.filter((f) => !f.endsWith('.test.ts'));

describe('the test tree', () => {
  it('holds tests (*.test.ts), helpers (test/support/ or *.support.ts) and tables of cases (*.cases.ts), nothing else', () => {
    const unnamed = helpers.filter(
      (f) => !f.startsWith('test/support/') && !f.endsWith('.support.ts') && !f.endsWith('.cases.ts'),
    );
    assert.deepEqual(
      unnamed,
      [],
      'name a helper <topic>.support.ts beside its tests, or move it to test/support/ when no one folder owns it',
    );
    assert.ok(
      helpers.length > 10 && testTree.length > 150,
      `the walk found the tree (${testTree.length} files, ${helpers.length} helpers)`,
    );
  });

  it('no helper exports a name that src/ exports', () => {
    const fromSrc = new Map<string, string>();
    for (const file of tsFiles(join(ROOT, 'src'))) for (const name of exportedNames(file)) fromSrc.set(name, file);
    const shadowing = helpers.flatMap((file) =>
      exportedNames(file)
        .filter((name) => fromSrc.has(name))
        .map((name) => `${file}: ${name} (also ${fromSrc.get(name)})`),
    );
    assert.deepEqual(shadowing, []);
    assert.ok(fromSrc.has('terraformEnv') && fromSrc.has('runTerraform'), 'the export reader sees src/');
  });

  it('no two helpers export the same name', () => {
    const firstExporter = new Map<string, string>();
    const twice: string[] = [];
    for (const file of helpers) {
      for (const name of exportedNames(file)) {
        const first = firstExporter.get(name);
        if (first === undefined) firstExporter.set(name, file);
        else twice.push(`${name}: ${first} and ${file}`);
      }
    }
    assert.deepEqual(twice, [], 'keep one helper of each name (test/support/ when several folders need it)');
  });
});
