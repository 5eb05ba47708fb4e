// The providers an image carries in its mirror, each held against the module's lock file: a package
// is vouched for when the lock names its provider at its version with its hash. terraform's init
// checks only the packages it installs; this check covers every package in the mirror, so an image
// carries no provider binary the lock file (made against the registry's signed checksums) does not
// vouch for.
import { createHash } from 'node:crypto';
import { lstat, readdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { imageError } from '../../errors.ts';
import type { PathResolution } from '../../workspace/path-resolution.ts';
import { openRegularFile } from '../../util/regular-file.ts';
import type { LockedProvider } from './lock-file.ts';

export interface MirroredPackage {
  /** `registry.terraform.io/hashicorp/null`, lower case. */
  address: string;
  version: string;
  platform: string;
  /** The package as the image names it: a zip (packed layout) or a directory (unpacked layout). */
  path: string;
  /** `zh:` (the zip's sha256, as the registry's signed SHA256SUMS lists it) or `h1:` (the unpacked package's files). */
  hash: string;
}

export interface MirrorProblem {
  /** As the image names it. */
  path: string;
  message: string;
}

/** What a mirror may make the check read: a provider is tens to hundreds of MiB; an image carries a few. */
const MAX_MIRROR_ENTRIES = 10_000;
const MAX_MIRROR_BYTES = 8 * 1024 * 1024 * 1024;

/** `terraform-provider-TYPE_VERSION_OS_ARCH.zip`, the packed layout's file name. */
const PACKED = /^terraform-provider-(.+)_([^_]+)_([a-z0-9]+_[a-z0-9]+)\.zip$/;
const PLATFORM = /^[a-z0-9]+_[a-z0-9]+$/;

/**
 * Every package in the mirror at `mirror` (already resolved), and what cannot be read as one the
 * way terraform reads it. In a tree laid out like an image, a symbolic link must lead to the same
 * place for terraform on this machine as in the image: init runs here.
 */
export async function readMirror(
  mirror: string,
  resolution: PathResolution,
  inTree: boolean,
): Promise<{ packages: MirroredPackage[]; problems: MirrorProblem[] }> {
  const packages: MirroredPackage[] = [];
  const problems: MirrorProblem[] = [];
  const budget = { entries: 0, bytes: 0 };
  const shown = (path: string) => resolution.display(path);

  /** The entry's real location, or undefined (a problem) when it cannot be used. */
  const follow = async (path: string): Promise<string | undefined> => {
    if (++budget.entries > MAX_MIRROR_ENTRIES)
      throw boundError(mirror, resolution, `${MAX_MIRROR_ENTRIES} files and directories`);
    if (!(await lstat(path)).isSymbolicLink()) return path;
    const real = await resolution.resolve(path).catch(() => undefined);
    if (real === undefined) problems.push({ path: shown(path), message: 'is a symbolic link that leads nowhere' });
    else if (inTree && (await realpath(path).catch(() => undefined)) !== real)
      problems.push({
        path: shown(path),
        message: `is a symbolic link that leads elsewhere on this machine than in the image (${shown(real)}): make it a relative link inside the tree`,
      });
    else return real;
    return undefined;
  };
  const dirs = async (path: string) => (await readdir(path)).sort();

  for (const host of await dirs(mirror)) {
    const hostDir = await follow(join(mirror, host));
    if (!hostDir || !(await lstat(hostDir)).isDirectory()) continue;
    for (const namespace of await dirs(hostDir)) {
      const namespaceDir = await follow(join(hostDir, namespace));
      if (!namespaceDir || !(await lstat(namespaceDir)).isDirectory()) continue;
      for (const type of await dirs(namespaceDir)) {
        const typeDir = await follow(join(namespaceDir, type));
        if (!typeDir || !(await lstat(typeDir)).isDirectory()) continue;
        const address = `${host}/${namespace}/${type}`.toLowerCase();
        for (const name of await dirs(typeDir)) {
          const entry = await follow(join(typeDir, name));
          if (!entry) continue;
          const packed = PACKED.exec(name);
          if ((await lstat(entry)).isFile()) {
            if (packed && packed[1] === type)
              packages.push({
                address,
                version: packed[2]!,
                platform: packed[3]!,
                path: shown(join(typeDir, name)),
                hash: `zh:${await fileSha256(entry, budget, mirror, resolution)}`,
              });
            continue; // index.json and <version>.json: the network mirror's index, which `terraform providers mirror` writes too
          }
          if (!(await lstat(entry)).isDirectory()) continue;
          for (const platform of await dirs(entry)) {
            const packageDir = await follow(join(entry, platform));
            if (!packageDir || !PLATFORM.test(platform) || !(await lstat(packageDir)).isDirectory()) continue;
            const files = await packageFiles(packageDir, follow, problems, shown);
            const summary: string[] = [];
            for (const file of files)
              summary.push(`${await fileSha256(file.real, budget, mirror, resolution)}  ${file.name}\n`);
            packages.push({
              address,
              version: name,
              platform,
              path: shown(join(entry, platform)),
              hash: `h1:${createHash('sha256').update(summary.join('')).digest('base64')}`,
            });
          }
        }
      }
    }
  }
  return { packages, problems };
}

/** The package's files as terraform's h1 hash lists them: every file below the dir, its path with `/`, in byte order. */
async function packageFiles(
  dir: string,
  follow: (path: string) => Promise<string | undefined>,
  problems: MirrorProblem[],
  shown: (path: string) => string,
) {
  const files: { name: string; real: string }[] = [];
  const walk = async (at: string, prefix: string) => {
    for (const name of (await readdir(at)).sort()) {
      const real = await follow(join(at, name));
      if (!real) continue;
      const found = await lstat(real);
      const path = prefix ? `${prefix}/${name}` : name;
      if (found.isDirectory()) await walk(real, path);
      else if (found.isFile()) files.push({ name: path, real });
      else problems.push({ path: shown(join(at, name)), message: 'is neither a file nor a directory' });
    }
  };
  await walk(dir, '');
  return files.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
}

async function fileSha256(
  path: string,
  budget: { bytes: number },
  mirror: string,
  resolution: PathResolution,
): Promise<string> {
  const { handle } = await openRegularFile(path);
  try {
    const hash = createHash('sha256');
    for await (const chunk of handle.createReadStream({ autoClose: false })) {
      budget.bytes += (chunk as Buffer).length;
      if (budget.bytes > MAX_MIRROR_BYTES) throw boundError(mirror, resolution, `${MAX_MIRROR_BYTES / 1024 ** 3} GiB`);
      hash.update(chunk as Buffer);
    }
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

const boundError = (mirror: string, resolution: PathResolution, what: string) =>
  imageError(
    `the provider mirror ${resolution.display(mirror)} holds more than ${what}, the most contract check reads: keep only the providers the module needs in it`,
  );

/** Why the lock file does not vouch for a package (undefined: it does), in words for a message. */
export function unvouched(found: MirroredPackage, lock: readonly LockedProvider[]): string | undefined {
  const locked = lock.find((p) => p.address === found.address);
  if (!locked) return `${found.address} is not in the lock file`;
  if (locked.version !== found.version)
    return `the lock file names ${found.address} ${locked.version}, not ${found.version}`;
  if (!locked.hashes.includes(found.hash))
    return `its hash ${found.hash} is not among the lock file's for ${found.address} ${found.version}${found.hash.startsWith('zh:') ? ' (a zip is vouched for by its zh: hash, which the lock records when it is made against the registry)' : ''}`;
  return undefined;
}
