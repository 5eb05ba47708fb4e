// The module as the runner copies it into its workdir. The copy holds files and directories only:
// a symbolic link in the module becomes what it leads to, so nothing the runner writes into its copy
// can go through a link, and a module cannot name the runner's own files. What the copy cannot hold
// faithfully is a problem: ops that plan refuse it, destroy leaves it out (or copies a link leading
// outside the module as its content) with a warning, so that a teardown never wedges.
import { constants, type Stats } from 'node:fs';
import { copyFile, lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { imageError } from '../errors.ts';
import { onThisMachine, type PathResolution } from './path-resolution.ts';
import { CONFIG_FILE } from './terraform-files.ts';

export interface ModuleEntry {
  /** Path in the module (and in the copy), relative. */
  path: string;
  kind: 'dir' | 'file';
  /** What is read: the entry itself, or the real path a link leads to. */
  source: string;
}

type ModuleProblemKind = 'runnerFile' | 'outsideLink' | 'unusable';

export interface ModuleProblem {
  kind: ModuleProblemKind;
  /** The module's file, as a path under the module dir. */
  file: string;
  what: string;
}

export interface ModuleTree {
  /** Parents before children, in name order. Entries of links leading outside the module are included: destroy copies them. */
  entries: ModuleEntry[];
  problems: ModuleProblem[];
}

export interface ReadTreeOptions {
  /** Names never copied, at any depth (what local terraform runs leave behind). */
  notCopied: ReadonlySet<string>;
  /** Names the runner adds to the root of its copy: a module may not ship them. */
  runnerFiles: ReadonlySet<string>;
  /** Where links lead: on this machine (the default), or inside a tree laid out like an image (`contract check --root`). */
  resolution?: PathResolution;
}

/**
 * The copy's bounds: a module is a few hundred files. Links that fan out (two links to the next
 * directory at each level) reach each directory once now, but a module the size of a filesystem
 * would still fill the workdir; past either bound every op refuses it, destroy too.
 */
const MAX_MODULE_ENTRIES = 100_000;
const MAX_MODULE_BYTES = 1024 * 1024 * 1024;

export async function readModuleTree(moduleDir: string, options: ReadTreeOptions): Promise<ModuleTree> {
  const { resolve, display } = options.resolution ?? onThisMachine;
  const moduleReal = await resolve(moduleDir);
  const inside = (real: string) => real === moduleReal || real.startsWith(moduleReal + sep);
  const tree: ModuleTree = { entries: [], problems: [] };
  const problem = (kind: ModuleProblemKind, relative: string, what: string) =>
    tree.problems.push({ kind, file: join(moduleDir, relative), what });
  // Each real directory is copied at most once (by device and inode): where the copy already holds it.
  const copied = new Map<string, string>();
  const identity = (found: Stats) => `${found.dev}:${found.ino}`;
  let bytes = 0;
  const count = (size: number) => {
    bytes += size;
    if (tree.entries.length > MAX_MODULE_ENTRIES || bytes > MAX_MODULE_BYTES)
      throw imageError(
        `the module dir ${moduleDir} holds more than ${tree.entries.length > MAX_MODULE_ENTRIES ? `${MAX_MODULE_ENTRIES} files and directories` : `${MAX_MODULE_BYTES} bytes`} (symbolic links followed), the most the runner copies into its workdir: nothing was copied or run; keep only the module in the module dir`,
      );
  };

  // `readFrom`: the directory as the runner reads it; `ancestors`: identities of the directories above, to tell a cycle.
  const walk = async (
    readFrom: string,
    relative: string,
    ancestors: ReadonlySet<string>,
    outside: boolean,
  ): Promise<void> => {
    for (const rawName of (await readdir(readFrom, { encoding: 'buffer' })).sort(Buffer.compare)) {
      const name = rawName.toString('utf8');
      if (!Buffer.from(name, 'utf8').equals(rawName)) {
        // Read back as text, the name would lead to another file or none: terraform and the runner could not use it.
        problem('unusable', join(relative, escapedName(rawName)), 'has a name that is not valid UTF-8');
        continue;
      }
      if (options.notCopied.has(name)) continue;
      const path = relative === '' ? name : join(relative, name);
      if (relative === '' && options.runnerFiles.has(name)) {
        problem(
          'runnerFile',
          path,
          `is named like a file the runner adds to its copy of the module (${[...options.runnerFiles].join(', ')})`,
        );
        continue;
      }
      const entry = join(readFrom, name);
      const found = await lstat(entry);
      let source = entry;
      let leadsOutside = false;
      if (found.isSymbolicLink()) {
        try {
          source = await resolve(entry);
        } catch (error) {
          problem('unusable', path, `is a symbolic link that leads nowhere (${(error as NodeJS.ErrnoException).code})`);
          continue;
        }
        leadsOutside = !inside(source) && !outside;
      }
      // A link leading outside is its own problem only when the copy holds what it leads to; one the copy
      // leaves out has a single problem, the reason it is left out.
      const copiedFromOutside = () => {
        if (leadsOutside)
          problem('outsideLink', path, `is a symbolic link that leads outside the module dir (to ${display(source)})`);
      };
      const target = source === entry ? found : await stat(source);
      if (target.isDirectory()) {
        const id = identity(target);
        if (ancestors.has(id)) {
          problem('unusable', path, 'is a symbolic link to a directory that holds it (a cycle)');
          continue;
        }
        if (copied.has(id)) {
          problem(
            'unusable',
            path,
            `is the same directory as ${join(moduleDir, copied.get(id)!)} (through a symbolic link): the copy holds each directory once`,
          );
          continue;
        }
        if (CONFIG_FILE.test(name)) {
          problem('unusable', path, 'is a directory named like a configuration file');
          continue;
        }
        copiedFromOutside();
        copied.set(id, path);
        tree.entries.push({ path, kind: 'dir', source });
        count(0);
        await walk(source, path, new Set([...ancestors, id]), outside || leadsOutside);
      } else if (target.isFile()) {
        copiedFromOutside();
        tree.entries.push({ path, kind: 'file', source });
        count(target.size);
      } else
        problem(
          'unusable',
          path,
          `is neither a file nor a directory (${source === entry ? 'a special file' : `a link to a special file, ${display(source)}`})`,
        );
    }
  };
  const root = await stat(moduleReal);
  copied.set(identity(root), '');
  await walk(moduleReal, '', new Set([identity(root)]), false);
  return tree;
}

/** A name that is not valid UTF-8, for a message: its valid parts as they are, every other byte as \xNN. */
function escapedName(raw: Buffer): string {
  let text = '';
  for (let at = 0; at < raw.length; ) {
    const length = utf8SequenceLength(raw, at);
    text +=
      length > 0 ? raw.subarray(at, at + length).toString('utf8') : `\\x${raw[at]!.toString(16).padStart(2, '0')}`;
    at += Math.max(length, 1);
  }
  return text;
}

/** The length of the valid UTF-8 sequence at `at`, or 0 when the byte there starts none. */
function utf8SequenceLength(raw: Buffer, at: number): number {
  for (let length = 1; length <= 4 && at + length <= raw.length; length++) {
    const part = raw.subarray(at, at + length);
    if (Buffer.from(part.toString('utf8'), 'utf8').equals(part)) return length;
  }
  return 0;
}

/** Copies the entries into `into` (which must not exist): directories 0700, files with their modes, each created exclusively, never through a link. */
export async function copyModuleTree(entries: readonly ModuleEntry[], into: string): Promise<void> {
  await mkdir(into, { mode: 0o700 });
  for (const entry of entries) {
    const target = join(into, entry.path);
    if (entry.kind === 'dir') await mkdir(target, { mode: 0o700 });
    else await copyFile(entry.source, target, constants.COPYFILE_EXCL);
  }
}
