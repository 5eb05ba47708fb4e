// A module edited in place while its image reference stays: locally the next run copies the edit,
// but in a cluster the module is inside the image, and the controller acts on a new inputs hash,
// which names the image reference, not the module's files. Said, so a laptop does not promise
// what a cluster will never do.
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256Hex } from '../util/sha256.ts';

/** Each entry of a tree by its relative path: a dir, a link's target, a file's sha256; `skipTop` names left out at its root. */
async function treeEntries(root: string, skipTop: ReadonlySet<string>): Promise<Map<string, string>> {
  const entries = new Map<string, string>();
  const walk = async (relativeDir: string): Promise<void> => {
    for (const name of (await readdir(join(root, relativeDir))).sort()) {
      const path = relativeDir === '' ? name : `${relativeDir}/${name}`;
      if (relativeDir === '' && skipTop.has(name)) continue;
      const stats = await lstat(join(root, path));
      if (stats.isDirectory()) {
        entries.set(path, 'dir');
        await walk(path);
      } else if (stats.isSymbolicLink()) entries.set(path, `link ${await readlink(join(root, path))}`);
      else entries.set(path, `file ${sha256Hex(await readFile(join(root, path)))}`);
    }
  };
  await walk('');
  return entries;
}

/** Whether the module dir differs from the module the last successful apply ran (its pinned copy). */
export async function moduleEditedSincePinned(
  moduleDir: string,
  pinnedModule: string,
  notModuleFiles: ReadonlySet<string>,
): Promise<boolean> {
  // Only a hint: a dir that cannot be read is the run's to report (copyModule, existingDir).
  const read = (dir: string, skip: ReadonlySet<string>) => treeEntries(dir, skip).catch(() => undefined);
  const [now, pinned] = await Promise.all([read(moduleDir, notModuleFiles), read(pinnedModule, new Set())]);
  if (!now || !pinned) return false;
  return now.size !== pinned.size || [...now].some(([path, entry]) => pinned.get(path) !== entry);
}

export const moduleEditedLines = (moduleDir: string, image: string, localDir: string): string[] => [
  `the module ${moduleDir} changed since the last successful apply, but the image reference did not (${image}):`,
  "  a cluster would not notice: there the module is inside the image, and an apply is due only when the inputs hash changes, which names the image reference, not the module's files",
  `  release the module as a new image and say so: captf-runner local set --dir ${localDir} --image <new reference>`,
];
