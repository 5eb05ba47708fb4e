// The module's configuration files, read once and scanned (the scan's I/O overlaps terraform's start):
// what the tool in use reads is scanned, what it skips is listed with what it holds (scan.skipped).
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { imageError, usageError } from '../errors.ts';
import { NotRegularFileError, readRegularFile } from '../util/regular-file.ts';
import { onThisMachine, type PathResolution } from './path-resolution.ts';
import { CONFIG_FILE, skippedConfigFile, type Tool } from './terraform-files.ts';
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

/** A configuration file of the module dir; `text` undefined when it is no regular file (readModuleTree names it, and every op but destroy refuses it). */
export interface ConfigFile {
  name: string;
  path: string;
  text: string | undefined;
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
  return files;
}

/** The scan of the files `tool` reads (all of them without a tool); the others in scan.skipped, with what they hold (pure). */
export function scanConfigFiles(files: readonly ConfigFile[], tool?: Tool): ModuleScan {
  const names = new Set(files.map((file) => file.name));
  const scan = emptyScan();
  for (const file of files) {
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
