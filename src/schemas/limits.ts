// The sizes of chunked artifacts (plan artifacts and state backups), stated once: the format's
// bounds, and the defaults of the settings that choose within them. Without zod: the command line
// shows the defaults before any op (and zod) loads.

/** The chunk size unless --chunk-bytes says otherwise: fits a Kubernetes Secret (1 MiB) even after base64, with headroom for metadata. */
export const DEFAULT_CHUNK_BYTES = 700_000;
/** The smallest chunk a writer cuts. */
export const MIN_CHUNK_BYTES = 1024;
/** The largest chunk --chunk-bytes may ask for: a chunk must fit a Secret after base64. */
export const MAX_SETTING_CHUNK_BYTES = 750_000;
/** The largest chunk the format allows: it bounds the memory a reader needs, a chunk at a time. */
export const MAX_CHUNK_BYTES = 16 * 1024 * 1024;
/** A chunk index must fit the 5-digit chunk names of the directory layout. */
export const MAX_CHUNKS = 100_000;
/**
 * What an artifact may hold unless the reader allows more (`--max-artifact-bytes`): its payload and
 * the files it unpacks to, each. A manifest claiming more is refused before a chunk is read, so a
 * forged one cannot make a reader fill a disk.
 */
export const DEFAULT_MAX_ARTIFACT_BYTES = 128 * 1024 * 1024;
/** A manifest of MAX_CHUNKS chunks takes about 11 MB: a larger one is not read. */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;
