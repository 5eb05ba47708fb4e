// Unpacking a verified artifact: its chunks through gunzip and tar into a directory of its own,
// where only plain files the manifest lists land, each checked for its size and sha256. A
// decompression bomb, a link, a path that climbs out or an unlisted entry is refused on its header.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { RunnerError, usageError } from '../errors.ts';
import { hashing } from '../util/sha256.ts';
import { messageOf, type Failure } from './artifact-errors.ts';
import type { ArtifactManifest, FileEntry } from './manifest.ts';

type TarEntry = tar.ExtractEvents['entry'][1];

/** Streams verified chunks through gunzip and tar into `into`; returns the path of each file. */
export async function extractFiles(
  chunks: AsyncIterable<Buffer>,
  manifest: ArtifactManifest,
  into: string,
  fail: Failure,
): Promise<Record<string, string>> {
  const listed = new Map(manifest.files.map((file) => [file.name, file]));
  const paths = new Map<string, string>(); // a Map: a file may be called "constructor"

  // Stops a decompression bomb: the tar can be no bigger than its listed files plus headers.
  const tarLimit = manifest.files.reduce(
    (sum, file) => sum + TAR_ENTRY_OVERHEAD + roundUpToBlock(file.bytes),
    TAR_TRAILER_ALLOWANCE,
  );
  async function* limited(tarBytes: AsyncIterable<Buffer>) {
    let total = 0;
    for await (const piece of tarBytes) {
      total += piece.length;
      if (total > tarLimit)
        throw fail('ArtifactUnsafe', `unpacks to more than the ${tarLimit} bytes its manifest allows`);
      yield piece;
    }
  }

  const extract = tar.extract();
  // The generator as the source (not Readable.from, which reads 16 chunks ahead): one chunk at a time.
  const feeding = pipeline(chunks, createGunzip(), limited, extract);
  try {
    for await (const entry of extract) {
      const file = checkEntry(entry.header, listed, paths, fail);
      paths.set(file.name, await writeEntry(entry, file, join(into, file.name), fail));
    }
    await feeding;
  } catch (error) {
    await feeding.catch(() => undefined);
    if (error instanceof RunnerError) throw error;
    throw fail('ArtifactCorrupt', `is not a valid gzipped tar: ${messageOf(error)}`);
  }

  const missing = manifest.files.filter((file) => !paths.has(file.name)).map((file) => file.name);
  if (missing.length > 0)
    throw fail('ArtifactCorrupt', `lacks listed file(s) ${missing.map((name) => `"${name}"`).join(', ')}`);
  return Object.fromEntries(paths);
}

const TAR_BLOCK = 512;
const roundUpToBlock = (bytes: number) => Math.ceil(bytes / TAR_BLOCK) * TAR_BLOCK;
// A header block, and a pax header with its data for long names: generous for what tar-stream writes.
const TAR_ENTRY_OVERHEAD = 4 * TAR_BLOCK;
const TAR_TRAILER_ALLOWANCE = 20 * TAR_BLOCK;

/** Refuses any entry but a plain, listed, first-seen file of the listed size. */
function checkEntry(
  header: tar.Header,
  listed: Map<string, FileEntry>,
  extracted: Map<string, string>,
  fail: Failure,
): FileEntry {
  const { name, type } = header;
  // Judged on the header alone, before any of the entry's content is read.
  const refuse = (problem: string) =>
    fail('ArtifactUnsafe', `has an unsafe entry "${name}": ${problem}`, undefined, { entry: name });
  if (type === 'directory') throw refuse('a directory (artifacts hold plain files only)');
  if (type !== 'file') throw refuse(`a ${type} (links, devices and FIFOs are never extracted)`);
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw refuse('an absolute path');
  if (name.split(/[\\/]/).includes('..')) throw refuse('a path that climbs out of the extraction directory');
  const file = listed.get(name);
  if (!file) throw refuse('not listed in the manifest');
  if (extracted.has(name)) throw refuse('a second entry with the same name');
  const size = header.size ?? 0;
  if (size > file.bytes) throw refuse(`${size} bytes, more than the ${file.bytes} the manifest lists`);
  if (size !== file.bytes)
    throw fail('ArtifactCorrupt', `has file "${name}" of ${size} bytes; the manifest lists ${file.bytes}`);
  return file;
}

/** Writes one entry (checkEntry passed: the parser yields exactly the listed number of bytes). */
async function writeEntry(entry: TarEntry, file: FileEntry, path: string, fail: Failure): Promise<string> {
  const hash = createHash('sha256');
  try {
    await pipeline(
      entry as AsyncIterable<Buffer>, // a streamx Readable, typed as yielding unknown
      hashing(hash),
      // 'wx': never follow or reuse something already at the path.
      createWriteStream(path, { flags: 'wx', mode: 0o600 }),
    );
  } catch (error) {
    if (error instanceof RunnerError || !isFsError(error)) throw error;
    throw new RunnerError({
      kind: 'io',
      reason: 'ExtractFailed',
      message: `cannot write ${path}: ${messageOf(error)}. Check that the directory is writable and has free space`,
      detail: { path },
      cause: error,
    });
  }
  if (hash.digest('hex') !== file.sha256) {
    throw fail('ArtifactCorrupt', `has file "${file.name}" whose sha256 differs from the manifest`);
  }
  return path;
}

const isFsError = (error: unknown) => typeof (error as NodeJS.ErrnoException | undefined)?.syscall === 'string';

/** Returns the directory to remove on failure: the topmost one created here, if any. */
export async function prepareExtractDir(into: string): Promise<string | undefined> {
  try {
    const created = await mkdir(into, { recursive: true, mode: 0o700 });
    if (created) return created;
    if ((await readdir(into)).length > 0) {
      throw usageError(
        'ExtractDirNotEmpty',
        `cannot extract into ${into}: it is not empty; give a new or empty directory`,
      );
    }
    await chmod(into, 0o700);
    return undefined;
  } catch (error) {
    if (error instanceof RunnerError) throw error;
    throw new RunnerError({
      kind: 'io',
      reason: 'ExtractFailed',
      message: `cannot prepare ${into} for extraction: ${messageOf(error)}`,
      detail: { path: into },
      cause: error,
    });
  }
}

/** After a failure: removes what prepareExtractDir created, or empties the directory it was given. */
export async function removeExtracted(into: string, created: string | undefined) {
  if (created) {
    await rm(created, { recursive: true, force: true });
    return;
  }
  // The directory was empty when extraction began: everything in it is ours.
  for (const name of await readdir(into).catch(() => [])) await rm(join(into, name), { recursive: true, force: true });
}
