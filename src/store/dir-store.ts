// A ChunkStore over a local directory (local runs, --artifacts/--backups DIR, mounted volumes):
//   <root>/<object>/chunk-00000, chunk-00001, …   the gzipped payload, split (each written exclusively)
//   <root>/<object>/manifest.json                 written last, atomically and exclusively
//   <root>/<record>                               records (blocked-<approval hash>.json), beside the objects
// Everything here can hold secret material (plan files carry variable values and prior state),
// so object directories are 0700 and files 0600.
import { mkdir, open, readdir, rm, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { RunnerError, usageError } from '../errors.ts';
import { writeFileAtomic, writeFileExclusive } from '../util/atomic-write.ts';
import { makeDirs } from '../util/mkdirs.ts';
import { readRegularFile } from '../util/regular-file.ts';
import { sha256Hex } from '../util/sha256.ts';
import { artifactExists } from './artifact-errors.ts';
import { MAX_CHUNK_BYTES, MAX_CHUNKS, MAX_MANIFEST_BYTES } from '../schemas/limits.ts';
import { checkObjectName, missingChunk, OBJECT_NAME } from './object-names.ts';
import type { ChunkStore, HeldChunk, ObjectWrite, RecordStore, StoredObject } from './store.ts';

const MANIFEST_FILE = 'manifest.json';
const CHUNK_FILE = /^chunk-(\d{5})$/;

const chunkFileName = (index: number) => `chunk-${String(index).padStart(5, '0')}`;

export class DirStore implements ChunkStore, RecordStore {
  readonly location: string;

  constructor(root: string) {
    this.location = resolve(root);
  }

  async create(object: string): Promise<ObjectWrite> {
    if (await this.getManifest(object)) throw artifactExists(this.location, object);
    // Chunks without a manifest: an earlier write that died.
    if ((await this.listChunks(object)).length > 0) await this.deleteObject(object);
    return {
      // Exclusive, as the manifest: a racing writer of the same name never replaces another's chunk.
      putChunk: async (index, data) => {
        checkChunkIndex(index);
        await writeFileDurablyOnce(await this.ensureObjectDir(object), chunkFileName(index), data, () =>
          artifactExists(this.location, object),
        );
      },
      // Read back one chunk at a time: a writer holds about two chunks, whatever the size of the files.
      held: async () => {
        const held: HeldChunk[] = [];
        for (const index of await this.listChunks(object)) {
          const data = await this.getChunk(object, index);
          held.push({ index, bytes: data.length, sha256: sha256Hex(data) });
        }
        return held;
      },
      commit: async (manifest) => {
        const dir = await this.ensureObjectDir(object);
        // The chunks' directory entries must be durable before the manifest that vouches for them.
        await syncDir(dir);
        await writeFileDurablyOnce(dir, MANIFEST_FILE, manifest, () => artifactExists(this.location, object));
        await syncDir(dir);
      },
      abort: async () => {
        // Another writer's complete object is not this write's to remove.
        if (!(await this.getManifest(object).catch(() => undefined))) await this.deleteObject(object);
      },
    };
  }

  async getManifest(object: string): Promise<Buffer | undefined> {
    const path = join(this.objectDir(object), MANIFEST_FILE);
    try {
      // A regular file only: a FIFO, device or link planted in the store is refused, never waited on or read whole.
      return await readRegularFile(path, MAX_MANIFEST_BYTES + 1);
    } catch (error) {
      const misnamed = await wrongLevel(this.objectDir(object), error);
      if (misnamed) throw misnamed;
      if (isMissing(error)) return undefined;
      throw ioError('read', path, error);
    }
  }

  async listChunks(object: string): Promise<number[]> {
    const dir = this.objectDir(object);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if (isMissing(error)) return [];
      throw ioError('list', dir, error);
    }
    return names
      .map((name) => CHUNK_FILE.exec(name)?.[1])
      .filter((digits) => digits !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  async getChunk(object: string, index: number, limitBytes = MAX_CHUNK_BYTES): Promise<Buffer> {
    checkChunkIndex(index);
    const path = join(this.objectDir(object), chunkFileName(index));
    try {
      return await readRegularFile(path, limitBytes + 1);
    } catch (error) {
      if (isMissing(error)) throw missingChunk(this.location, object, index, { path });
      throw ioError('read', path, error);
    }
  }

  /** Oldest first, by the time of the last write: the manifest for complete objects, else the newest entry. */
  async listObjects(): Promise<StoredObject[]> {
    const objects = await Promise.all(
      (await this.entries())
        .filter((entry) => entry.isDirectory() && OBJECT_NAME.test(entry.name))
        .map(async (entry) => {
          const dir = join(this.location, entry.name);
          const manifest = await statIfPresent(join(dir, MANIFEST_FILE));
          // A directory deleted meanwhile still sorts; the caller finds it gone.
          const writtenMs = manifest?.mtimeMs ?? (await statIfPresent(dir))?.mtimeMs ?? 0;
          return { name: entry.name, complete: manifest !== undefined, writtenMs };
        }),
    );
    return objects
      .sort((a, b) => a.writtenMs - b.writtenMs || a.name.localeCompare(b.name))
      .map(({ name, complete, writtenMs }) => ({ name, complete, created: new Date(writtenMs).toISOString() }));
  }

  async deleteObject(object: string): Promise<void> {
    const dir = this.objectDir(object);
    try {
      // The manifest goes first, so a half-deleted object reads as incomplete, never as corrupt.
      await unlink(join(dir, MANIFEST_FILE)).catch((error: unknown) => {
        if (!isMissing(error)) throw error;
      });
      await rm(dir, { recursive: true, force: true });
    } catch (error) {
      throw ioError('delete', dir, error);
    }
  }

  async putRecord(name: string, data: Buffer): Promise<void> {
    try {
      await makeDirs(this.location, 0o700);
    } catch (error) {
      throw ioError('create', this.location, error);
    }
    await writeFileDurably(this.location, checkRecordName(name), data);
  }

  /** A regular file only, as chunks are read: whoever can write the directory could plant a FIFO or a link to a device. */
  async getRecord(name: string, maxBytes: number): Promise<Buffer | undefined> {
    const path = join(this.location, checkRecordName(name));
    let data: Buffer;
    try {
      data = await readRegularFile(path, maxBytes + 1);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    if (data.length > maxBytes)
      throw new Error(`${path} holds more than ${maxBytes} bytes: not a record the runner wrote`);
    return data;
  }

  /** Newest first, by modification time; ties by name. */
  async listRecords(prefix: string): Promise<string[]> {
    const dated = await Promise.all(
      (await this.entries())
        .filter((entry) => entry.isFile() && entry.name.startsWith(prefix) && RECORD_NAME.test(entry.name))
        .map(async (entry) => ({
          name: entry.name,
          ms: (await statIfPresent(join(this.location, entry.name)))?.mtimeMs ?? 0,
        })),
    );
    return dated.sort((a, b) => b.ms - a.ms || a.name.localeCompare(b.name)).map((entry) => entry.name);
  }

  async deleteRecord(name: string): Promise<void> {
    const path = join(this.location, checkRecordName(name));
    try {
      await rm(path, { force: true });
    } catch (error) {
      throw ioError('delete', path, error);
    }
  }

  /** What the store's directory holds; nothing when it does not exist yet. */
  private async entries() {
    try {
      return await readdir(this.location, { withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return [];
      throw ioError('list', this.location, error);
    }
  }

  private objectDir(object: string): string {
    return join(this.location, checkObjectName(object));
  }

  private async ensureObjectDir(object: string): Promise<string> {
    const dir = this.objectDir(object);
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw ioError('create', dir, error);
    }
    return dir;
  }
}

/**
 * One object addressed by its own directory (`apply --plan-artifact DIR`, `restore --backup DIR`):
 * the store is the parent directory and the object its last path component.
 */
export function openDirObject(dir: string): { store: DirStore; object: string } {
  const path = resolve(dir);
  return { store: new DirStore(dirname(path)), object: checkObjectName(basename(path)) };
}

/**
 * An object named one directory level too high (the store's directory) or too low (a file of the
 * object): a usage error saying what is there and the path that would work, never "missing".
 */
async function wrongLevel(objectDir: string, error: unknown): Promise<RunnerError | undefined> {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const misnamed = (found: string, use: string, message: string, objects?: string[]) =>
    usageError('ArtifactPathWrongLevel', message, { path: objectDir, found, use, ...(objects ? { objects } : {}) });
  if (code === 'ENOTDIR') {
    const parent = dirname(objectDir);
    const name = basename(objectDir);
    if (
      (name === MANIFEST_FILE || CHUNK_FILE.test(name)) &&
      (await statIfPresent(join(parent, MANIFEST_FILE)).catch(() => undefined))
    ) {
      return misnamed(
        'objectFile',
        parent,
        `${objectDir} is the ${name} of a stored object, not the object: name the object's directory, ${parent}`,
      );
    }
    return undefined;
  }
  if (code !== 'ENOENT') return undefined;
  const inside = (await new DirStore(objectDir).listObjects().catch(() => []))
    .filter((o) => o.complete)
    .map((o) => o.name);
  if (!inside.length) return undefined;
  const newest = join(objectDir, inside.at(-1)!);
  const shown = inside.length > 5 ? [...inside.slice(-5), `and ${inside.length - 5} more`] : inside;
  return misnamed(
    'storeDirectory',
    newest,
    `${objectDir} is a directory of stored objects, not one object: it holds ${shown.join(', ')} (newest last). Name one of them, e.g. ${newest}`,
    inside,
  );
}

/** A record is a file beside the objects: a name that cannot be an object directory's or a temp file's. */
const RECORD_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}\.json$/;

function checkRecordName(name: string): string {
  if (!RECORD_NAME.test(name))
    throw new RunnerError({ kind: 'internal', reason: 'InternalError', message: `"${name}" is not a record name` });
  return name;
}

async function statIfPresent(path: string) {
  try {
    return await stat(path);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw ioError('read', path, error);
  }
}

async function writeFileDurably(dir: string, name: string, data: Buffer): Promise<void> {
  const path = join(dir, name);
  try {
    await writeFileAtomic(path, data, 0o600);
  } catch (error) {
    throw ioError('write', path, error);
  }
}

/** As writeFileDurably, but never replaces a file: `exists()` is thrown when the name is taken. */
async function writeFileDurablyOnce(dir: string, name: string, data: Buffer, exists: () => Error): Promise<void> {
  const path = join(dir, name);
  try {
    await writeFileExclusive(path, data, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw exists();
    throw ioError('write', path, error);
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw ioError('sync', dir, error);
  }
}

function checkChunkIndex(index: number) {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_CHUNKS) {
    throw new RunnerError({
      kind: 'internal',
      reason: 'InternalError',
      message: `chunk index ${index} is out of range 0..${MAX_CHUNKS - 1}`,
    });
  }
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';

function ioError(action: string, path: string, error: unknown): RunnerError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const cause = error instanceof Error ? error.message : String(error);
  return new RunnerError({
    kind: 'io',
    reason: action === 'read' || action === 'list' ? 'StoreReadFailed' : 'StoreWriteFailed',
    message: `cannot ${action} ${path}: ${cause}. Check that the directory exists, belongs to this user and has free space`,
    detail: { path, ...(code ? { code } : {}) },
    cause: error,
  });
}
