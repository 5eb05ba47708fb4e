// The state a saved plan was made against, read from the plan file itself: terraform refuses to
// apply a saved plan unless the backend's state has the lineage and serial the plan file records,
// so these name the very state an apply of it replaces. A plan file is a zip
// (hashicorp/terraform internal/plans/planfile): `tfstate` is the prior state with the lineage and
// serial of the state the backend held when planning (statemgr.PlannedStateUpdate; the ones the
// apply checks), `tfstate-prev` the same state before refresh with a stub header (serial 0, no
// lineage). Only the head of `tfstate` is read for the header: terraform writes version,
// terraform_version, serial and lineage first; `tfstate-prev` is copied out whole when an op reads the
// state before from its plan (steps/state-planned.ts). The zip is read with node's own zlib.
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createInflateRaw, inflateRawSync } from 'node:zlib';

/**
 * The plan file is not as terraform writes one: its zip, or the entry asked for, cannot be read. Other
 * errors (a failed read or write of a file) are thrown as they are.
 */
export class PlanFileUnreadable extends Error {
  override name = 'PlanFileUnreadable';
}

/** zlib's refusals of what it was given to inflate (and of a head that inflates past its bound): the file's fault. */
const asFormatError = (error: unknown, entry: string): unknown =>
  error instanceof Error && /^(Z_|ERR_BUFFER_TOO_LARGE)/.test((error as NodeJS.ErrnoException).code ?? '')
    ? new PlanFileUnreadable(`its ${entry} entry does not inflate (${error.message})`)
    : error;

/** The lineage and serial of the state a plan was made against; lineage "" and serial 0 when the backend held none. */
export interface PlanPriorState {
  lineage: string;
  serial: number;
}

/** Reads `length` bytes at `position` (fewer only at the end of the file). */
export interface PositionalFile {
  size(): Promise<number>;
  read(position: number, length: number): Promise<Buffer>;
}

const EOCD = 0x06054b50;
const CENTRAL_ENTRY = 0x02014b50;
const LOCAL_ENTRY = 0x04034b50;
/** The end record (22 bytes) and the longest zip comment. */
const TAIL_BYTES = 22 + 0xffff;
/** A central directory larger than this is no plan file terraform wrote (its entries are the module's files). */
const MAX_DIRECTORY_BYTES = 16 * 1024 * 1024;
/** Of `tfstate`'s compressed bytes, what is read: the head holds the header many times over. */
const HEAD_BYTES = 1024;
const STATE_ENTRY = 'tfstate';
/** The head of a state document as terraform writes it (statefile version 4, JSON indented). */
const STATE_HEAD =
  /^\{\s*"version":\s*4,\s*"terraform_version":\s*"[^"\\]*",\s*"serial":\s*(\d+),\s*"lineage":\s*"([^"\\]*)"/;

/**
 * The prior state's lineage and serial; `notZip` for a file that is no zip at all (no plan file terraform
 * writes: an encrypted plan of OpenTofu, a test's fake). Throws PlanFileUnreadable for a zip whose `tfstate` it cannot read.
 */
export async function planPriorState(file: PositionalFile): Promise<PlanPriorState | 'notZip'> {
  const data = await entryData(file, STATE_ENTRY);
  if (data === 'notZip') return 'notZip';
  if (!data) throw new PlanFileUnreadable(`it holds no ${STATE_ENTRY} entry`);
  const head = await file.read(data.at, Math.min(HEAD_BYTES, data.compressedBytes));
  const text = inflated(head, data.method).toString('utf8');
  const match = STATE_HEAD.exec(text);
  if (!match) throw new PlanFileUnreadable(`its ${STATE_ENTRY} entry does not start as a state of version 4`);
  return { serial: Number(match[1]), lineage: match[2]! };
}

/** The entry holding the prior state before terraform's refresh: the state as the backend held it (its header a stub). */
export const PREVIOUS_STATE_ENTRY = 'tfstate-prev';
/** What is read of an entry's compressed bytes at a time while it is copied. */
const COPY_PIECE = 1024 * 1024;
/**
 * What the inflater hands on at a time: each piece is a turn of libuv's threads to inflate it and another to
 * write it (zlib's 16 KiB made 580 turns of a 4.7 MB state, ≈ 30 ms of node's CPU).
 */
const INFLATED_PIECE = 256 * 1024;

/**
 * Writes the entry `name`, inflated, to `into` (a new private file), piece by piece: `notZip` for a file
 * that is no zip, `missing` for a zip without that entry. Throws PlanFileUnreadable for an entry it cannot read.
 */
export async function copyPlanEntry(
  file: PositionalFile,
  name: string,
  into: string,
): Promise<'written' | 'notZip' | 'missing'> {
  const data = await entryData(file, name);
  if (data === 'notZip' || data === undefined) return data ?? 'missing';
  const { at: start, method, compressedBytes } = data;
  refuseOtherMethod(name, method);
  const end = start + compressedBytes;
  const pieces = Readable.from(
    (async function* () {
      for (let at = start; at < end; at += COPY_PIECE) {
        const piece = await file.read(at, Math.min(COPY_PIECE, end - at));
        if (piece.length === 0) throw new PlanFileUnreadable(`its ${name} entry ends before its size`);
        yield piece;
      }
    })(),
  );
  // The runner's own new file (never through a link), readable by it alone: the state holds secrets.
  const written = createWriteStream(into, { mode: 0o600, flags: 'wx' });
  try {
    if (method === 8) await pipeline(pieces, createInflateRaw({ chunkSize: INFLATED_PIECE }), written);
    else await pipeline(pieces, written);
  } catch (error) {
    throw asFormatError(error, name);
  }
  return 'written';
}

/** Where the data of the entry `name` starts, how it is compressed and how long it is; see planPriorState. */
async function entryData(
  file: PositionalFile,
  name: string,
): Promise<{ at: number; method: number; compressedBytes: number } | 'notZip' | undefined> {
  const size = await file.size();
  const tailStart = Math.max(0, size - TAIL_BYTES);
  const tail = await file.read(tailStart, size - tailStart);
  let end = -1;
  for (let i = tail.length - 22; i >= 0; i--)
    if (tail.readUInt32LE(i) === EOCD) {
      end = i;
      break;
    }
  if (end < 0) return 'notZip';
  const directoryBytes = tail.readUInt32LE(end + 12);
  const directoryAt = tail.readUInt32LE(end + 16);
  if (directoryAt === 0xffffffff || directoryBytes > MAX_DIRECTORY_BYTES || directoryAt + directoryBytes > size)
    throw new PlanFileUnreadable(
      'its zip directory is out of bounds (or zip64, which terraform does not write for a plan)',
    );
  const directory = await file.read(directoryAt, directoryBytes);
  const entry = findEntry(directory, name);
  if (!entry) return undefined;
  const local = await file.read(entry.localAt, 30);
  if (local.length < 30 || local.readUInt32LE(0) !== LOCAL_ENTRY)
    throw new PlanFileUnreadable(`its ${name} entry has no local header`);
  const at = entry.localAt + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  if (at + entry.compressedBytes > size)
    throw new PlanFileUnreadable(`its ${name} entry runs past the end of the file`);
  return { at, method: entry.method, compressedBytes: entry.compressedBytes };
}

interface Entry {
  method: number;
  compressedBytes: number;
  localAt: number;
}

function findEntry(directory: Buffer, name: string): Entry | undefined {
  let at = 0;
  while (at + 46 <= directory.length && directory.readUInt32LE(at) === CENTRAL_ENTRY) {
    const nameBytes = directory.readUInt16LE(at + 28);
    const next = at + 46 + nameBytes + directory.readUInt16LE(at + 30) + directory.readUInt16LE(at + 32);
    if (directory.toString('utf8', at + 46, at + 46 + nameBytes) === name)
      return {
        method: directory.readUInt16LE(at + 10),
        compressedBytes: directory.readUInt32LE(at + 20),
        localAt: directory.readUInt32LE(at + 42),
      };
    at = next;
  }
  return undefined;
}

/** An entry stored (0) or deflated (8), as terraform's archive/zip writes them; any other method is refused. */
function refuseOtherMethod(name: string, method: number): void {
  if (method !== 0 && method !== 8)
    throw new PlanFileUnreadable(`its ${name} entry is compressed by method ${method}, not deflate`);
}

/** The start of an entry's data: stored, or deflated (as far as the bytes given go: 1 KiB inflates to at most about 1 MiB). */
function inflated(head: Buffer, method: number): Buffer {
  refuseOtherMethod(STATE_ENTRY, method);
  if (method === 0) return head;
  try {
    return inflateRawSync(head, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: 2 * 1024 * 1024 });
  } catch (error) {
    throw asFormatError(error, STATE_ENTRY);
  }
}
