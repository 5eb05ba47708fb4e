// One store for everything the runner keeps in chunks: plan artifacts and state backups.
// A directory implementation (local runs, --artifacts/--backups DIR) and a Kubernetes Secret
// implementation (in-cluster) stand behind the same interface, so the ops never know which.

/** A location that holds chunked objects. An object is complete only once its manifest exists. */
export interface ChunkStore {
  /** Human-readable location, for messages (a path or `secret:<namespace>/<prefix>`). */
  readonly location: string;
  putChunk(object: string, index: number, data: Buffer): Promise<void>;
  /** Written last: its presence is what makes an object complete. */
  putManifest(object: string, manifest: Buffer): Promise<void>;
  getManifest(object: string): Promise<Buffer | undefined>;
  /** Indices of the chunks present, whatever the manifest says. */
  listChunks(object: string): Promise<number[]>;
  /**
   * A chunk's bytes. With `limitBytes` (the size the manifest lists), at most `limitBytes + 1` are
   * read: a chunk that grew or was swapped for a larger file comes back too long, never whole.
   */
  getChunk(object: string, index: number, limitBytes?: number): Promise<Buffer>;
  /** Objects in this store, complete or not, oldest first. */
  listObjects(): Promise<StoredObject[]>;
  deleteObject(object: string): Promise<void>;
}

export interface StoredObject {
  name: string;
  complete: boolean;
  /** When the object was written (RFC 3339), if the store knows. */
  created?: string;
}
