// A ChunkStore (and the records beside it) in PostgreSQL: an object's chunks and its manifest are
// written in one transaction, so no partial object can exist; retention is one statement. Rows
// are keyed by the store's prefix (`captf-backup-tc.team-a.prod`): objects sharing a schema keep apart.
import { MAX_CHUNK_BYTES, MAX_MANIFEST_BYTES } from '../schemas/limits.ts';
import { artifactExists } from './artifact-errors.ts';
import { checkObjectName, missingChunk } from './object-names.ts';
import type { PgDatabase } from './pg-database.ts';
import type { ChunkStore, HeldChunk, ObjectWrite, PruneRequest, RecordStore, StoredObject } from './store.ts';

export class PgChunkStore implements ChunkStore, RecordStore {
  readonly location: string;

  constructor(
    private readonly db: PgDatabase,
    /** Starts every key of this store, e.g. `captf-backup-tc.team-a.prod`. */
    private readonly prefix: string,
  ) {
    this.location = `${db.target.location}/${prefix}`;
  }

  async create(object: string): Promise<ObjectWrite> {
    checkObjectName(object);
    const objects = this.db.table('captf_objects');
    const chunks = this.db.table('captf_chunks');
    const tx = await this.db.transaction();
    const exclusive = async <T>(step: () => Promise<T>): Promise<T> => {
      try {
        return await step();
      } catch (error) {
        await tx.rollback();
        // A racing writer of the same name committed first: its object stands.
        throw (error as { cause?: { code?: string } }).cause?.code === '23505'
          ? artifactExists(this.location, object)
          : error;
      }
    };
    await exclusive(async () => {
      if ((await tx.query(`SELECT 1 FROM ${objects} WHERE store = $1 AND object = $2`, [this.prefix, object])).length)
        throw artifactExists(this.location, object);
    });
    return {
      putChunk: (index, data) =>
        exclusive(() =>
          tx.query(`INSERT INTO ${chunks} (store, object, idx, data) VALUES ($1, $2, $3, $4)`, [
            this.prefix,
            object,
            index,
            data,
          ]),
        ).then(() => undefined),
      // Computed by the database from what it holds: nothing crosses the wire again.
      held: () =>
        exclusive(async () =>
          (
            await tx.query<{ idx: number; bytes: number; sha256: string }>(
              `SELECT idx, length(data) AS bytes, encode(sha256(data), 'hex') AS sha256 FROM ${chunks} WHERE store = $1 AND object = $2 ORDER BY idx`,
              [this.prefix, object],
            )
          ).map((row): HeldChunk => ({ index: row.idx, bytes: row.bytes, sha256: row.sha256 })),
        ),
      commit: (manifest) =>
        exclusive(async () => {
          await tx.query(`INSERT INTO ${objects} (store, object, manifest) VALUES ($1, $2, $3)`, [
            this.prefix,
            object,
            manifest,
          ]);
          await tx.commit();
        }),
      abort: () => tx.rollback(),
    };
  }

  async getManifest(object: string): Promise<Buffer | undefined> {
    checkObjectName(object);
    const rows = await this.db.query<{ manifest: string }>(
      `SELECT ${base64Slice('manifest', '$3')} AS manifest FROM ${this.db.table('captf_objects')} WHERE store = $1 AND object = $2`,
      [this.prefix, object, MAX_MANIFEST_BYTES + 1],
    );
    return rows[0] && fromBase64(rows[0].manifest);
  }

  async listChunks(object: string): Promise<number[]> {
    checkObjectName(object);
    const rows = await this.db.query<{ idx: number }>(
      `SELECT idx FROM ${this.db.table('captf_chunks')} WHERE store = $1 AND object = $2 ORDER BY idx`,
      [this.prefix, object],
    );
    return rows.map((row) => row.idx);
  }

  /** A slice of the stored value: at most `limitBytes + 1` bytes leave the database. */
  async getChunk(object: string, index: number, limitBytes = MAX_CHUNK_BYTES): Promise<Buffer> {
    checkObjectName(object);
    const rows = await this.db.query<{ data: string }>(
      `SELECT ${base64Slice('data', '$4')} AS data FROM ${this.db.table('captf_chunks')} WHERE store = $1 AND object = $2 AND idx = $3`,
      [this.prefix, object, index, limitBytes + 1],
    );
    if (!rows[0]) throw missingChunk(this.location, object, index);
    return fromBase64(rows[0].data);
  }

  async listObjects(): Promise<StoredObject[]> {
    const rows = await this.db.query<{ object: string; created: Date }>(
      `SELECT object, created_at AS created FROM ${this.db.table('captf_objects')} WHERE store = $1 ORDER BY created_at, object`,
      [this.prefix],
    );
    return rows.map((row) => ({ name: row.object, complete: true, created: row.created.toISOString() }));
  }

  /** The chunks go with their manifest (ON DELETE CASCADE), in the same statement. */
  async deleteObject(object: string): Promise<void> {
    checkObjectName(object);
    await this.db.query(`DELETE FROM ${this.db.table('captf_objects')} WHERE store = $1 AND object = $2`, [
      this.prefix,
      object,
    ]);
  }

  /** retention.ts's rule in one statement: every object here is complete, so it keeps the newest `keep` and the protected. */
  async prune({ keep, prefix, protect }: PruneRequest): Promise<string[]> {
    const objects = this.db.table('captf_objects');
    const rows = await this.db.query<{ object: string; created: Date }>(
      `DELETE FROM ${objects}
        WHERE store = $1 AND starts_with(object, $2) AND NOT (object = ANY($3::text[]))
          AND object NOT IN (SELECT object FROM ${objects} WHERE store = $1 AND starts_with(object, $2) ORDER BY created_at DESC, object DESC LIMIT $4)
        RETURNING object, created_at AS created`,
      [this.prefix, prefix, protect, keep],
    );
    return rows
      .sort((a, b) => a.created.getTime() - b.created.getTime() || a.object.localeCompare(b.object))
      .map((row) => row.object);
  }

  async putRecord(name: string, data: Buffer): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.db.table('captf_records')} (store, name, data) VALUES ($1, $2, $3)
        ON CONFLICT (store, name) DO UPDATE SET data = excluded.data, written_at = clock_timestamp()`,
      [this.prefix, name, data],
    );
  }

  async getRecord(name: string, maxBytes: number): Promise<Buffer | undefined> {
    const rows = await this.db.query<{ data: string }>(
      `SELECT ${base64Slice('data', '$3')} AS data FROM ${this.db.table('captf_records')} WHERE store = $1 AND name = $2`,
      [this.prefix, name, maxBytes + 1],
    );
    const data = rows[0] && fromBase64(rows[0].data);
    if (data && data.length > maxBytes)
      throw new Error(
        `the record ${name} in ${this.location} holds more than ${maxBytes} bytes: not a record the runner wrote`,
      );
    return data;
  }

  async listRecords(prefix: string): Promise<string[]> {
    const rows = await this.db.query<{ name: string }>(
      `SELECT name FROM ${this.db.table('captf_records')} WHERE store = $1 AND starts_with(name, $2) ORDER BY written_at DESC, name`,
      [this.prefix, prefix],
    );
    return rows.map((row) => row.name);
  }

  async deleteRecord(name: string): Promise<void> {
    await this.db.query(`DELETE FROM ${this.db.table('captf_records')} WHERE store = $1 AND name = $2`, [
      this.prefix,
      name,
    ]);
  }
}

/**
 * The first `bytes` bytes of a bytea column, as base64: node-postgres reads bytea as hex text (twice
 * its size on the wire), base64 is a third more. Sent as binary (a Buffer parameter) on writes.
 */
const base64Slice = (column: string, bytes: string) => `encode(substring(${column} from 1 for ${bytes}), 'base64')`;
/** PostgreSQL's base64 breaks lines every 76 characters: Buffer.from skips them. */
const fromBase64 = (text: string) => Buffer.from(text, 'base64');
