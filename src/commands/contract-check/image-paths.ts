// The image's paths as contract check finds them: the module dir, the provider mirror, the policy dir.
import { join, resolve } from 'node:path';
import { inTree, onThisMachine, type PathResolution } from '../../workspace/path-resolution.ts';

export const MODULE_DIR = '/captf/module';
/** Where the image keeps its providers (runner/terraformrc). */
export const PROVIDER_MIRROR = '/usr/share/terraform/plugins';

/** Where the image's paths are: on this machine (the image itself, a module source tree), or inside a tree laid out like an image. */
export interface ImagePaths {
  inTree: boolean;
  resolution: PathResolution;
  /** An image path as this machine names it, before any link is followed (for messages). */
  named(path: string): string;
  /** Where an image path leads, links followed as in the image; on this machine the kernel follows them when the path is used. */
  locate(path: string): Promise<string>;
  /** Why `locate` failed, in words for a message. */
  unfound(error: NodeJS.ErrnoException): string;
}

export async function imagePaths(root: string): Promise<ImagePaths> {
  if (root === '/')
    return {
      inTree: false,
      resolution: onThisMachine,
      named: (path) => resolve(path),
      locate: async (path) => resolve(path),
      unfound: (error) => `cannot be read (${error.code})`,
    };
  const resolution: PathResolution = await inTree(root).catch((error: NodeJS.ErrnoException) => ({
    resolve: () => Promise.reject(error),
    display: (path: string) => path,
  }));
  return {
    inTree: true,
    resolution,
    named: (path) => join(root, path),
    locate: (path) => resolution.resolve(join(root, path)),
    unfound: (error) =>
      error.code === 'ENOENT'
        ? `does not exist in the tree ${root} (symbolic links followed inside the tree, as in the image)`
        : `cannot be followed inside the tree ${root} (${error.code}: symbolic links resolve inside the tree, as in the image)`,
  };
}
