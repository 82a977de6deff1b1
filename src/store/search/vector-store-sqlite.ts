// Embedding vectors in the index file (afs.index.db), one row per (provider id, passage hash), the
// vector as little-endian Float32 bytes. A passage's vector is computed once per provider, whichever
// blob, workspace or checkpoint holds the passage.
import type Database from "better-sqlite3";
import type { Hash } from "../../core/hash.js";
import { vectorFromBytes, vectorToBytes } from "../../search/embeddings/provider.js";
import type { VectorStore } from "../../search/stores.js";
import { componentStatements, type IndexDb } from "../index-db.js";

/** Schema steps of the "query-vectors" component; append, never edit. */
const SCHEMA: readonly string[] = [
  `CREATE TABLE query_vectors (
     provider TEXT NOT NULL,
     chunk BLOB NOT NULL,
     vector BLOB NOT NULL,
     PRIMARY KEY (provider, chunk)
   ) WITHOUT ROWID;`,
];

const PAGE = 2000;

/** The store's statements, prepared once per connection: every semantic query looks vectors up. */
function prepare(db: Database.Database) {
  return {
    db,
    get: db.prepare(
      `SELECT lower(hex(v.chunk)) AS chunk, v.vector FROM json_each(?) j
       JOIN query_vectors v ON v.provider = ? AND v.chunk = unhex(j.value)`,
    ),
    put: db.prepare("INSERT INTO query_vectors (provider, chunk, vector) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"),
    count: db.prepare("SELECT COUNT(*) FROM query_vectors WHERE provider = ?").pluck(),
  };
}

export class SqliteVectorStore implements VectorStore {
  private readonly statements: () => ReturnType<typeof prepare>;

  constructor(open: () => IndexDb) {
    this.statements = componentStatements(open, "query-vectors", SCHEMA, prepare);
  }

  private get st(): ReturnType<typeof prepare> {
    return this.statements();
  }

  async get(provider: string, passages: readonly Hash[]): Promise<Map<Hash, Float32Array>> {
    const out = new Map<Hash, Float32Array>();
    for (let i = 0; i < passages.length; i += PAGE) {
      const rows = this.st.get.all(JSON.stringify(passages.slice(i, i + PAGE)), provider) as {
        chunk: string;
        vector: Buffer;
      }[];
      for (const r of rows) out.set(r.chunk, vectorFromBytes(r.vector));
    }
    return out;
  }

  async put(provider: string, vectors: ReadonlyArray<{ passage: Hash; vector: Float32Array }>): Promise<void> {
    const st = this.st;
    st.db
      .transaction(() => {
        for (const v of vectors) {
          const bytes = vectorToBytes(v.vector);
          st.put.run(
            provider,
            Buffer.from(v.passage, "hex"),
            Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
          );
        }
      })
      .immediate();
  }

  async count(provider: string): Promise<number> {
    return this.st.count.get(provider) as number;
  }

  /**
   * Vectors are keyed by passage hash, not blob, so they are pruned by what the passage index still
   * holds: its query_chunks table lives in this file too. Vectors never enter another process's
   * cache wrongly (a passage hash names its text), so no generation is needed.
   */
  async prune(): Promise<number> {
    const { db } = this.st;
    const passages = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'query_chunks'").get();
    const sql = passages
      ? "DELETE FROM query_vectors WHERE chunk NOT IN (SELECT hash FROM query_chunks)"
      : "DELETE FROM query_vectors";
    return db.transaction(() => db.prepare(sql).run().changes).immediate();
  }

  async drop(): Promise<void> {
    this.st.db.exec("DELETE FROM query_vectors");
  }
}
