// Reads the inputs dir (--inputs) into logical files. A plain directory holds them as regular
// files. A Kubernetes Secret or ConfigMap volume holds them in a generation directory that
// `..data` points at (`..data -> ..2026_11_30_…/`), with a symlink `key -> ..data/key` per key.
// The bytes are kept in memory (a Secret or ConfigMap holds at most about 1 MiB), so the files
// the workspace writes are exactly the bytes that were hashed, whatever the kubelet does meanwhile.
import { lstat, readdir, readFile, readlink, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { RunnerError, usageError } from '../errors.ts';
import { INPUTS_INVALID, inputsFromFiles, isReservedName, type InputsSnapshot } from './snapshot.ts';

/** The kubelet points this symlink at a new generation to update a mounted volume atomically. */
const MOUNT_GENERATION_LINK = '..data';

export async function readInputs(dir: string): Promise<InputsSnapshot> {
  const root = await realInputsDir(dir);
  // A mount is read from the generation ..data points at, never through the key symlinks: during
  // an update they lag behind ..data (a removed key dangles, a new one is not linked yet), and
  // reading through them could mix files of two Secret versions. A generation never changes once
  // linked, so whatever is read from it is one consistent version.
  const generation = await mountGeneration(root);
  // The kubelet deletes the old generation right after an update: no fault of the inputs. A read that
  // overlapped the deletion may also have failed on nothing and missed files (even all of them), so a
  // generation that changed meanwhile voids whatever was read.
  const changed = async () => (await mountGeneration(root)) !== generation;
  let files: Map<string, Uint8Array>;
  try {
    files = await readFiles(dir, root, generation);
  } catch (error) {
    if (await changed()) throw inputsChangedError(dir);
    throw error;
  }
  if (await changed()) throw inputsChangedError(dir);
  return inputsFromFiles(files, dir);
}

async function realInputsDir(dir: string): Promise<string> {
  const fix = 'mount the inputs Secret or ConfigMap there, or pass --inputs DIR with the module inputs';
  let root: string;
  try {
    root = await realpath(dir);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') throw usageError(INPUTS_INVALID, `the inputs dir ${dir} does not exist: ${fix}`);
    throw usageError(
      INPUTS_INVALID,
      `cannot read the inputs dir ${dir} (${describe(error)}): make it readable, or ${fix}`,
    );
  }
  if (!(await stat(root)).isDirectory())
    throw usageError(INPUTS_INVALID, `the inputs dir ${dir} is not a directory: ${fix}`);
  return root;
}

async function mountGeneration(root: string): Promise<string | undefined> {
  try {
    return await readlink(join(root, MOUNT_GENERATION_LINK));
  } catch {
    return undefined; // no ..data symlink: a plain directory
  }
}

async function readFiles(dir: string, root: string, generation: string | undefined): Promise<Map<string, Uint8Array>> {
  const where = generation === undefined ? dir : join(dir, MOUNT_GENERATION_LINK);
  let filesDir = root;
  let names: string[];
  try {
    if (generation !== undefined) filesDir = await realpath(resolve(root, generation));
    names = await readdir(filesDir);
  } catch (error) {
    throw usageError(
      INPUTS_INVALID,
      `cannot read the inputs in ${where} (${describe(error)}): make them readable, or pass --inputs DIR`,
    );
  }
  if (filesDir !== root && !isInside(root, filesDir)) {
    throw usageError(
      INPUTS_INVALID,
      `${where} points to ${filesDir}, outside the inputs dir: mount the inputs there instead`,
    );
  }
  const files = new Map<string, Uint8Array>();
  for (const name of names.sort()) {
    // `..`-names are the mount's own entries; reserved names are the controller's records.
    if (name.startsWith('..') || isReservedName(name)) continue;
    files.set(name, await readEntry(dir, root, join(filesDir, name), name));
  }
  return files;
}

/** The bytes of one key: a regular file, or a symlink to one inside the inputs dir. */
async function readEntry(dir: string, root: string, path: string, name: string): Promise<Uint8Array> {
  const invalid = (problem: string, fix: string) =>
    usageError(INPUTS_INVALID, `input ${JSON.stringify(name)} in ${dir} ${problem}: ${fix}`, { file: name });
  try {
    let target = path;
    if ((await lstat(path)).isSymbolicLink()) {
      target = await realpath(path).catch((error: unknown) => {
        if (errorCode(error) === 'ENOENT') throw invalid('is a symlink to a missing file', 'fix or remove the link');
        throw error;
      });
      if (!isInside(root, target)) {
        throw invalid(`is a symlink to ${target}, outside the inputs dir`, 'copy the file into the inputs dir instead');
      }
    }
    const stats = await stat(target);
    if (stats.isDirectory()) {
      throw invalid(
        'is a directory',
        'inputs are flat files, one per Secret or ConfigMap key; move its files up or remove it',
      );
    }
    if (!stats.isFile()) throw invalid('is not a regular file', 'replace it with a regular file or remove it');
    return await readFile(target);
  } catch (error) {
    if (error instanceof RunnerError) throw error;
    throw invalid(`cannot be read (${describe(error)})`, 'make it readable by the runner, or remove it');
  }
}

function inputsChangedError(dir: string): RunnerError {
  return new RunnerError({
    kind: 'io',
    reason: 'InputsChangedDuringRead', // not rule 7's InputsChanged, a reason of the controller's
    message: `the inputs in ${dir} were updated while the runner read them (the mounted Secret or ConfigMap changed); run the Job again`,
  });
}

function isInside(root: string, path: string): boolean {
  const fromRoot = relative(root, path);
  // `..2026_11_30_…/key` is inside: only a `..` path segment leaves the dir.
  return fromRoot !== '' && fromRoot !== '..' && !fromRoot.startsWith(`..${sep}`) && !isAbsolute(fromRoot);
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function describe(error: unknown): string {
  return errorCode(error) ?? (error instanceof Error ? error.message : String(error));
}
