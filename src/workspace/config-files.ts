// The module's configuration files, read once and scanned (the scan's I/O overlaps terraform's start):
// what the tool in use reads is scanned, what it skips is listed with what it holds (scan.skipped).
import { readdir } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { dirname, join } from 'node:path';
import { imageError, usageError } from '../errors.ts';
import { NotRegularFileError, readRegularFile } from '../util/regular-file.ts';
import { onThisMachine, type PathResolution } from './path-resolution.ts';
import { CONFIG_FILE, LOCAL_RUN_FILES, skippedConfigFile, type Tool } from './terraform-files.ts';
import { emptyScan, type ModuleScan } from './scan.ts';
import { scanHcl } from './scan-hcl.ts';
import { scanJson } from './scan-tf-json.ts';

/**
 * The module's configuration as `tool` reads it: the files it skips are listed (scan.skipped), never
 * counted. Without a tool, every file either tool reads: what only needs to know whether any file
 * says something (restore's encryption check, unlock's backend type). `resolution`: where the
 * module's links lead (a tree laid out like an image resolves them inside itself); `moduleDir` is already resolved.
 * `onCommandLine`: the dir was given as --module, so a missing one is a typo (exit 2), not the image's fault.
 */
export async function scanModule(
  moduleDir: string,
  options: { tool?: Tool; resolution?: PathResolution; onCommandLine?: boolean } = {},
): Promise<ModuleScan> {
  return scanConfigFiles(
    await readConfigFiles(moduleDir, options.resolution ?? onThisMachine, options.onCommandLine),
    options.tool,
  );
}

/**
 * A configuration file of the module dir; `text` undefined when it is no regular file (readModuleTree names it, and every op but destroy refuses it).
 * `dir`: the subdirectory it is in, relative to the module dir (absent for the root module's files).
 */
export interface ConfigFile {
  name: string;
  path: string;
  text: string | undefined;
  dir?: string;
}

/**
 * Every configuration file of the module dir, read (the scan's I/O: it overlaps terraform's start).
 * A dir that is not there is the image's fault (ImageInvalid) unless `onCommandLine` (--module DIR): then a typo, exit 2.
 */
export async function readConfigFiles(
  moduleDir: string,
  resolution: PathResolution = onThisMachine,
  onCommandLine = false,
): Promise<ConfigFile[]> {
  let names: string[];
  try {
    names = await readdir(moduleDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (onCommandLine && (code === 'ENOENT' || code === 'ENOTDIR'))
      throw usageError(
        'ModuleDirMissing',
        `--module ${moduleDir} ${code === 'ENOENT' ? 'does not exist' : 'is no directory'}: check the path (the module dir is the one that holds its .tf files)`,
        { setting: 'module' },
      );
    throw imageError(
      `the module dir ${moduleDir} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`}: put the module at /captf/module in the image or pass --module DIR`,
      { setting: 'module' },
    );
  }
  const configFiles = names.filter((n) => CONFIG_FILE.test(n)).sort();
  if (configFiles.length === 0)
    throw imageError(
      `the module dir ${moduleDir} has no .tf files: the image must carry the module at /captf/module (or pass --module DIR)`,
      { setting: 'module' },
    );
  const files: ConfigFile[] = [];
  for (const name of configFiles) {
    const path = join(moduleDir, name);
    files.push({ name, path, text: await readConfigFile(path, resolution) });
  }
  for (const dir of (await readdir(moduleDir, { withFileTypes: true })).filter(walked).sort(byName))
    await readChildConfigFiles(moduleDir, dir.name, files, { entries: 0 });
  return files;
}

/** The subdirectories walked for child modules' files: directories themselves (a link's target is walked where it is), not what local runs leave. */
const walked = (entry: Dirent) => entry.isDirectory() && !LOCAL_RUN_FILES.includes(entry.name);
const byName = (a: Dirent, b: Dirent) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
/** The most entries of subdirectories read: past it, the workdir copy refuses the module anyway (module-tree.ts). */
const MAX_CHILD_ENTRIES = 100_000;

/**
 * The configuration files of the module's subdirectories, its local child modules (`source = "./db"`),
 * at any depth, into `files`: read only for their nonsensitive() calls. A subdirectory that cannot
 * be read is left out (the workdir copy names it).
 */
async function readChildConfigFiles(
  moduleDir: string,
  dir: string,
  files: ConfigFile[],
  seen: { entries: number },
): Promise<void> {
  const entries = await readdir(join(moduleDir, dir), { withFileTypes: true }).catch(() => []);
  seen.entries += entries.length;
  if (seen.entries > MAX_CHILD_ENTRIES) return;
  for (const entry of entries.filter((e) => e.isFile() && CONFIG_FILE.test(e.name)).sort(byName)) {
    const path = join(moduleDir, dir, entry.name);
    files.push({ name: entry.name, path, text: await readConfigFile(path, onThisMachine).catch(() => undefined), dir });
  }
  for (const entry of entries.filter(walked).sort(byName))
    await readChildConfigFiles(moduleDir, join(dir, entry.name), files, seen);
}

/**
 * The scan of the root module's files `tool` reads (all of them without a tool); the others in scan.skipped,
 * with what they hold; of a subdirectory's files that the tool reads, the nonsensitive() calls (pure).
 */
export function scanConfigFiles(files: readonly ConfigFile[], tool?: Tool): ModuleScan {
  const names = new Set(files.filter((file) => file.dir === undefined).map((file) => file.name));
  const scan = emptyScan();
  for (const file of files) {
    if (file.dir !== undefined) continue;
    const skipped = tool && skippedConfigFile(tool, file.name, names);
    if (!skipped) {
      scanConfigText(file, scan);
      continue;
    }
    // What the tool does not read need not parse for it: what it holds is read when it can be.
    let held = emptyScan();
    try {
      held = scanConfigText(file, emptyScan());
    } catch {
      // unreadable as configuration: nothing in it counts
    }
    scan.skipped.push({
      file: file.path,
      ...(skipped.twin && { twin: join(dirname(file.path), skipped.twin) }),
      why: skipped.why,
      backendBlocks: held.backendBlocks,
      declares: held.resources.length + held.moduleCalls.length + held.variables.length > 0,
    });
  }
  const dirs = new Map<string, ConfigFile[]>();
  for (const file of files) {
    if (file.dir === undefined) continue;
    const inDir = dirs.get(file.dir) ?? [];
    dirs.set(file.dir, inDir);
    inDir.push(file);
  }
  for (const inDir of dirs.values()) {
    const dirNames = new Set(inDir.map((f) => f.name));
    for (const file of inDir) {
      if (tool && skippedConfigFile(tool, file.name, dirNames)) continue;
      try {
        scan.nonsensitive.push(...scanConfigText(file, emptyScan()).nonsensitive);
      } catch {
        // a child module's file that does not parse: terraform names it when the module is used
      }
    }
  }
  return scan;
}

function scanConfigText(file: ConfigFile, into: ModuleScan): ModuleScan {
  if (file.text === undefined) return into;
  try {
    return file.name.endsWith('.json') ? scanJson(file.text, into, file.path) : scanHcl(file.text, into, file.path);
  } catch (error) {
    throw imageError(`cannot read ${file.path}: ${(error as Error).message}`);
  }
}

/** A configuration file is at most this large (terraform would read it whole, and so does the scan). */
export const MAX_CONFIG_FILE_BYTES = 16 * 1024 * 1024;

/** The text of a configuration file the copy would hold as a file (a link leads to one); undefined when it is not one. */
async function readConfigFile(path: string, resolution: PathResolution): Promise<string | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(await resolution.resolve(path), MAX_CONFIG_FILE_BYTES + 1);
  } catch (error) {
    if (
      error instanceof NotRegularFileError ||
      (error as NodeJS.ErrnoException).code === 'ENOENT' ||
      (error as NodeJS.ErrnoException).code === 'ELOOP'
    )
      return undefined;
    throw imageError(
      `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): the image must carry a module the runner's uid can read`,
    );
  }
  if (bytes.length > MAX_CONFIG_FILE_BYTES)
    throw imageError(
      `${path} is larger than ${MAX_CONFIG_FILE_BYTES} bytes: no configuration file of a module may be; split or shrink it`,
    );
  return bytes.toString('utf8');
}
