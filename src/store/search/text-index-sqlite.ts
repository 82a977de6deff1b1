// The content index in the index file (afs.index.db): one row per blob hash, and an FTS5 table of
// the distinct trigrams (computed in JS, see search/trigrams.ts) of each block of a text blob
// (search/text-blocks.ts) as posting lists. Blobs are indexed lazily, in batches, the first time a
// search has them in scope.

import { isAscii } from "node:buffer";
import type Database from "better-sqlite3";
import { AfsError } from "../../core/errors.js";
import { EMPTY_SHA256, type Hash } from "../../core/hash.js";
import { decodeText } from "../../core/text.js";
import { BLOCKS_PER_BLOB, blockBounds } from "../../search/text-blocks.js";
import { TextCache, textCacheBudget } from "../../search/text-cache.js";
import type {
  BuildProgress,
  LiteralQuery,
  TextIndex,
  TextIndexBuild,
  TextIndexStatus,
} from "../../search/text-index.js";
import { asciiTrigramDocument, trigramDocument, trigramTokens } from "../../search/trigrams.js";
import { componentStatements, type IndexDb } from "../index-db.js";
import type { Store } from "../store.js";

// `state` records what indexing found, so binary and huge blobs are never read again.
// The trigram table is contentless (the text lives in the store) with detail=none: it answers "which rows hold all these tokens", which is all a candidate filter needs.
const SCHEMA = [
  `CREATE TABLE text_blobs (
     id INTEGER PRIMARY KEY,
     hash TEXT NOT NULL UNIQUE,
     state INTEGER NOT NULL,
     bytes INTEGER NOT NULL
   );
   CREATE VIRTUAL TABLE text_trigrams USING fts5(
     grams, content='', tokenize='ascii', detail=none, columnsize=0
   );`,
  // Version 2: clear() bumps the generation, so other processes drop the ids they remember.
  `CREATE TABLE text_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
   INSERT INTO text_meta (key, value) VALUES ('generation', 0);`,
  // Version 3: the trigram table takes DELETE (contentless_delete=1, which rules out columnsize=0)
  // so gc can prune blobs the store no longer holds. The old table goes, and the rows indexed into it.
  `DELETE FROM text_blobs;
   DROP TABLE text_trigrams;
   CREATE VIRTUAL TABLE text_trigrams USING fts5(
     grams, content='', contentless_delete=1, tokenize='ascii', detail=none
   );
   UPDATE text_meta SET value = value + 1 WHERE key = 'generation';`,
  // Version 4: a row of trigrams per block of a text (rowid = blob id × BLOCKS_PER_BLOB + block), so a
  // rare literal in one corner of a large bundle does not make the whole bundle a candidate. Blocks
  // double the postings; FTS5's automerge, which rewrote them as they came, goes (indexing node_modules:
  // FTS5 inserts 6.1 s -> 3.5 s). Each indexing transaction leaves a segment, and FTS5 still merges a
  // level once it holds crisismerge (16) of them, so queries read few.
  `DELETE FROM text_blobs;
   INSERT INTO text_trigrams (text_trigrams) VALUES ('delete-all');
   ALTER TABLE text_blobs ADD COLUMN blocks INTEGER NOT NULL DEFAULT 1;
   INSERT INTO text_trigrams (text_trigrams, rank) VALUES ('automerge', 0);
   UPDATE text_meta SET value = value + 1 WHERE key = 'generation';`,
];

enum State {
  Text = 0,
  Binary = 1,
  Large = 2,
}

interface Known {
  id: number;
  state: State;
}

/** The blocks of each candidate blob that may hold a match; null: all of them. */
export type Candidates = Map<Hash, readonly number[] | null>;

export interface SqliteTextIndexOptions {
  /** Blobs larger than this are not indexed (searches scan them). Default 64 MiB. */
  maxIndexBytes?: number;
  /** Text cache budget in bytes of text; default from AFS_TEXT_CACHE_MB or 256 MiB. */
  cacheUnits?: number;
}

/** Bytes of text per indexing transaction: bounds memory, and lets progress move. */
const BATCH_BYTES = 16 * 1024 * 1024;
const LOOKUP_CHUNK = 500;
/** How much of a blob decodeText looks at for a NUL, the mark of binary content. */
const BINARY_SNIFF_BYTES = 8192;
const MAX_KNOWN = 1_000_000;

export class SqliteTextIndex implements TextIndex {
  private readonly known = new Map<Hash, Known>();
  private readonly cache: TextCache;
  private readonly maxIndexBytes: number;
  private readonly statements: () => ReturnType<typeof prepare>;
  private generation = -1;

  /** `index` is called on first use, so a volume that never searches never opens the index file. */
  constructor(
    index: () => IndexDb,
    private readonly store: Store,
    options: SqliteTextIndexOptions = {},
  ) {
    this.statements = componentStatements(index, "text", SCHEMA, prepare);
    this.cache = new TextCache(options.cacheUnits ?? textCacheBudget());
    this.maxIndexBytes = options.maxIndexBytes ?? 64 * 1024 * 1024;
  }

  private get st(): ReturnType<typeof prepare> {
    return this.statements();
  }

  async build(hashes: Iterable<Hash>, onProgress?: BuildProgress): Promise<TextIndexBuild> {
    this.checkGeneration();
    return this.indexMissing(this.lookup(this.unknown(hashes)), onProgress);
  }

  async candidates(hashes: readonly Hash[], query: LiteralQuery): Promise<Candidates> {
    this.checkGeneration();
    // One pass over the scope: a warm process knows every hash already and indexes nothing.
    const known: (Known | undefined)[] = hashes.map((h) => this.known.get(h));
    if (known.includes(undefined)) {
      await this.indexMissing(this.lookup(this.unknown(hashes)));
      hashes.forEach((h, i) => {
        known[i] ??= this.known.get(h) ?? this.fetchOne(h);
      });
    }
    const expression = ftsExpression(query);
    // Row ids come in order, so the blocks of one blob come out sorted.
    let blocks: Map<number, number[]> | null = null;
    if (expression !== null) {
      blocks = new Map();
      for (const rowid of this.st.match.all(expression) as number[]) {
        const id = Math.floor(rowid / BLOCKS_PER_BLOB);
        const list = blocks.get(id);
        if (list) list.push(rowid % BLOCKS_PER_BLOB);
        else blocks.set(id, [rowid % BLOCKS_PER_BLOB]);
      }
    }
    const out: Candidates = new Map();
    known.forEach((k, i) => {
      if (!k || k.state === State.Binary) return;
      if (k.state === State.Large || blocks === null) out.set(hashes[i] as Hash, null);
      else {
        const list = blocks.get(k.id);
        if (list) out.set(hashes[i] as Hash, list);
      }
    });
    return out;
  }

  async text(hash: Hash): Promise<string | null> {
    const view = this.cache.get(hash);
    if (view !== undefined) return Buffer.from(view, "latin1").toString("utf8");
    if (this.known.get(hash)?.state === State.Binary) return null;
    return decodeText(await this.blob(hash));
  }

  async view(hash: Hash): Promise<string | null> {
    const cached = this.cache.get(hash);
    if (cached !== undefined) return cached;
    if (this.known.get(hash)?.state !== State.Text) return null;
    // Indexed as text, so valid UTF-8: no need to decode it again.
    const view = (await this.blob(hash)).toString("latin1");
    this.cache.set(hash, view);
    return view;
  }

  async status(): Promise<TextIndexStatus> {
    const status: TextIndexStatus = { texts: 0, binary: 0, large: 0, bytes: 0 };
    for (const row of this.st.status.all() as { state: State; n: number; bytes: number }[]) {
      if (row.state === State.Text) status.texts = row.n;
      else if (row.state === State.Binary) status.binary = row.n;
      else status.large = row.n;
      status.bytes += row.bytes;
    }
    return status;
  }

  async clear(): Promise<void> {
    const st = this.st;
    st.db
      .transaction(() => {
        st.db.exec(`DELETE FROM text_blobs;
          INSERT INTO text_trigrams (text_trigrams) VALUES ('delete-all');`);
        st.bump.run();
      })
      .immediate();
    this.known.clear();
  }

  async prune(keep: (hash: Hash) => boolean): Promise<number> {
    const st = this.st;
    // Row ids of deleted rows may be handed out again, so a pruning bumps the generation like
    // clear(): every process forgets the ids it holds rather than matching one to another blob.
    // (AUTOINCREMENT would avoid the reuse, but a process would still believe a pruned blob indexed.)
    // IMMEDIATE: no writer indexes between reading the rows and deleting them.
    const pruned = st.db
      .transaction(() => {
        const gone: { id: number; blocks: number }[] = [];
        for (const row of st.rows.iterate() as Iterable<{ id: number; hash: Hash; blocks: number }>) {
          if (!keep(row.hash)) gone.push(row);
        }
        for (const { id, blocks } of gone) {
          for (let b = 0; b < blocks; b++) st.deleteGrams.run(id * BLOCKS_PER_BLOB + b);
        }
        for (let i = 0; i < gone.length; i += LOOKUP_CHUNK) {
          st.deleteBlobs.run(JSON.stringify(gone.slice(i, i + LOOKUP_CHUNK).map((g) => g.id)));
        }
        if (gone.length > 0) st.bump.run();
        return gone.length;
      })
      .immediate();
    return pruned;
  }

  /** Row ids are reused after a clear or prune (here or in another process): then what `known` holds is void. */
  private checkGeneration(): void {
    const generation = this.st.generation.get() as number;
    if (generation !== this.generation) {
      this.known.clear();
      this.generation = generation;
    }
  }

  /** The distinct hashes not in memory yet (usually none: a search in a warm process). */
  private unknown(hashes: Iterable<Hash>): Hash[] {
    const out = new Set<Hash>();
    for (const h of hashes) if (!this.known.has(h)) out.add(h);
    return [...out];
  }

  /** Fills `known` for these hashes from the database; returns those not indexed yet. */
  private lookup(unknown: readonly Hash[]): Hash[] {
    if (unknown.length === 0) return [];
    if (this.known.size + unknown.length > MAX_KNOWN) this.known.clear();
    for (let i = 0; i < unknown.length; i += LOOKUP_CHUNK) {
      const chunk = unknown.slice(i, i + LOOKUP_CHUNK);
      for (const row of this.st.lookup.all(JSON.stringify(chunk)) as { hash: Hash; id: number; state: State }[]) {
        this.known.set(row.hash, { id: row.id, state: row.state });
      }
    }
    return unknown.filter((h) => !this.known.has(h));
  }

  /** Reads, decodes and indexes these blobs, in transactions of about BATCH_BYTES. */
  private async indexMissing(missing: readonly Hash[], onProgress?: BuildProgress): Promise<TextIndexBuild> {
    const result: TextIndexBuild = { indexed: 0, bytes: 0, skipped: 0 };
    let batch: { hash: Hash; data: Buffer; text: string | true | null }[] = [];
    let batchBytes = 0;
    const flush = () => {
      this.write(batch, result);
      onProgress?.(result.indexed, missing.length);
      batch = [];
      batchBytes = 0;
    };
    for (const hash of missing) {
      const data = await this.blob(hash);
      const text = data.length > this.maxIndexBytes ? null : asText(data);
      batch.push({ hash, data, text });
      batchBytes += data.length;
      if (batchBytes >= BATCH_BYTES) flush();
    }
    if (batch.length > 0) flush();
    return result;
  }

  private fetchOne(hash: Hash): Known | undefined {
    const row = this.st.one.get(hash) as Known | undefined;
    if (row) this.known.set(hash, row);
    return row;
  }

  /** One transaction: each blob's row, and its trigrams unless another writer got there first. */
  private write(
    batch: readonly { hash: Hash; data: Buffer; text: string | true | null }[],
    result: TextIndexBuild,
  ): void {
    const rows = batch.map(({ hash, data, text }) => {
      // A large blob with a NUL up front is binary to grep (decodeText's rule), so no search reads it again.
      const large = data.length > this.maxIndexBytes && !data.subarray(0, BINARY_SNIFF_BYTES).includes(0);
      const state = text !== null ? State.Text : large ? State.Large : State.Binary;
      const grams: string[] = [];
      if (text !== null) {
        const bounds = blockBounds(data.length, (from) => data.indexOf(10, from));
        for (let b = 0; b + 1 < bounds.length; b++) {
          const block = data.subarray(bounds[b], bounds[b + 1]);
          if (isAscii(block)) grams.push(asciiTrigramDocument(block));
          else grams.push(trigramDocument(bounds.length === 2 && text !== true ? text : block.toString("utf8")));
        }
      }
      return { hash, bytes: data.length, state, grams };
    });
    this.st.db
      .transaction(() => {
        for (const row of rows) {
          const inserted = this.st.insertBlob.run(row.hash, row.state, row.bytes, Math.max(1, row.grams.length));
          if (inserted.changes === 0) {
            this.fetchOne(row.hash);
            continue;
          }
          const id = Number(inserted.lastInsertRowid);
          row.grams.forEach((grams, b) => {
            if (grams !== "") this.st.insertGrams.run(id * BLOCKS_PER_BLOB + b, grams);
          });
          this.known.set(row.hash, { id, state: row.state });
          result.indexed++;
          result.bytes += row.bytes;
          if (row.state !== State.Text) result.skipped++;
        }
      })
      .immediate();
    // The texts just indexed are what the search is about to verify.
    for (const { hash, data, text } of batch) if (text !== null) this.cache.set(hash, data.toString("latin1"));
  }

  private async blob(hash: Hash): Promise<Buffer> {
    if (hash === EMPTY_SHA256) return Buffer.alloc(0);
    const data = await this.store.getBlob(hash);
    if (!data) throw new AfsError("IO_ERROR", `content ${hash} is missing from the store; run afs fsck`);
    return data;
  }
}

/**
 * What decodeText decides about a blob (null: binary), without decoding all-ASCII text, which is
 * valid UTF-8 as it stands (true): most source is, and the index reads it as bytes.
 */
function asText(data: Buffer): string | true | null {
  if (data.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return null;
  return isAscii(data) ? true : decodeText(data);
}

function prepare(db: Database.Database) {
  return {
    db,
    lookup: db.prepare<[string]>(
      "SELECT hash, id, state FROM text_blobs WHERE hash IN (SELECT value FROM json_each(?))",
    ),
    one: db.prepare<[string]>("SELECT id, state FROM text_blobs WHERE hash = ?"),
    insertBlob: db.prepare<[string, number, number, number]>(
      "INSERT INTO text_blobs (hash, state, bytes, blocks) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
    ),
    insertGrams: db.prepare<[number, string]>("INSERT INTO text_trigrams (rowid, grams) VALUES (?, ?)"),
    match: db.prepare<[string]>("SELECT rowid FROM text_trigrams WHERE text_trigrams MATCH ?").pluck(),
    generation: db.prepare("SELECT value FROM text_meta WHERE key = 'generation'").pluck(),
    rows: db.prepare("SELECT id, hash, blocks FROM text_blobs"),
    deleteGrams: db.prepare<[number]>("DELETE FROM text_trigrams WHERE rowid = ?"),
    deleteBlobs: db.prepare<[string]>("DELETE FROM text_blobs WHERE id IN (SELECT value FROM json_each(?))"),
    bump: db.prepare("UPDATE text_meta SET value = value + 1 WHERE key = 'generation'"),
    status: db.prepare("SELECT state, count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM text_blobs GROUP BY state"),
  };
}

/** The FTS5 MATCH expression for a query, or null when it requires nothing (every text matches). */
function ftsExpression(query: LiteralQuery): string | null {
  switch (query.op) {
    case "all":
      return null;
    case "lit": {
      const tokens = trigramTokens(query.folded);
      return tokens.length === 0 ? null : tokens.map((t) => `"${t}"`).join(" AND ");
    }
    case "and": {
      const parts = query.of.map(ftsExpression).filter((p): p is string => p !== null);
      return parts.length === 0 ? null : parts.map((p) => `(${p})`).join(" AND ");
    }
    case "or": {
      const parts = query.of.map(ftsExpression);
      return parts.length === 0 || parts.includes(null) ? null : parts.map((p) => `(${p})`).join(" OR ");
    }
  }
}
