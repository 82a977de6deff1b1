// The content index's tables in the index file (afs.index.db), one migration step per version, and
// the statements SqliteTextIndex runs on them (text-index-sqlite.ts holds what they mean).
import type Database from "better-sqlite3";
import { POSTINGS_SCHEMA, SqlitePostings } from "./postings-sqlite.js";

// `state` records what indexing found, so binary and huge blobs are never read again.
// Versions 1 to 10 kept the trigrams in a contentless FTS5 table (detail=none: "which rows hold all
// these tokens", all a candidate filter needs); version 11 replaced it by postings-sqlite.ts's lists.
export const TEXT_INDEX_SCHEMA = [
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
  // Version 4: a Bloom filter of each block's trigrams for texts of several blocks, so a rare literal
  // in one corner of a large bundle makes only that corner a candidate. (Postings per block doubled
  // the postings FTS5 writes; filters cost a few bit sets per byte.) FTS5's automerge, which rewrote
  // the postings as they came, goes: each indexing transaction leaves a segment, and FTS5 still merges
  // a level once it holds crisismerge (16) of them, so queries read few.
  `DELETE FROM text_blobs;
   INSERT INTO text_trigrams (text_trigrams) VALUES ('delete-all');
   ALTER TABLE text_blobs ADD COLUMN blocks INTEGER NOT NULL DEFAULT 1;
   CREATE TABLE text_blooms (id INTEGER PRIMARY KEY, blooms BLOB NOT NULL);
   INSERT INTO text_trigrams (text_trigrams, rank) VALUES ('automerge', 0);
   UPDATE text_meta SET value = value + 1 WHERE key = 'generation';`,
  // Version 5: where each block starts and its first line's number (text-blocks.ts blockLines), so a
  // cold search reads only a large text's candidate blocks. Rows indexed before have none; they are
  // read whole, as before, until the index is rebuilt.
  `ALTER TABLE text_blooms ADD COLUMN lines BLOB;`,
  // Version 6: scopes found wholly indexed, by a digest of their hashes (scopeDigest), with the
  // generation they were found in and those of their blobs too large to index. A new process
  // searching such a scope asks FTS5 first and looks up only the rows it names, not every hash.
  `CREATE TABLE text_scopes (
     id INTEGER PRIMARY KEY,
     digest TEXT NOT NULL UNIQUE,
     generation INTEGER NOT NULL,
     large TEXT NOT NULL
   );`,
  // Version 7: a text of many blocks (TRANSPOSE_MIN_BLOCKS, 64) keeps its filters transposed, in bands
  // of filter bits (block-filters.ts bandsOf), keyed id * BANDS + band, and none in text_blooms: a new
  // process reads the few bands a query's bits fall in, not the whole filter (2 KiB per block). The
  // texts indexed before go, to be indexed again by the next search that has them in scope.
  `CREATE TABLE text_bands (key INTEGER PRIMARY KEY, bits BLOB NOT NULL);
   DELETE FROM text_trigrams WHERE rowid IN (SELECT id FROM text_blobs WHERE blocks >= 64);
   DELETE FROM text_blooms WHERE id IN (SELECT id FROM text_blobs WHERE blocks >= 64);
   DELETE FROM text_blobs WHERE blocks >= 64;
   DELETE FROM text_scopes;
   UPDATE text_meta SET value = value + 1 WHERE key = 'generation';`,
  // Version 8: the background builder's claim and progress (one row while one runs), which
  // `afs index status` reads and which keeps a second builder from starting beside it.
  `CREATE TABLE text_builder (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     pid INTEGER NOT NULL,
     started INTEGER NOT NULL,
     updated INTEGER NOT NULL,
     done INTEGER NOT NULL,
     total INTEGER NOT NULL,
     indexed INTEGER NOT NULL
   );`,
  // Version 9: a stored tree's map from indexed contents to its paths (relative to the tree), written
  // once every content of the tree is indexed, so a new process searching a tree with no live
  // changes maps the contents FTS5 names to paths by lookups, without listing the tree. Binary
  // contents (never candidates) are left out; those too large to index are listed in \`large\`.
  // The map holds for the generation it was written in (row ids are reused after a clear or prune).
  // A map being written (in batches, by a builder or a search) has the negated pid of its writer as
  // its generation, so no search trusts it, and a writer killed midway is known by its dead pid.
  `CREATE TABLE text_trees (
     id INTEGER PRIMARY KEY,
     hash TEXT NOT NULL UNIQUE,
     generation INTEGER NOT NULL,
     large TEXT NOT NULL
   );
   CREATE TABLE text_tree_files (
     tree INTEGER NOT NULL,
     blob INTEGER NOT NULL,
     path TEXT NOT NULL,
     PRIMARY KEY (tree, blob, path)
   ) WITHOUT ROWID;`,
  // Version 10: FTS5 writes its pending postings out as a segment each time they pass hashsize (1 MB
  // by default): an indexing transaction of 16 MiB of text left ~7 segments, which crisismerge then
  // rewrote level by level. At 8 MiB one transaction of source text leaves one segment (its postings
  // came to ~6 MB in memory), and the memory FTS5 may hold stays small beside the batch's 16 MiB.
  // Nothing indexed changes.
  `INSERT INTO text_trigrams (text_trigrams, rank) VALUES ('hashsize', 8388608);`,
  // Version 11: posting lists of our own (postings-sqlite.ts) in place of FTS5, which spent most of
  // a large build tokenizing documents of trigram names and merging its segments. Everything
  // indexed goes, to be indexed again; row ids come from next_id from now on.
  `DELETE FROM text_blobs;
   DELETE FROM text_blooms;
   DELETE FROM text_bands;
   DELETE FROM text_scopes;
   DELETE FROM text_tree_files;
   DELETE FROM text_trees;
   DROP TABLE text_trigrams;
   ${POSTINGS_SCHEMA}
   UPDATE text_meta SET value = value + 1 WHERE key = 'generation';`,
];

/** @internal better-sqlite3's statement types cannot be named in a .d.ts; the store is not public. */
export function prepareTextIndex(db: Database.Database) {
  return {
    db,
    lookup: db.prepare<[string]>(
      "SELECT hash, id, state, blocks FROM text_blobs WHERE hash IN (SELECT value FROM json_each(?))",
    ),
    one: db.prepare<[string]>("SELECT id, state, blocks FROM text_blobs WHERE hash = ?"),
    byIds: db.prepare<[string]>(
      "SELECT hash, id, state, blocks FROM text_blobs WHERE id IN (SELECT value FROM json_each(?))",
    ),
    scope: db.prepare<[string, number]>("SELECT large FROM text_scopes WHERE digest = ? AND generation = ?").pluck(),
    mark: db.prepare<[string, number, string]>(
      // REPLACE: a marker written again takes a new id, the newest, which trimming keeps.
      "INSERT OR REPLACE INTO text_scopes (digest, generation, large) VALUES (?, ?, ?)",
    ),
    trimScopes: db.prepare<[number]>("DELETE FROM text_scopes WHERE id <= (SELECT max(id) FROM text_scopes) - ?"),
    blooms: db.prepare<[number]>("SELECT blooms FROM text_blooms WHERE id = ?").pluck(),
    insertBlooms: db.prepare<[number, Uint8Array, Uint8Array | null]>(
      "INSERT OR REPLACE INTO text_blooms (id, blooms, lines) VALUES (?, ?, ?)",
    ),
    lines: db.prepare<[number]>("SELECT lines FROM text_blooms WHERE id = ?").pluck(),
    bands: db.prepare<[string]>("SELECT key, bits FROM text_bands WHERE key IN (SELECT value FROM json_each(?))"),
    insertBand: db.prepare<[number, Uint8Array]>("INSERT OR REPLACE INTO text_bands (key, bits) VALUES (?, ?)"),
    deleteBands: db.prepare<[number, number]>("DELETE FROM text_bands WHERE key BETWEEN ? AND ?"),
    deleteBlooms: db.prepare<[string]>("DELETE FROM text_blooms WHERE id IN (SELECT value FROM json_each(?))"),
    insertBlob: db.prepare<[number, string, number, number, number]>(
      "INSERT INTO text_blobs (id, hash, state, bytes, blocks) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
    ),
    postings: new SqlitePostings(db),
    generation: db.prepare("SELECT value FROM text_meta WHERE key = 'generation'").pluck(),
    rows: db.prepare("SELECT id, hash FROM text_blobs"),
    deleteBlobs: db.prepare<[string]>("DELETE FROM text_blobs WHERE id IN (SELECT value FROM json_each(?))"),
    bump: db.prepare("UPDATE text_meta SET value = value + 1 WHERE key = 'generation'"),
    tree: db.prepare<[string, number]>("SELECT id, large FROM text_trees WHERE hash = ? AND generation = ?"),
    treeFiles: db.prepare<[number, string]>(
      "SELECT blob, path FROM text_tree_files WHERE tree = ? AND blob IN (SELECT value FROM json_each(?))",
    ),
    treeRow: db.prepare<[string]>("SELECT id, generation FROM text_trees WHERE hash = ?"),
    treeGeneration: db.prepare<[number, string]>("SELECT generation FROM text_trees WHERE id = ? AND hash = ?").pluck(),
    finishTree: db.prepare<[number, string, number]>("UPDATE text_trees SET generation = ?, large = ? WHERE id = ?"),
    insertTree: db.prepare<[string, number, string]>(
      "INSERT INTO text_trees (hash, generation, large) VALUES (?, ?, ?)",
    ),
    insertTreeFile: db.prepare<[number, number, string]>(
      "INSERT OR IGNORE INTO text_tree_files (tree, blob, path) VALUES (?, ?, ?)",
    ),
    oldTrees: db
      .prepare<[number]>("SELECT id FROM text_trees WHERE id <= (SELECT max(id) FROM text_trees) - ?")
      .pluck(),
    deleteTreeFiles: db.prepare<[number]>("DELETE FROM text_tree_files WHERE tree = ?"),
    deleteTree: db.prepare<[number]>("DELETE FROM text_trees WHERE id = ?"),
    builder: db.prepare("SELECT pid, started, updated, done, total, indexed FROM text_builder WHERE id = 1"),
    claim: db.prepare<[number, number, number]>(
      "INSERT OR REPLACE INTO text_builder (id, pid, started, updated, done, total, indexed) VALUES (1, ?, ?, ?, 0, 0, 0)",
    ),
    report: db.prepare<[number, number, number, number, number]>(
      "UPDATE text_builder SET updated = ?, done = ?, total = ?, indexed = ? WHERE id = 1 AND pid = ?",
    ),
    release: db.prepare<[number]>("DELETE FROM text_builder WHERE id = 1 AND pid = ?"),
    status: db.prepare("SELECT state, count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM text_blobs GROUP BY state"),
  };
}

export type TextIndexStatements = ReturnType<typeof prepareTextIndex>;
