// Writes logical input files as a real inputs dir: plain files, or the layout of a Kubernetes
// Secret/ConfigMap volume (the kubelet's atomic writer).
import { mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export type Layout = 'plain' | 'kubernetes-mount';

export async function writeInputsDir(
  dir: string,
  files: ReadonlyMap<string, Uint8Array>,
  layout: Layout,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  if (layout === 'plain') {
    for (const [name, bytes] of files) await writeFile(join(dir, name), bytes);
    return;
  }
  await writeGeneration(dir, '..2026_11_30_10_00_00.123456789', files);
  await symlink('..2026_11_30_10_00_00.123456789', join(dir, '..data'));
  for (const name of files.keys()) await symlink(join('..data', name), join(dir, name));
}

/** Writes the files of one mount generation (`..<timestamp>/`), not yet linked. */
export async function writeGeneration(
  dir: string,
  generation: string,
  files: ReadonlyMap<string, Uint8Array>,
): Promise<void> {
  await mkdir(join(dir, generation));
  for (const [name, bytes] of files) await writeFile(join(dir, generation, name), bytes);
}

/** Points ..data at another generation atomically and removes the old one, as the kubelet does on a Secret update. */
export async function switchGeneration(dir: string, generation: string): Promise<void> {
  const previous = await readlink(join(dir, '..data'));
  await symlink(generation, join(dir, '..data_tmp'));
  await rename(join(dir, '..data_tmp'), join(dir, '..data'));
  await rm(join(dir, previous), { recursive: true });
}
