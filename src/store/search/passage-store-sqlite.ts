// Passage records and their BM25 keyword index in the index file (afs.index.db), via SQLite FTS5.
// Passages are stored once per (blob hash, strategy). The FTS tables are contentless: they hold the
// inverted index of each passage's pre-tokenized words (identifiers already split), never the text,
// which stays in the blob store.
import type Database from "better-sqlite3";
import type { Hash } from "../../core/hash.js";
import type { PassageStrategy } from "../../search/passages.js";
import type { KeywordHit, PassageRef } from "../../search/query-index.js";
import type { BlobPassages, PassageStore } from "../../search/stores.js";
import type { KeywordQuery } from "../../search/words.js";
import { componentStatements, type IndexDb } from "../index-db.js";

/**
 * A passage's row id is its blob row's id shifted left by SEQ_BITS plus its position, so a blob's
 * passages are one primary-key range and the FTS rowid leads straight to the blob (no extra index).
 * 2^22 passages per blob is more than a MAX_FILE_BYTES file of one-byte lines can have.
 */
const SEQ_BITS = 22n;

const FTS = { auto: "query_fts_auto", regex: "query_fts_regex" } as const satisfies Record<PassageStrategy, string>;
/** Each FTS table's vocabulary: how many passages hold each word. */
const VOCAB = { auto: "query_vocab_auto", regex: "query_vocab_regex" } as const satisfies Record<
  PassageStrategy,
  string
>;

// unicode61 over words our tokenizer already produced: it only has to split at the spaces (and
// fold diacritics); identifiers were split into parts beforehand. contentless_delete=1 lets gc
// delete the rows of blobs the store no longer holds (the tables of schema steps 1-4 lacked it).
const ftsTableV1 = (name: string): string =>
  `CREATE VIRTUAL TABLE ${name} USING fts5(terms, content='', tokenize='unicode61 remove_diacritics 2');`;
const ftsTable = (name: string): string =>
  `CREATE VIRTUAL TABLE ${name} USING fts5(terms, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2');`;

/**
 * Forgets every passage: a step to append whenever splitting or tokenizing changes what is stored
 * (rows made by the old rules would not match queries made by the new ones).
 */
const reset = (create: (name: string) => string): string => `
  DELETE FROM query_blobs;
  DELETE FROM query_chunks;
  ${Object.values(FTS)
    .map((t) => `DROP TABLE ${t}; ${create(t)}`)
    .join("\n")}
  UPDATE query_meta SET value = value + 1 WHERE key = 'generation';
`;
const RESET = reset(ftsTable);

/** Schema steps of the "query" component; append, never edit. */
const SCHEMA: readonly string[] = [
  `
  CREATE TABLE query_blobs (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL,
    strategy TEXT NOT NULL,
    name TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    skipped TEXT,
    UNIQUE (hash, strategy)
  );
  CREATE TABLE query_chunks (
    id INTEGER PRIMARY KEY,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    hash BLOB NOT NULL
  );
  CREATE TABLE query_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
  INSERT INTO query_meta (key, value) VALUES ('generation', 0);
  ${ftsTableV1(FTS.auto)}
  ${ftsTableV1(FTS.regex)}
  `,
  `
  CREATE VIRTUAL TABLE ${VOCAB.auto} USING fts5vocab(${FTS.auto}, row);
  CREATE VIRTUAL TABLE ${VOCAB.regex} USING fts5vocab(${FTS.regex}, row);
  `,
  // Identifiers are indexed as their parts only (no joined whole): a query phrase does that job.
  reset(ftsTableV1),
  // Passages merge up to 12 lines / 700 bytes (was 8 / 400).
  reset(ftsTableV1),
  // FTS tables that take DELETE, so gc can prune.
  RESET,
];

/** Up to this many blobs are searched one rowid range each; more are filtered by blob id. */
const FEW_RANGES = 32;

/** Rows per statement when a list of hashes is passed as JSON (keeps statements small). */
const PAGE = 5000;

interface PassageRow {
  blob: string;
  id: bigint;
  blob_id: bigint;
  start_line: number;
  end_line: number;
  hash: Buffer;
}

/** One statement per value of the strategy (each has its own FTS tables). */
const perStrategy = <T>(make: (strategy: PassageStrategy) => T): Record<PassageStrategy, T> => ({
  auto: make("auto"),
  regex: make("regex"),
});

/** The store's statements, prepared once per connection: queries run them many times each. */
function prepare(db: Database.Database) {
  const blobsOf = "FROM json_each(?) j JOIN query_blobs b ON b.hash = j.value AND b.strategy = ?";
  const rank = (fts: string, inBlobs: boolean) =>
    // ORDER BY bm25() keeps a top-N heap; ORDER BY rank sorts every match (about twice as slow).
    db
      .prepare(
        `SELECT b.hash AS blob, b.id AS blob_id, c.id, c.start_line, c.end_line, c.hash, s.score
         FROM (SELECT rowid, -bm25(${fts}) AS score FROM ${fts}
               WHERE ${fts} MATCH ? AND rowid >= ? AND rowid < ?
               ${inBlobs ? `AND (rowid >> ${SEQ_BITS}) IN (SELECT value FROM json_each(?))` : ""}
               ORDER BY score DESC LIMIT ?) s
         JOIN query_chunks c ON c.id = s.rowid
         JOIN query_blobs b ON b.id = (c.id >> ${SEQ_BITS})
         ORDER BY s.score DESC, c.id`,
      )
      .safeIntegers();
  const deleteRange = (table: string) => db.prepare(`DELETE FROM ${table} WHERE rowid >= ? AND rowid < ?`);
  return {
    db,
    generation: db.prepare("SELECT value FROM query_meta WHERE key = 'generation'").pluck(),
    bump: db.prepare("UPDATE query_meta SET value = value + 1 WHERE key = 'generation'"),
    indexed: db.prepare(`SELECT b.hash ${blobsOf}`).pluck(),
    blobIds: db.prepare(`SELECT b.id ${blobsOf}`).pluck().safeIntegers(),
    blobRows: db.prepare(`SELECT b.hash, b.id, b.name ${blobsOf}`).safeIntegers(),
    passageRows: db
      .prepare("SELECT id, start_line, end_line, hash FROM query_chunks WHERE id >= ? AND id < ? ORDER BY id")
      .safeIntegers(),
    insertBlob: db.prepare(
      "INSERT INTO query_blobs (hash, strategy, name, chunks, skipped) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
    ),
    insertPassage: db.prepare("INSERT INTO query_chunks (id, start_line, end_line, hash) VALUES (?, ?, ?, ?)"),
    insertTerms: perStrategy((s) => db.prepare(`INSERT INTO ${FTS[s]} (rowid, terms) VALUES (?, ?)`)),
    rankRange: perStrategy((s) => rank(FTS[s], false)),
    rankBlobs: perStrategy((s) => rank(FTS[s], true)),
    totalPassages: db.prepare("SELECT COALESCE(SUM(chunks), 0) FROM query_blobs WHERE strategy = ?").pluck(),
    commonTerms: perStrategy((s) =>
      db
        .prepare(`SELECT term FROM ${VOCAB[s]} WHERE term IN (SELECT value FROM json_each(?)) AND doc * 2 >= ?`)
        .pluck(),
    ),
    stats: db.prepare(
      "SELECT COUNT(*) AS blobs, COALESCE(SUM(chunks), 0) AS chunks FROM query_blobs WHERE strategy = ?",
    ),
    allBlobs: db.prepare("SELECT id, hash, strategy FROM query_blobs").safeIntegers(),
    deletePassages: deleteRange("query_chunks"),
    deleteTerms: perStrategy((s) => deleteRange(FTS[s])),
    deleteBlob: db.prepare("DELETE FROM query_blobs WHERE id = ?"),
  };
}

export class SqlitePassageStore implements PassageStore {
  private readonly statements: () => ReturnType<typeof prepare>;

  /** `open` is called on first use, so a process that never searches never opens the index file. */
  constructor(open: () => IndexDb) {
    this.statements = componentStatements(open, "query", SCHEMA, prepare);
  }

  private get st(): ReturnType<typeof prepare> {
    return this.statements();
  }

  async generation(): Promise<number> {
    return this.st.generation.get() as number;
  }

  async indexed(strategy: PassageStrategy, blobs: readonly Hash[]): Promise<Set<Hash>> {
    const out = new Set<Hash>();
    for (let i = 0; i < blobs.length; i += PAGE) {
      for (const h of this.st.indexed.all(JSON.stringify(blobs.slice(i, i + PAGE)), strategy) as string[]) out.add(h);
    }
    return out;
  }

  async put(strategy: PassageStrategy, blobs: readonly BlobPassages[]): Promise<void> {
    const st = this.st;
    const terms = st.insertTerms[strategy];
    st.db
      .transaction(() => {
        for (const b of blobs) {
          const r = st.insertBlob.run(b.blob, strategy, b.name, b.passages.length, b.skipped ?? null);
          if (r.changes === 0) continue; // another process split it first
          const base = BigInt(r.lastInsertRowid) << SEQ_BITS;
          for (const c of b.passages) {
            const id = base + BigInt(c.seq);
            st.insertPassage.run(id, c.start_line, c.end_line, Buffer.from(c.hash, "hex"));
            terms.run(id, c.terms);
          }
        }
      })
      .immediate();
  }

  async passagesOf(
    strategy: PassageStrategy,
    blobs: readonly Hash[],
  ): Promise<Map<Hash, { name: string; passages: PassageRef[] }>> {
    const out = new Map<Hash, { name: string; passages: PassageRef[] }>();
    const { blobRows, passageRows } = this.st;
    for (let i = 0; i < blobs.length; i += PAGE) {
      const page = JSON.stringify(blobs.slice(i, i + PAGE));
      for (const b of blobRows.all(page, strategy) as { hash: string; id: bigint; name: string }[]) {
        const base = b.id << SEQ_BITS;
        const rows = passageRows.all(base, base + (1n << SEQ_BITS)) as PassageRow[];
        out.set(b.hash, { name: b.name, passages: rows.map((r) => toRef({ ...r, blob: b.hash, blob_id: b.id })) });
      }
    }
    return out;
  }

  async keyword(strategy: PassageStrategy, query: KeywordQuery, limit: number): Promise<KeywordHit[]> {
    // Words in at least half of all passages have an idf of 0 or less, which bm25() floors at 1e-6:
    // they cannot lift a passage past one holding any other word, yet ranking every passage that
    // holds them is most of the cost. Rank without them first; only when that finds fewer than
    // `limit` passages is the whole query needed (the same top passages either way).
    const informative = this.informative(strategy, query);
    if (informative) {
      const hits = this.rank(strategy, informative, limit);
      if (hits.length >= limit) return hits;
    }
    return this.rank(strategy, query, limit);
  }

  async keywordWithin(
    strategy: PassageStrategy,
    query: KeywordQuery,
    blobs: readonly Hash[],
    limit: number,
  ): Promise<KeywordHit[]> {
    const ids = this.st.blobIds.all(JSON.stringify(blobs), strategy) as bigint[];
    // A blob's passages are one rowid range, which FTS5 searches without visiting other rows: cheap
    // for a few blobs. For more, every match is ranked once and kept only if its blob is in scope.
    if (ids.length > FEW_RANGES) return this.rank(strategy, query, limit, { blobs: ids });
    const hits = ids.flatMap((id) =>
      this.rank(strategy, query, limit, { range: [id << SEQ_BITS, (id + 1n) << SEQ_BITS] }),
    );
    return hits.sort((a, b) => b.score - a.score).slice(0, limit);
  }

  private rank(
    strategy: PassageStrategy,
    query: KeywordQuery,
    limit: number,
    within: { range?: [bigint, bigint]; blobs?: readonly bigint[] } = {},
  ): KeywordHit[] {
    const match = matchExpression(query);
    if (match === null) return [];
    const [from, to] = within.range ?? [0n, 1n << 62n];
    const stmt = (within.blobs ? this.st.rankBlobs : this.st.rankRange)[strategy];
    const rows = stmt.all(
      match,
      from,
      to,
      ...(within.blobs ? [JSON.stringify(within.blobs.map(Number))] : []),
      BigInt(Math.min(limit, Number.MAX_SAFE_INTEGER)),
    ) as (PassageRow & { score: number })[];
    return rows.map((r) => ({ passage: toRef(r), score: Number(r.score) }));
  }

  /** The query without its words that are in half the passages or more; null when none is, or only those. */
  private informative(strategy: PassageStrategy, query: KeywordQuery): KeywordQuery | null {
    if (query.terms.length === 0) return null;
    const total = Number(this.st.totalPassages.get(strategy));
    const common = new Set(this.st.commonTerms[strategy].all(JSON.stringify(query.terms), total) as string[]);
    const terms = query.terms.filter((t) => !common.has(t));
    if (common.size === 0 || (terms.length === 0 && query.phrases.length === 0)) return null;
    return { ...query, terms };
  }

  async stats(strategy: PassageStrategy): Promise<{ blobs: number; chunks: number }> {
    return this.st.stats.get(strategy) as { blobs: number; chunks: number };
  }

  async drop(): Promise<void> {
    const { db } = this.st;
    db.transaction(() => db.exec(RESET)).immediate();
  }

  async prune(keep: (blob: Hash) => boolean): Promise<{ blobs: number; chunks: number }> {
    const st = this.st;
    // A blob row's id may be handed out again once deleted, and with it its passage ids; other
    // processes cache which blobs are split. Bumping the generation (as drop does) makes each
    // forget that cache, so none believes a pruned blob split into passages or reads another's
    // passages as its own. IMMEDIATE: no writer splits a blob between reading the rows and deleting
    // them.
    return st.db
      .transaction(() => {
        const gone = (st.allBlobs.all() as { id: bigint; hash: Hash; strategy: PassageStrategy }[]).filter(
          (r) => !keep(r.hash),
        );
        let passages = 0;
        for (const r of gone) {
          const range = [r.id << SEQ_BITS, (r.id + 1n) << SEQ_BITS] as const;
          passages += st.deletePassages.run(...range).changes;
          st.deleteTerms[r.strategy]?.run(...range);
          st.deleteBlob.run(r.id);
        }
        if (gone.length > 0) st.bump.run();
        return { blobs: gone.length, chunks: passages };
      })
      .immediate();
  }
}

function toRef(row: PassageRow): PassageRef {
  return {
    blob: row.blob,
    seq: Number(BigInt(row.id) - (BigInt(row.blob_id) << SEQ_BITS)),
    start_line: Number(row.start_line),
    end_line: Number(row.end_line),
    hash: row.hash.toString("hex"),
  };
}

/** FTS5 syntax for a keyword query: any term or phrase (ranked, not intersected), minus exclusions. */
function matchExpression(q: KeywordQuery): string | null {
  // Tokens are letters and digits only, so quoting them is always safe (and keeps OR, NOT, NEAR
  // words).
  const quote = (tokens: readonly string[]): string => `"${tokens.join(" ")}"`;
  const positive = [...q.terms.map((t) => quote([t])), ...q.phrases.map(quote)];
  if (positive.length === 0) return null;
  const any = positive.join(" OR ");
  return q.excludes.length === 0 ? any : `(${any}) NOT (${q.excludes.map(quote).join(" OR ")})`;
}
