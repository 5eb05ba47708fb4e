// Where a path leads, for the machine the runner runs on (realpath) or for a directory tree laid out
// like an image (`contract check --root DIR`): in a tree every symbolic link resolves as it would in
// the image, inside the tree. An absolute link target starts again at the tree's root, and `..`
// never climbs above it, so nothing on this machine outside the tree is ever read in its place.
import { lstat, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';

/** A path's real location: every component that is a symbolic link followed. Errors as realpath's (ENOENT, ELOOP, ENOTDIR). */
type ResolvePath = (path: string) => Promise<string>;

export interface PathResolution {
  resolve: ResolvePath;
  /** A real location as the image names it (`/captf/module/main.tf`), for messages. */
  display(real: string): string;
}

/** This machine is the image: the kernel's resolution. */
export const onThisMachine: PathResolution = { resolve: (path) => realpath(path), display: (real) => real };

/** Linux follows at most this many links in one lookup, then fails with ELOOP. */
const MAX_LINKS = 40;

const errno = (code: string, path: string) => Object.assign(new Error(`${code}: ${path}`), { code, path });

/**
 * Resolution inside the tree at `root` (itself resolved on this machine: the tree is where it is).
 * The paths it takes are locations under the root (join(root, '/captf/module'), or what it returned);
 * the paths it returns are locations under the root with no link left in them.
 */
export async function inTree(root: string): Promise<PathResolution> {
  const top = await realpath(root);
  const inside = (path: string) => relative(top, path);
  const resolve: ResolvePath = async (path) => {
    const under = inside(path);
    if (under.startsWith('..') || isAbsolute(under)) throw errno('EXDEV', path);
    let pending = under.split(sep).filter(Boolean);
    let at: string[] = [];
    let links = 0;
    while (pending.length > 0) {
      const [name, ...rest] = pending as [string, ...string[]];
      pending = rest;
      if (name === '.') continue;
      if (name === '..') {
        at = at.slice(0, -1); // at the root, `..` is the root
        continue;
      }
      const location = join(top, ...at, name);
      const found = await lstat(location);
      if (!found.isSymbolicLink()) {
        if (pending.length > 0 && !found.isDirectory()) throw errno('ENOTDIR', path);
        at = [...at, name];
        continue;
      }
      if (++links > MAX_LINKS) throw errno('ELOOP', path);
      const target = await readlink(location);
      if (isAbsolute(target)) at = [];
      pending = [...target.split('/').filter(Boolean), ...pending];
    }
    return join(top, ...at);
  };
  return { resolve, display: (real) => `/${inside(real).split(sep).join('/')}` };
}
