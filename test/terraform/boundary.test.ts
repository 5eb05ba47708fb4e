// The shape of the source, read from its imports: terraform starts only through the driver's
// constructor, zod is configured before any schema is built, no module imports itself back
// through others (an import circle), and the plan model stands below the decisions and the sinks.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Each source file (relative to src/) with the source files it imports: static, type-only, re-exports and import(). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    // Comments go first: they mention imports that are not there.
    const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
    const specifiers = [
      ...[...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']+)'/gm)].map((m) => m[1]!),
      ...[...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g)].map((m) => m[1]!),
    ];
    graph.set(relative(SRC, file), specifiers.map((s) => relative(SRC, resolve(dirname(file), s))));
  }
  return graph;
}

/** The import circles: strongly connected groups of more than one file (Tarjan), or a file importing itself. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const dep of graph.get(file) ?? []) {
      if (!graph.has(dep)) continue;
      if (!index.has(dep)) {
        visit(dep);
        low.set(file, Math.min(low.get(file)!, low.get(dep)!));
      } else if (onStack.has(dep)) low.set(file, Math.min(low.get(file)!, index.get(dep)!));
    }
    if (low.get(file) === index.get(file)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== file);
      if (group.length > 1 || graph.get(file)!.includes(file)) found.push(group.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('the import graph of src/', () => {
  const graph = importGraph();

  it('reads the imports it checks (the graph is not empty by mistake)', () => {
    assert.ok(graph.size > 50, `only ${graph.size} files under ${SRC}`);
    assert.ok(graph.get('terraform/init.ts')?.includes('terraform/terraform.ts'));
    assert.ok(graph.get('run/op-main.ts')?.includes('run/in-cluster.ts') || graph.get('run/op-main.ts')?.includes('run/ops.ts'), 'import() is read');
    assert.deepEqual(circles(new Map([['a.ts', ['b.ts']], ['b.ts', ['a.ts']], ['c.ts', ['a.ts']]])), [['a.ts', 'b.ts']], 'the circle finder finds a circle');
  });

  it('has no import circle', () => {
    assert.deepEqual(circles(graph), []);
  });

  it('starts terraform only through createTerraform: exec.ts (the process funnel) is imported by terraform.ts alone', () => {
    const importers = [...graph].filter(([, deps]) => deps.includes('terraform/exec.ts')).map(([file]) => file);
    assert.deepEqual(importers, ['terraform/terraform.ts']);
  });

  it('keeps the plan model below the guard and the sinks: nothing in plan/ imports guard/ or output/', () => {
    // The classification is what the guard decides on and the sinks print: a plan file that reached
    // up for a decision or a wording would make the model change with every message.
    const upward = (from: string, above: string[]) =>
      [...graph].flatMap(([file, deps]) => (file.startsWith(from) ? deps.filter((dep) => above.some((folder) => dep.startsWith(folder))).map((dep) => `${file} -> ${dep}`) : []));
    assert.ok(upward('guard/', ['plan/']).length > 0, 'the rule reads imports between folders');
    assert.deepEqual(upward('plan/', ['guard/', 'output/']), []);
  });

  it('builds schemas only with the configured zod: src/schemas/zod.ts alone imports the package, the others import it as a namespace', () => {
    const texts = sourceFiles(SRC).map((file) => [relative(SRC, file), readFileSync(file, 'utf8')] as const);
    // Type-only imports build nothing.
    const packageImporters = texts.filter(([, text]) => /^\s*(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+'zod(?:\/[^']*)?'/m.test(text)).map(([file]) => file);
    assert.deepEqual(packageImporters, ['schemas/zod.ts']);
    // `import { z }` would bring the package's own z object, and with it every part of zod, into the bundle.
    const namedImporters = texts.filter(([, text]) => /^\s*import\s+\{[^}]*\}\s+from\s+'[^']*\/zod\.ts'/m.test(text)).map(([file]) => file);
    assert.deepEqual(namedImporters, []);
    assert.ok(texts.filter(([, text]) => /^\s*import \* as z from '[^']*zod\.ts'/m.test(text)).length >= 10, 'the namespace imports are read');
  });
});
