// The --summary-md FILE, opened once before anything runs and appended to at the end. It is a
// regular file of its own: never a link (followed, it could lead into the state), never a FIFO or a
// device (opening one for writing waits for a reader that may never come, and no signal ends that
// wait), never a file of another name (a hard link), and never one the run reads or writes (the
// state, the result, the inputs, the backups, the artifacts): Markdown appended to any of these
// breaks it. Anything else is refused (exit 2) before the run starts.
import { constants, type FileHandle, open, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { usageError } from '../errors.ts';
import type { Settings } from '../schemas/config.ts';

/** A file or directory of the run, and the flag that names it. */
interface RunPlace {
  flag: string;
  path: string;
}

/** What a run reads or writes: the summary is none of its files and in none of its directories. */
export interface RunPlaces {
  files: RunPlace[];
  dirs: RunPlace[];
}

/**
 * The files and directories an op reads or writes, as its settings name them. The module and policy
 * dirs are read once, at the start, and never written: a summary among them harms no run.
 */
export function runPlaces(settings: Settings): RunPlaces {
  const given = (entries: [string, string | undefined][]) =>
    entries
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([flag, path]) => ({ flag, path }));
  return {
    files: given([
      ['--state', settings.state],
      ['--termination-log', settings.terminationLog],
      ...settings.backendConfig.map((path): [string, string] => ['--backend-config', path]),
    ]),
    dirs: given([
      ['--inputs', settings.inputs],
      ['--out', settings.out],
      ['--backups', settings.backups],
      ['--artifacts', settings.artifacts],
      ['--plan-artifact', settings.planArtifact],
      ['--backup', settings.backup],
      ['--workdir', settings.workdir],
    ]),
  };
}

export interface SummaryMdFile {
  /** Appends, as GitHub expects of $GITHUB_STEP_SUMMARY. Never throws: a failure comes back as the warning to give. */
  append(markdown: string): Promise<string | undefined>;
}

const refused = (path: string, problem: string) =>
  usageError(
    'SummaryMdUnusable',
    `--summary-md ${path} ${problem}: nothing was run. Give --summary-md a regular file of its own (no link, FIFO or device, not a hard link), outside the files and directories the run reads and writes (e.g. "$GITHUB_STEP_SUMMARY").`,
  );

/** The path with its directory's links resolved (the file itself may not exist yet). */
async function realLocation(path: string): Promise<string> {
  const full = resolve(path);
  return realpath(full).catch(async () =>
    join(await realpath(dirname(full)).catch(() => dirname(full)), basename(full)),
  );
}

const isWithin = (path: string, dir: string) => path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/**
 * Opens FILE for appending, without following a link and without blocking (O_NOFOLLOW|O_NONBLOCK,
 * then fstat), after checking that it is none of the run's files and in none of its directories;
 * refused (a usage error, exit 2) otherwise.
 */
export async function openSummaryMd(path: string, places: RunPlaces): Promise<SummaryMdFile> {
  const parent = await realpath(dirname(resolve(path))).catch((error: NodeJS.ErrnoException) => error);
  if (parent instanceof Error)
    throw refused(path, `is in a directory that cannot be used (${parent.code ?? parent.message})`);
  const location = join(parent, basename(resolve(path)));
  for (const file of places.files)
    if ((await realLocation(file.path)) === location) throw refused(path, `is the file of ${file.flag} ${file.path}`);
  for (const dir of places.dirs)
    if (isWithin(location, await realLocation(dir.path)))
      throw refused(path, `is inside the directory of ${dir.flag} ${dir.path}`);
  let handle: FileHandle;
  try {
    handle = await open(
      location,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      0o644,
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw refused(
      path,
      code === 'ELOOP'
        ? 'is a symbolic link'
        : code === 'ENXIO'
          ? 'is a FIFO or socket'
          : `cannot be opened (${code ?? (error as Error).message})`,
    );
  }
  try {
    const found = await handle.stat();
    if (!found.isFile())
      throw refused(
        path,
        found.isFIFO() ? 'is a FIFO' : found.isDirectory() ? 'is a directory' : 'is not a regular file',
      );
    if (found.nlink > 1)
      throw refused(path, `has ${found.nlink} names (hard links): it may be a file the run reads or writes`);
    for (const file of places.files) {
      const other = await stat(file.path).catch(() => undefined);
      if (other && other.dev === found.dev && other.ino === found.ino)
        throw refused(path, `is the file of ${file.flag} ${file.path}`);
    }
  } catch (error) {
    await handle.close();
    throw error;
  }
  return {
    async append(markdown) {
      try {
        await handle.appendFile(markdown);
        return undefined;
      } catch (error) {
        return `could not append the Markdown summary to ${path} (--summary-md): ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; the run's outcome and result are unchanged`;
      } finally {
        await handle.close().catch(() => {});
      }
    },
  };
}
