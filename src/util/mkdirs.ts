import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * mkdir -p that always ends: Node 20's recursive mkdir never returns for some paths (under /proc),
 * and reports a read-only filesystem as ENOENT. This walks up to the nearest existing directory and
 * creates the rest one level at a time, so the error names the real problem.
 */
export async function makeDirs(path: string, mode = 0o777): Promise<void> {
  const missing: string[] = [];
  let current = resolve(path);
  for (;;) {
    try {
      const found = await stat(current);
      if (!found.isDirectory()) throw Object.assign(new Error(`${current} is not a directory`), { code: 'ENOTDIR' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      missing.unshift(current);
      const parent = dirname(current);
      if (parent === current) break;
      current = parent;
    }
  }
  for (const dir of missing) {
    try {
      await mkdir(dir, { mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
