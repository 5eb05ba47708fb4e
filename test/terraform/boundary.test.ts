// The shape of the source, read from its imports: terraform starts only through the driver's
// constructor, zod is configured before any schema is built, no module imports itself back
// through others (an import circle), and every import points down the floors of src/ (FLOORS).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

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
    const text = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    const specifiers = [
      ...[...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']+)'/gm)].map((m) => m[1]!),
      ...[...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g)].map((m) => m[1]!),
    ];
    graph.set(
      relative(SRC, file),
      specifiers.map((s) => relative(SRC, resolve(dirname(file), s))),
    );
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

/**
 * The floors of src/, top to bottom (ARCHITECTURE.md): a folder, or a file at src/'s root, imports only
 * what stands on a floor below its own. A new folder gets its floor here; an import back up a floor is
 * a placement to change, not a floor to move.
 */
const FLOORS = [
  'main.ts', // the command line and the exit funnel
  'startup-snapshot.ts', // the startup snapshot's entry
  'warm-reader.ts', // the JSON reader run in the snapshot's build
  'commands/', // the commands that are not ops
  'cli.ts',
  'local/',
  'controller-model/',
  'op-main.ts', // one op run: signals, deadline, the op table
  'ops/',
  'steps/',
  'run/', // the run's context, what it learned, its result
  'store/',
  'kube/',
  'output/', // the sinks
  'guard/',
  'policy/',
  'plan/', // the plan model, below the decisions and the sinks
  'terraform/', // the driver
  'inputs/',
  'state/',
  'json/',
  'workspace/',
  'masking/',
  'schemas/',
  'util/',
  'errors.ts',
  'vocabulary/',
  'object-kind.ts',
  'version.ts',
];

/** The floor of a file of src/ (its index in `floors`), or -1 when its folder has none. */
const floorOf = (file: string, floors: readonly string[]) =>
  floors.indexOf(file.includes('/') ? `${file.slice(0, file.indexOf('/'))}/` : file);

/** Every import that does not point down a floor (`file -> import`), and every file on no floor. */
function upwardImports(graph: Map<string, string[]>, floors: readonly string[]): string[] {
  return [...graph].flatMap(([file, deps]) => {
    const floor = floorOf(file, floors);
    if (floor < 0) return [`${file}: its folder has no floor`];
    return deps
      .filter((dep) => graph.has(dep) && floorOf(dep, floors) !== floor && floorOf(dep, floors) <= floor)
      .map((dep) => `${file} -> ${dep}`);
  });
}

describe('the import graph of src/', () => {
  const graph = importGraph();

  it('reads the imports it checks (the graph is not empty by mistake)', () => {
    assert.ok(graph.size > 50, `only ${graph.size} files under ${SRC}`);
    assert.ok(graph.get('terraform/init.ts')?.includes('terraform/terraform.ts'));
    assert.ok(graph.get('op-main.ts')?.includes('run/in-cluster.ts'), 'import() is read');
    assert.deepEqual(
      circles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', ['a.ts']],
          ['c.ts', ['a.ts']],
        ]),
      ),
      [['a.ts', 'b.ts']],
      'the circle finder finds a circle',
    );
  });

  it('has no import circle', () => {
    assert.deepEqual(circles(graph), []);
  });

  it('starts terraform only through createTerraform: exec.ts (the process funnel) is imported by terraform.ts alone', () => {
    const importers = [...graph].filter(([, deps]) => deps.includes('terraform/exec.ts')).map(([file]) => file);
    assert.deepEqual(importers, ['terraform/terraform.ts']);
  });

  it('points every import down a floor (FLOORS): none runs back up, so no circle runs through folders', () => {
    // The plan model below the decisions and the sinks, masking below everything that prints, the op
    // table below the op runner: a file that reached up a floor would make the lower one change with it.
    assert.deepEqual(
      upwardImports(
        new Map([
          ['a/x.ts', ['a/y.ts', 'b/z.ts']],
          ['a/y.ts', ['a/x.ts']],
          ['b/z.ts', ['a/y.ts']],
          ['c.ts', ['b/z.ts']],
        ]),
        ['a/', 'b/'],
      ),
      ['b/z.ts -> a/y.ts', 'c.ts: its folder has no floor'],
      'the rule finds an import back up a floor, and a file on no floor',
    );
    assert.ok(
      graph.get('guard/decide.ts')?.some((dep) => dep.startsWith('plan/')),
      'the rule reads imports between folders',
    );
    assert.deepEqual(upwardImports(graph, FLOORS), []);
    const architecture = readFileSync(join(SRC, '../ARCHITECTURE.md'), 'utf8').replace(/\s+/g, ' ');
    assert.ok(architecture.includes(FLOORS.join(', ')), 'ARCHITECTURE.md lists the floors as FLOORS does');
  });

  it('builds schemas only with the configured zod: src/schemas/zod.ts alone imports the package, the others import it as a namespace', () => {
    const texts = sourceFiles(SRC).map((file) => [relative(SRC, file), readFileSync(file, 'utf8')] as const);
    // Type-only imports build nothing.
    const packageImporters = texts
      .filter(([, text]) => /^\s*(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+'zod(?:\/[^']*)?'/m.test(text))
      .map(([file]) => file);
    assert.deepEqual(packageImporters, ['schemas/zod.ts']);
    // `import { z }` would bring the package's own z object, and with it every part of zod, into the bundle.
    const namedImporters = texts
      .filter(([, text]) => /^\s*import\s+\{[^}]*\}\s+from\s+'[^']*\/zod\.ts'/m.test(text))
      .map(([file]) => file);
    assert.deepEqual(namedImporters, []);
    assert.ok(
      texts.filter(([, text]) => /^\s*import \* as z from '[^']*zod\.ts'/m.test(text)).length >= 10,
      'the namespace imports are read',
    );
  });
});

/** Where a catch clause throws a new error that does not carry the caught one as `cause`: file:line, with the error's class. */
function causelessRethrows(file: string, text: string): string[] {
  // A catch clause is written with its keyword: a file without the word has none, and is not parsed (half of src/).
  if (!/\bcatch\b/.test(text)) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const carriesCause = (node: ts.NewExpression) =>
    (node.arguments ?? []).some(
      (arg) =>
        ts.isObjectLiteralExpression(arg) &&
        arg.properties.some((p) => p.name !== undefined && ts.isIdentifier(p.name) && p.name.text === 'cause'),
    );
  // A wrapped error that must not carry the caught one (a secret could ride on it) says why on the line before.
  const allowed = (node: ts.Node) =>
    /\/\/ no cause: \S/.test(
      text.slice(text.lastIndexOf('\n', text.lastIndexOf('\n', node.getStart(source) - 1) - 1), node.getStart(source)),
    );
  const inCatch = (node: ts.Node): void => {
    if (ts.isFunctionLike(node)) return; // a callback throws when it is called, not in this catch
    if (
      ts.isThrowStatement(node) &&
      ts.isNewExpression(node.expression) &&
      !carriesCause(node.expression) &&
      !allowed(node)
    )
      found.push(
        `${relative(SRC, file)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1} new ${node.expression.expression.getText(source)}`,
      );
    ts.forEachChild(node, inCatch);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCatchClause(node)) inCatch(node.block);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...new Set(found)]; // a catch inside a catch is walked twice
}

describe('errors thrown from a catch of src/', () => {
  it('carry the caught error as cause (or say on the line before, `// no cause: why`, that they must not)', () => {
    const sample =
      'try { f(); } catch (error) {\n  throw new RunnerError({ message: "m" });\n}\ntry { f(); } catch (error) {\n  throw new Error("m", { cause: error });\n}\ntry { f(); } catch {\n  // no cause: it would quote a secret\n  throw new Error("m");\n}\n';
    assert.deepEqual(
      causelessRethrows(join(SRC, 'sample.ts'), sample),
      ['sample.ts:2 new RunnerError'],
      'the check finds a rethrow without cause',
    );
    const found = sourceFiles(SRC).flatMap((file) => causelessRethrows(file, readFileSync(file, 'utf8')));
    assert.deepEqual(found, []);
  });
});

/** The most lines a file of src/ holds before it is split, unless its size is earned. */
const MAX_LINES = 450;
/** The files whose size is earned, each with why (the README.md of its folder says the same). */
const EARNED_SIZE: Readonly<Record<string, string>> = {
  'json/select-json.ts':
    'one lexer class whose per-byte loops keep their state in locals: splitting adds the calls it removes',
  'plan/classify.ts':
    'one classifier fed piece by piece, so the parsed and the streaming reader run the very same rules',
  'vocabulary/reasons.ts': 'the one table of reasons, one entry each: split, a reason could be missed',
};

describe('the files of src/', () => {
  it(`hold at most ${MAX_LINES} lines, unless their size is earned (named, with why, in EARNED_SIZE and its folder's README.md)`, () => {
    const lines = (file: string) => readFileSync(file, 'utf8').split('\n').length - 1;
    const large = sourceFiles(SRC)
      .filter((file) => lines(file) > MAX_LINES)
      .map((file) => relative(SRC, file));
    assert.ok(large.length > 0, 'the walk finds the large files (select-json.ts is one)');
    assert.deepEqual(
      large.filter((file) => !(file in EARNED_SIZE)),
      [],
      `split a file over ${MAX_LINES} lines along its seams, or say in EARNED_SIZE and in its folder's README.md why its size is earned`,
    );
    for (const file of Object.keys(EARNED_SIZE)) {
      assert.ok(large.includes(file), `${file} is no longer over ${MAX_LINES} lines: take it off EARNED_SIZE`);
      const readme = join(SRC, dirname(file), 'README.md');
      const says = existsSync(readme) ? readFileSync(readme, 'utf8') : '';
      assert.ok(
        says.includes(basename(file)) && says.includes('earned'),
        `src/${dirname(file)}/README.md names ${basename(file)} and says why its size is earned`,
      );
    }
  });
});
