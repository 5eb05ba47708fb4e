// One store for everything the runner keeps in chunks: plan artifacts and state backups.
// A directory, Kubernetes Secrets, PostgreSQL and an S3 bucket stand behind the same interface,
// so the ops never know which (contract/sections/artifacts.md: the format, and each store's layout).

/** A location that holds chunked objects. An object is complete only once its manifest exists. */
export interface ChunkStore {
  /** Human-readable location, for messages and results: never a credential (a path, `secret:<namespace>/<prefix>`, `postgres://…`, `s3://…`). */
  readonly location: string;
  /**
   * Starts writing `object`. Refuses (ArtifactExists) an object that is complete; what an
   * unfinished earlier write left under the name is replaced. Nothing reads as complete before
   * the write's commit.
   */
  create(object: string): Promise<ObjectWrite>;
  getManifest(object: string): Promise<Buffer | undefined>;
  /** Indices of the chunks present, whatever the manifest says. */
  listChunks(object: string): Promise<number[]>;
  /**
   * A chunk's bytes. With `limitBytes` (the size the manifest lists), at most `limitBytes + 1` are
   * read: a chunk that grew or was swapped for a larger one comes back too long, never whole.
   */
  getChunk(object: string, index: number, limitBytes?: number): Promise<Buffer>;
  /** Objects in this store, complete or not, oldest first. */
  listObjects(): Promise<StoredObject[]>;
  /** Removes the manifest first, so an object never reads as complete while it goes; a missing object is no error. */
  deleteObject(object: string): Promise<void>;
  /** The store's own retention (retention.ts has the rule), where it can do it in one go. */
  prune?(plan: PruneRequest): Promise<string[]>;
}

/** One object being written: chunks, then the manifest that makes it complete. */
export interface ObjectWrite {
  putChunk(index: number, data: Buffer): Promise<void>;
  /** Every chunk the object holds now, as the store holds it (not as it was sent). */
  held(): Promise<HeldChunk[]>;
  /** Writes the manifest, exclusively: from here the object is complete. ArtifactExists if another writer completed it first. */
  commit(manifest: Buffer): Promise<void>;
  /** Gives up: nothing of this write reads as complete, and what it wrote is removed (best effort). */
  abort(): Promise<void>;
}

export interface HeldChunk {
  index: number;
  bytes: number;
  sha256: string;
}

export interface StoredObject {
  name: string;
  complete: boolean;
  /** When the object was written (RFC 3339), if the store knows. */
  created?: string;
}

/** What retention keeps and deletes in one family of objects (retention.ts). */
export interface PruneRequest {
  /** How many complete objects to keep (the newest); at least 1. */
  keep: number;
  /** Only objects whose names start with it take part (a store may hold several families). */
  prefix: string;
  /** Never deleted, whatever their age. */
  protect: readonly string[];
}

/**
 * Small whole records kept beside the backups (a blocked apply's result, read by the approved
 * apply that follows): written whole or not at all, replaced by a newer one of the same name.
 */
export interface RecordStore {
  readonly location: string;
  putRecord(name: string, data: Buffer): Promise<void>;
  /** undefined when there is none; refused (an Error) when larger than `maxBytes`. */
  getRecord(name: string, maxBytes: number): Promise<Buffer | undefined>;
  /** Records whose names start with `prefix`, newest first. */
  listRecords(prefix: string): Promise<string[]>;
  deleteRecord(name: string): Promise<void>;
}
