// Blobs in the SQLite store: small ones inline in `blobs.data`, large ones (over CHUNK_BYTES) as
// rows of `blob_chunks` naming chunks in `chunks`, so no value grows past a few MiB and ranges
// read only the chunks they cover. A chunked blob's row has an empty `data` and its real size;
// inline values and chunks may be deflated (blob-codec.ts: shorter than their size means so).
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import { AfsError } from "../../core/errors.js";
import type { Hash } from "../../core/hash.js";
import { decode, encode } from "../blob-codec.js";
import { type BlobMeta, type BlobPort, ChunkedBlobReader } from "../chunked-blobs.js";
import { CHUNK_BYTES, type ChunkRef, chunksOf, storeStream, toBuffer } from "../chunking.js";
import { Inflater } from "../inflater.js";
import type { NewBlob } from "../store.js";
import { prepareSmall, readSmall, SMALL_BATCH } from "./small-blobs.js";

/** Schema version 3: chunk storage. Blobs stored before it stay inline and keep working. */
export const CHUNKS_MIGRATION = `
  CREATE TABLE chunks (hash TEXT PRIMARY KEY, size INTEGER NOT NULL, created_at INTEGER NOT NULL, data BLOB NOT NULL);
  CREATE TABLE blob_chunks (
    blob TEXT NOT NULL REFERENCES blobs(hash) ON DELETE CASCADE,
    start INTEGER NOT NULL,
    size INTEGER NOT NULL,
    chunk TEXT NOT NULL,
    PRIMARY KEY (blob, start)
  ) WITHOUT ROWID;
  CREATE INDEX blob_chunks_by_chunk ON blob_chunks(chunk);
`;

type Guard = <T>(fn: () => T) => T;
/** `stored` is length(data), read without loading the bytes: 0 with size > 0 means chunked. */
type MetaRow = { size: number; stored: number };

function prepare(db: Database.Database) {
  return {
    meta: db.prepare<[Hash], MetaRow>("SELECT size, length(data) AS stored FROM blobs WHERE hash = ?"),
    // The common case in one query: a small blob's bytes with its size (a value over the whole-read
    // cap is not loaded, so the refusal costs nothing).
    whole: db.prepare<[number, Hash], MetaRow & { data: Buffer | null }>(
      "SELECT size, length(data) AS stored, CASE WHEN size <= ? THEN data END AS data FROM blobs WHERE hash = ?",
    ),
    inline: db.prepare<[Hash], Buffer>("SELECT data FROM blobs WHERE hash = ?").pluck(),
    small: prepareSmall(db),
    putBlob: db.prepare<[Hash, number, number, Buffer]>(
      "INSERT OR IGNORE INTO blobs (hash, size, created_at, data) VALUES (?, ?, ?, ?)",
    ),
    putLayout: db.prepare<[Hash, number, number, Hash]>(
      "INSERT INTO blob_chunks (blob, start, size, chunk) VALUES (?, ?, ?, ?)",
    ),
    putChunk: db.prepare<[Hash, number, number, Buffer]>(
      "INSERT OR IGNORE INTO chunks (hash, size, created_at, data) VALUES (?, ?, ?, ?)",
    ),
    hasChunk: db.prepare<[Hash], number>("SELECT 1 FROM chunks WHERE hash = ?").pluck(),
    chunksPresent: db
      .prepare<[string], number>("SELECT count(*) FROM chunks WHERE hash IN (SELECT value FROM json_each(?))")
      .pluck(),
    // The chunk holding byte `start`: the last one starting at or before it (O(log n) on the key).
    firstStart: db
      .prepare<[Hash, number], number | null>("SELECT max(start) FROM blob_chunks WHERE blob = ? AND start <= ?")
      .pluck(),
    layout: db.prepare<[Hash, number, number, number], ChunkRef>(
      "SELECT start, size, chunk AS hash FROM blob_chunks WHERE blob = ? AND start >= ? AND start < ? ORDER BY start LIMIT ?",
    ),
    chunk: db.prepare<[Hash], { size: number; data: Buffer }>("SELECT size, data FROM chunks WHERE hash = ?"),
    orphans: db.prepare<[number], { n: number; bytes: number }>(
      "SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM chunks c WHERE created_at < ?" +
        " AND NOT EXISTS (SELECT 1 FROM blob_chunks b WHERE b.chunk = c.hash)",
    ),
    deleteOrphans: db.prepare<[number]>(
      "DELETE FROM chunks WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM blob_chunks b WHERE b.chunk = chunks.hash)",
    ),
    missingChunks: db.prepare<[], { blob: Hash; start: number; chunk: Hash }>(
      "SELECT blob, start, chunk FROM blob_chunks b WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = b.chunk)" +
        " ORDER BY blob, start",
    ),
    badLayouts: db.prepare<[], { hash: Hash; size: number; laid: number }>(
      "SELECT b.hash, b.size, coalesce(sum(l.size), 0) AS laid FROM blobs b LEFT JOIN blob_chunks l ON l.blob = b.hash" +
        " WHERE b.size > 0 AND length(b.data) = 0 GROUP BY b.hash HAVING laid <> b.size",
    ),
    allChunks: db.prepare<[], { hash: Hash; size: number; data: Buffer }>("SELECT hash, size, data FROM chunks"),
    chunkUsers: db.prepare<[Hash], { blob: Hash; start: number }>(
      "SELECT blob, start FROM blob_chunks WHERE chunk = ? ORDER BY blob, start LIMIT 5",
    ),
  };
}

export class SqliteBlobs {
  readonly chunkBytes = CHUNK_BYTES;
  /** Reads go through the one chunked-blob reader (chunked-blobs.ts) over this store's port. */
  readonly read: ChunkedBlobReader<BlobMeta>;
  private readonly st: ReturnType<typeof prepare>;
  /** Reused by eachSmall: one zlib stream for a run of small values. */
  private readonly inflater = new Inflater();
  private readonly putTx: Database.Transaction<(blobs: ReadonlyArray<NewBlob>) => void>;
  private readonly linkTx: Database.Transaction<(hash: Hash, size: number, chunks: readonly ChunkRef[]) => void>;
  private readonly sweepTx: Database.Transaction<(createdBefore: number) => { deleted: number; bytes: number }>;

  constructor(
    db: Database.Database,
    private readonly guard: Guard,
  ) {
    const st = prepare(db);
    this.st = st;
    this.read = new ChunkedBlobReader(sqlitePort(st, guard));
    this.putTx = db.transaction((blobs: ReadonlyArray<NewBlob>) => {
      const now = Date.now();
      for (const { hash, data, stored } of blobs) {
        const buf = toBuffer(data);
        // Encoded already: no deflate to spare, so no lookup first (the insert ignores a blob present).
        if (stored && buf.byteLength <= this.chunkBytes) {
          st.putBlob.run(hash, buf.byteLength, now, toBuffer(stored));
          continue;
        }
        if (st.meta.get(hash)) continue;
        if (buf.byteLength <= this.chunkBytes) {
          st.putBlob.run(hash, buf.byteLength, now, encode(buf));
          continue;
        }
        const pieces = chunksOf(buf, this.chunkBytes);
        for (const p of pieces) this.putChunk(p.ref.hash, p.data, now);
        this.link(
          hash,
          buf.byteLength,
          pieces.map((p) => p.ref),
          now,
        );
      }
    });
    this.linkTx = db.transaction((hash: Hash, size: number, chunks: readonly ChunkRef[]) => {
      // gc may have swept a chunk that was already present (an orphan) between its put and now.
      const distinct = [...new Set(chunks.map((c) => c.hash))];
      if (st.chunksPresent.get(JSON.stringify(distinct)) !== distinct.length) {
        throw new AfsError(
          "CONFLICT",
          `chunks of content ${hash} were removed by a concurrent gc while it was stored; retry`,
          {
            hash,
          },
        );
      }
      this.link(hash, size, chunks, Date.now());
    });
    this.sweepTx = db.transaction((createdBefore: number) => {
      const { n, bytes } = st.orphans.get(createdBefore) ?? { n: 0, bytes: 0 };
      if (n > 0) st.deleteOrphans.run(createdBefore);
      return { deleted: n, bytes };
    });
  }

  put(blobs: ReadonlyArray<NewBlob>): void {
    if (blobs.length > 0) this.guard(() => this.putTx.immediate(blobs));
  }

  async putStream(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<{ hash: Hash; size: number }> {
    return storeStream(source, this.chunkBytes, {
      putChunk: (hash, data) => {
        this.guard(() => this.putChunk(hash, data, Date.now()));
      },
      putInline: (hash, data) => this.put([{ hash, data }]),
      putChunked: (hash, size, chunks) => this.guard(() => this.linkTx.immediate(hash, size, chunks)),
    });
  }

  /** Store.eachSmallBlob (small-blobs.ts): SMALL_BATCH blobs to a query; chunked ones read whole after. */
  async eachSmall(hashes: readonly Hash[], max: number, visit: (hash: Hash, bytes: Buffer) => void): Promise<void> {
    const chunked: Hash[] = [];
    for (let i = 0; i < hashes.length; i += SMALL_BATCH) {
      const batch = hashes.slice(i, i + SMALL_BATCH);
      this.guard(() => readSmall(this.st.small, batch, max, this.inflater, visit, (h) => chunked.push(h)));
    }
    await this.visitChunked(chunked, visit);
  }

  /** Blobs stored as chunks, each read whole (`eachSmall` leaves them here). */
  async visitChunked(hashes: readonly Hash[], visit: (hash: Hash, bytes: Buffer) => void): Promise<void> {
    for (const hash of hashes) {
      const data = await this.read.get(hash);
      if (data) visit(hash, data);
    }
  }

  /** Deletes chunks no blob uses, older than `createdBefore` (younger ones may belong to a put in flight). */
  sweep(createdBefore: number): { deleted: number; bytes: number } {
    return this.guard(() => this.sweepTx.immediate(createdBefore));
  }

  /** Missing and corrupt chunks and broken layouts, each naming the blob it belongs to. */
  problems(): string[] {
    return this.guard(() => {
      const problems: string[] = [];
      for (const m of this.st.missingChunks.all()) {
        problems.push(`blob ${m.blob}: chunk ${m.chunk} at byte ${m.start} is missing`);
      }
      for (const b of this.st.badLayouts.all()) {
        problems.push(`blob ${b.hash}: its chunks hold ${b.laid} bytes, not its ${b.size}`);
      }
      // The connection is busy while iterating, so the owners of bad chunks are looked up after.
      const bad: Hash[] = [];
      for (const c of this.st.allChunks.iterate()) {
        let raw: Buffer | null = null;
        try {
          raw = decode(c.data, c.size, `chunk ${c.hash}`);
        } catch {}
        if (!raw || createHash("sha256").update(raw).digest("hex") !== c.hash) bad.push(c.hash);
      }
      for (const c of bad) {
        const users = this.st.chunkUsers.all(c);
        const where = users.map((u) => `blob ${u.blob} at byte ${u.start}`).join(", ") || "no blob";
        problems.push(`chunk ${c} (in ${where}) does not match its content hash`);
      }
      return problems;
    });
  }

  /** Stores a chunk unless present: looking first spares binding 4 MiB (and deflating) for zero runs. */
  private putChunk(hash: Hash, data: Buffer, now: number): void {
    if (this.st.hasChunk.get(hash) === undefined) this.st.putChunk.run(hash, data.byteLength, now, encode(data));
  }

  private link(hash: Hash, size: number, chunks: readonly ChunkRef[], now: number): void {
    if (this.st.putBlob.run(hash, size, now, EMPTY).changes === 0) return;
    for (const c of chunks) this.st.putLayout.run(hash, c.start, c.size, c.hash);
  }
}

const EMPTY = Buffer.alloc(0);

const isChunked = (meta: MetaRow): boolean => meta.size > 0 && meta.stored === 0;
const toMeta = (row: MetaRow): BlobMeta => ({ size: row.size, chunked: isChunked(row) });

/** How the shared reader reads this store: each call one indexed query, answered at once (local). */
function sqlitePort(st: ReturnType<typeof prepare>, guard: Guard): BlobPort<BlobMeta> {
  return {
    remote: false,
    meta: (hash) =>
      guard(() => {
        const row = st.meta.get(hash);
        return row ? toMeta(row) : null;
      }),
    metaWithValue: (hash, max) =>
      guard(() => {
        // A small blob's bytes come with its size; a value over `max` is not loaded.
        const row = st.whole.get(max, hash);
        if (!row) return null;
        const meta = toMeta(row);
        return { ...meta, stored: meta.chunked ? null : (row.data ?? EMPTY) };
      }),
    inlineValue: (hash) => guard(() => st.inline.get(hash) ?? null),
    chunksCovering: (hash, meta, spans) =>
      guard(() => {
        const from = spans.reduce((m, s) => Math.min(m, s.from), meta.size);
        const to = spans.reduce((m, s) => Math.max(m, s.to), 0);
        // The chunk holding byte `from` is the last one starting at or before it.
        const first = st.firstStart.get(hash, from) ?? 0;
        return st.layout.all(hash, first, to, Number.MAX_SAFE_INTEGER);
      }),
    chunksFrom: (hash, meta, start, limit) => guard(() => st.layout.all(hash, start, meta.size, limit)),
    chunkValue: (hash) => guard(() => st.chunk.get(hash) ?? null),
  };
}
